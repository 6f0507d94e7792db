// SPDX-License-Identifier: Apache-2.0
// The problem options of `gemmtune run` end to end on the OpenCL device (PoCL in CI): a batch and
// its layout, precision 16acc32, the fused epilogue, and a parameter the precision refuses, each
// measured or refused with one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "tests/scripts/entries_fixture.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_run_problem {

using namespace gemmtune;

TEST_CASE("gemmtune run takes --batch, --batch-layout and --precision 16acc32",
          "[device][batched][cli]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  const std::string common =
      "run --kernel xgemm_direct -m 7 -n 13 -k 5 --params WGD=16,MDIMCD=8,NDIMCD=8,MDIMAD=8,"
      "NDIMBD=8 --min-runs 1 --min-time-ms 0 --warmup 0 --beta 0.5 --json";
  auto r = test::run_gemmtune(common + " --batch 5 --batch-layout offsets --precision 16acc32");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("status") == "ok");
  CHECK(j.at("problem").at("batch") == 5);
  CHECK(j.at("problem").at("batch_layout") == "offsets");
  CHECK(j.at("problem").at("precision") == "16acc32");
  r = test::run_gemmtune(common + " --batch 0");
  CHECK(r.exit_code == 2);
  r = test::run_gemmtune(common + " --batch 2 --batch-layout pointers");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("strided or offsets"));
}

TEST_CASE("alpha 0 is no rate to measure: run, search and ab refuse it in one line",
          "[device][cli]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  // The call multiplies nothing of A and B (the library computes it: C = beta * C); its time
  // over 2MNK flops would be no configuration's rate.
  const std::string why = "alpha 0 multiplies nothing of A and B";
  auto r = test::run_gemmtune(
      "run --kernel xgemm_fast -m 64 -n 64 -k 64 --alpha 0 --beta 1 --json --min-runs 1 "
      "--min-time-ms 0 --warmup 0");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(why));
  const std::string dir = test::temp_dir("alpha-zero-search");
  r = test::run_gemmtune(
      "search --kernel xgemm_fast -s 64x64x64 --alpha 0 --max-evals 2 --no-db "
      "--out " +
      dir + "/o");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(why));
  // A database entry of alpha 0: bench measures every other entry and names why not this one.
  nlohmann::json entry = test::fixture_entry("xgemm_fast", 64, nlohmann::json::object());
  entry["alpha"] = 0.0;
  std::ofstream(dir + "/db.json")
      << test::fixture_database("alpha-zero", nlohmann::json::array({entry})).dump();
  const auto bench = test::run_gemmtune("bench " + dir + "/db.json -o " + dir + "/measured.json");
  INFO(bench.out << bench.err);
  REQUIRE(bench.exit_code == 0);
  const auto measured = read_json_file(dir + "/measured.json").at("entries").at(0);
  CHECK(measured.at("status") == "unsupported");
  CHECK_THAT(measured.at("message").get<std::string>(), Catch::Contains(why));
  r = test::run_gemmtune(
      "ab --kernel xgemm_fast -s 64x64x64 --alpha 0 --baseline KWI=4 "
      "--change KWI=2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(why));
}

TEST_CASE("gemmtune run refuses DOT2=1 in precision 32 with the constraint's reason",
          "[device][dot2]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  const auto r =
      test::run_gemmtune("run --kernel xgemm_fast --params DOT2=1 -m 8 -n 8 -k 8 --precision 32");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out + r.err, Catch::Contains("needs half storage (precision 16 or 16acc32)"));
}

TEST_CASE("run --epilogue measures, refuses bad specs and unsupported kernels",
          "[epilogue][cli][device]") {
  const auto devices = test::run_gemmtune("devices --json");
  if (devices.exit_code != 0 || nlohmann::json::parse(devices.out).empty())
    return test::unavailable("no OpenCL device");
  const std::string common =
      " -m 33 -n 17 -k 65 --min-runs 1 --min-time-ms 0 --warmup 0 --cache-dir " +
      test::test_device().cache_dir;
  auto r = test::run_gemmtune("run --kernel xgemm_fast --epilogue bias,gelu --json" + common);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("status") == "ok");
  CHECK(j.at("problem").at("epilogue") == "bias,gelu");

  r = test::run_gemmtune("run --kernel xgemm_fast --epilogue bias,swish" + common);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("swish"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);

  r = test::run_gemmtune("run --kernel xgemm --epilogue relu,bias --json" + common);
  CHECK(r.exit_code == 3);
  j = nlohmann::json::parse(r.out);
  CHECK(j.at("status") == "unsupported");
  CHECK(j.at("problem").at("epilogue") == "bias,relu");
}

}  // namespace gemmtune_tests::tools_test_cmd_run_problem
