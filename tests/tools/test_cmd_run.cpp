// SPDX-License-Identifier: Apache-2.0
// gemmtune run: one configuration measured and verified from the command line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run {

using gemmtune::test::run_gemmtune;
namespace fs = std::filesystem;

namespace {
size_t count_lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

const auto verified_run = gemmtune::test::verified_fast_run;
}  // namespace

TEST_CASE("run measures a configuration and the second run hits the binary cache",
          "[device][cli][run]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string cache = gemmtune::test::temp_dir("run-cache");
  const std::string args =
      "-v run --kernel xgemm_direct -m 33 -n 20 -k 9 --layout TN --order col "
      "--alpha 2 --beta -1 --params WGD=16,MDIMCD=4,NDIMCD=4,MDIMAD=4,NDIMBD=4 "
      "--min-runs 1 --min-time-ms 0 --cache-dir " +
      cache;
  auto first = run_gemmtune(args + " --json");
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const auto j = nlohmann::json::parse(first.out);
  CHECK(j["status"] == "ok");
  CHECK(j["gflops"].get<double>() > 0);
  CHECK(j["binary_cached"] == false);
  CHECK(j["config"]["WGD"] == 16);
  CHECK(j["config"]["KWID"] == 2);  // a default
  CHECK(j["problem"]["layout"] == "TN");
  CHECK(first.err.find("binary cache hit") == std::string::npos);

  auto second = run_gemmtune(args);
  INFO(second.err);
  REQUIRE(second.exit_code == 0);
  CHECK_THAT(second.err, Catch::Contains("binary cache hit"));
  CHECK_THAT(second.out, Catch::Contains("GFLOPS"));
  CHECK_THAT(second.out, Catch::Contains("binary cache hit"));
  CHECK_THAT(second.out, Catch::Contains("max error"));
}

TEST_CASE("GEMMTUNE_BINARY_CACHE names the binary cache, or turns it off, for every command",
          "[device][cli][run]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string dir = gemmtune::test::temp_dir("binary-cache-env");
  const std::string args =
      "-v run --kernel xgemm_direct -m 16 -n 16 -k 16 --params WGD=8,MDIMCD=4,NDIMCD=4,MDIMAD=4,"
      "NDIMBD=4 --min-runs 1 --min-time-ms 0";
  const std::string off = "GEMMTUNE_BINARY_CACHE=none XDG_CACHE_HOME=" + dir + "/xdg";
  auto r = gemmtune::test::run_gemmtune_in("", off, args);
  REQUIRE(r.exit_code == 0);
  r = gemmtune::test::run_gemmtune_in("", off, args);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("binary cache hit") == std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/xdg/gemmtune/kernels"));

  const std::string named = "GEMMTUNE_BINARY_CACHE=" + dir + "/named";
  r = gemmtune::test::run_gemmtune_in("", named, args);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(fs::is_empty(dir + "/named/kernels"));
  r = gemmtune::test::run_gemmtune_in("", named, args);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("binary cache hit"));
  // --cache-dir wins over the variable.
  r = gemmtune::test::run_gemmtune_in("", named, args + " --cache-dir none");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("binary cache hit") == std::string::npos);
}

TEST_CASE("run refuses a configuration that breaks a constraint", "[cli][run]") {
  auto r = run_gemmtune("run --kernel xgemm --params MWG=16 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("MWG % (MDIMC * VWM) == 0"));
  CHECK(count_lines(r.err) == 1);
  r = run_gemmtune("run --kernel xgemm --params NOPE=1 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("NOPE"));
  r = run_gemmtune("run --kernel xgemm --params MWG=17 -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("MWG=17 is not an allowed value"));
  r = run_gemmtune("run --kernel nope -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("unknown kernel 'nope'"));
  r = run_gemmtune("run --kernel xgemm --layout XY --cache-dir none");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("layout"));
}

TEST_CASE("run adds split-K parts in the main kernel with KREDUCE=1: one launch per call",
          "[device][cli][run][splitk]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string split = "MWG=16,NWG=16,KWG=8,MDIMC=8,NDIMC=8,VWM=2,VWN=2,SPLITK=3";
  const auto run = verified_run;
  // Odd shapes (partial tiles, a short last part of K), both orders, transposes, beta 0 (C full
  // of NaN, never read) and beta != 0, and a batch with a counter per tile and entry.
  for (const std::string problem :
       {"-m 37 -n 29 -k 301 --order col --layout NN --alpha 2 --beta -1",
        "-m 37 -n 29 -k 301 --order row --layout TT --alpha 2 --beta 0",
        "-m 45 -n 7 -k 99 --order row --layout NT --beta 0.5 --batch 3"}) {
    const auto j = run(split + ",KREDUCE=1", problem);
    CHECK(j["config"]["KREDUCE"] == 1);
    CHECK(j["launches"] == 1);
  }
  const std::string unsplit = "MWG=16,NWG=16,KWG=8,MDIMC=8,NDIMC=8,VWM=2,VWN=2";
  CHECK(run(split, "-m 37 -n 29 -k 301")["launches"] == 2);  // KREDUCE=0: the reduce kernel
  CHECK(run(unsplit, "-m 37 -n 29 -k 301")["launches"] == 1);
  const auto r = run_gemmtune("run --kernel xgemm_fast --params KREDUCE=1 -m 8 -n 8 -k 8");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("without a split there are none"));
}

TEST_CASE("run verifies tiles of three times a power of two on partial tiles",
          "[device][cli][run][tiles]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // 48- and 96-wide tiles (6 and 3 outputs a thread), each side of C cut mid-tile, both orders
  // and transposes, and split-K in one launch.
  for (const std::string params :
       {"MWG=48,NWG=96,KWG=16,MDIMC=8,NDIMC=16,VWM=2,VWN=2",
        "MWG=96,NWG=48,KWG=8,MDIMC=16,NDIMC=8,VWM=2,VWN=2,SPLITK=4,KREDUCE=1"}) {
    for (const std::string problem : {"-m 189 -n 43 -k 300 --order row --layout NN --beta 0.5",
                                      "-m 101 -n 150 -k 77 --order col --layout TN --alpha 2"}) {
      const auto j = verified_run(params, problem);
      CHECK(j["launches"] == 1);
    }
  }
}

TEST_CASE("configurations differing only in a runtime parameter share one build",
          "[device][cli][run][runtime]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  // GROUPM (the work-groups' rasterization) is a kernel argument of xgemm_fast but for 1, built in:
  // GROUPM 8 takes GROUPM 4's binary, and each is verified, with 10 x 9 tiles that leave a partial
  // last group of tile rows, in one launch with split-K and in a batch.
  const std::string cache = gemmtune::test::temp_dir("run-runtime-parameter");
  const std::string tiles = "MWG=16,NWG=16,KWG=8,MDIMC=8,NDIMC=8,VWM=2,VWN=2";
  for (const std::string extra : {"", ",SPLITK=3,KREDUCE=1"}) {
    for (const std::string groupm : {"1", "4", "8"}) {
      const auto r =
          run_gemmtune("run --kernel xgemm_fast --params " + tiles + extra + ",GROUPM=" + groupm +
                       " -m 150 -n 130 -k 70 --batch 2 --beta 0.5 --min-runs 1 "
                       "--min-time-ms 0 --warmup 0 --json --cache-dir " +
                       cache);
      INFO(extra << " GROUPM=" << groupm << ": " << r.err);
      REQUIRE(r.exit_code == 0);
      const auto j = nlohmann::json::parse(r.out);
      CHECK(j["status"] == "ok");
      CHECK(j["max_error"].get<double>() <= j["tolerance"].get<double>());
      CHECK(j["config"]["GROUPM"] == std::stoi(groupm));
      CHECK(j["binary_cached"] == (groupm == "8"));
    }
  }
}

TEST_CASE("run reports a build failure with the build log", "[device][cli][run]") {
  if (!gemmtune::test::cli_has_device()) return gemmtune::test::unavailable("no OpenCL device");
  const std::string templates = gemmtune::test::temp_dir("run-broken");
  for (const auto& f : fs::directory_iterator(gemmtune::test::source_path("kernel_templates"))) {
    fs::copy_file(f.path(), fs::path(templates) / f.path().filename());
  }
  std::ofstream(templates + "/xgemm_direct.cl", std::ios::app) << "\nthis is not OpenCL C;\n";
  auto r = run_gemmtune("--templates " + templates +
                        " run --kernel xgemm_direct -m 8 -n 8 -k 8 --cache-dir none");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("compile_failed"));
  CHECK_THAT(r.out, Catch::Contains("error"));
  CHECK_THAT(r.err, Catch::Contains("compile_failed"));
}

}  // namespace gemmtune_tests::tools_test_cmd_run
