// SPDX-License-Identifier: Apache-2.0
// The offline AMD target through the command line: kernels built for AMD ISAs by the LLVM AMDGPU
// backend (which scripts/install-deps.sh installs), their real resources, the instructions chosen
// and the pruned space. Nothing here needs an AMD card; nothing here may be skipped either: a
// missing compiler fails these tests, as a missing OpenCL device fails the device tests.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/offline_amd_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_offline_amd {

using gemmtune::test::run_gemmtune;
using gemmtune::test::run_gemmtune_in;
using gemmtune::test::temp_dir;

namespace {

const auto& kTargets = gemmtune::test::kAmdTargets;
// The templates gemmtune builds itself (clblast-* run CLBlast's own kernels).
const std::vector<std::string> kTemplates = {"xgemm", "xgemm_direct", "xgemm_fast", "xgemm_skinny"};

// The H100's fastest FP32 configuration at 8192^3 (results/databases/nvidia-h100-80gb-hbm3.json).
const std::string kH100Best =
    "ALDCOPY=1,DOT2=0,GLV=4,GROUPM=1,KWG=8,KWI=8,LDS=1,MDIMC=16,MWG=128,NDIMC=16,NWG=128,PADA=0,"
    "PADB=0,PREFETCH=1,REGCAP=0,SPLITK=1,STAGES=1,STRM=1,STRN=1,SWZ=0,VWM=2,VWN=8";
// A half-precision configuration with dot2 pairs.
const std::string kDot2 = "MWG=64,NWG=64,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=4,DOT2=1";
// 512 threads with a register cap: the cap must not cost the work-group size.
const std::string kCapped512 = "MWG=128,NWG=64,KWG=16,MDIMC=32,NDIMC=16,VWM=4,VWN=4,REGCAP=128";

const auto build = gemmtune::test::offline_build;

}  // namespace

TEST_CASE("every template's defaults build for every AMD target without a spill",
          "[cli][offline]") {
  for (const auto& target : kTargets) {
    for (const auto& kernel : kTemplates) {
      const auto r = run_gemmtune("compile --kernel " + kernel + " --target " + target +
                                  " --require-fit --json");
      INFO(kernel << " on " << target << ": " << r.err);
      REQUIRE(r.exit_code == 0);
      const auto b = nlohmann::json::parse(r.out).at(0);
      CHECK(b.at("isa") == target);
      CHECK(b.at("vgprs").get<int>() > 0);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK(b.at("waves_per_simd").get<int>() >= 1);
    }
  }
}

TEST_CASE("the H100's best configuration takes four times the registers of the default on gfx906",
          "[cli][offline]") {
  const auto best = build("--kernel xgemm_fast --target gfx906 --params " + kH100Best);
  const auto deflt = build("--kernel xgemm_fast --target gfx906");
  // LLVM 16 allocates 222 and 63; a backend of another version may differ by a few registers.
  CHECK(best.at("vgprs").get<int>() >= 200);
  CHECK(best.at("vgprs").get<int>() <= 256);
  CHECK(best.at("waves_per_simd").get<int>() == 1);
  CHECK(deflt.at("vgprs").get<int>() >= 56);
  CHECK(deflt.at("vgprs").get<int>() <= 64);
  CHECK(deflt.at("waves_per_simd").get<int>() == 4);
  CHECK(deflt.at("lds_bytes").get<int>() == 16384);  // the template's formula, exactly

  // The plain text names the figures, too.
  const auto r = run_gemmtune("compile --kernel xgemm_fast --target gfx1012");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("VGPRs") && Catch::Contains("waves/SIMD"));
}

TEST_CASE("dot2 becomes v_dot2_f32_f16 where the ISA has it", "[cli][offline][dot2]") {
  for (const std::string precision : {"16acc32", "16"}) {
    for (const std::string target : {"gfx906", "gfx1012", "gfx1030", "gfx1100"}) {
      const auto b = build("--kernel xgemm_fast --target " + target + " --precision " + precision +
                           " --params " + kDot2);
      INFO(target << " " << precision);
      CHECK(b.at("instructions").at("dot2_f32_f16").get<int>() > 0);
    }
    // gfx803 and gfx1010 lack the instruction: the kernel still builds, without it.
    for (const std::string target : {"gfx803", "gfx1010"}) {
      const auto b = build("--kernel xgemm_fast --target " + target + " --precision " + precision +
                           " --params " + kDot2);
      INFO(target << " " << precision);
      CHECK(b.at("instructions").at("dot2_f32_f16").get<int>() == 0);
    }
  }
}

TEST_CASE("a register cap keeps the work-group size on AMD", "[cli][offline][regcap]") {
  const auto capped = build("--kernel xgemm_fast --target gfx906 --params " + kCapped512);
  CHECK(capped.at("work_group_size").get<int>() == 512);
  CHECK(capped.at("max_work_group_size").get<int>() >= 512);
  CHECK_FALSE(capped.at("launch_refused").get<bool>());
  CHECK(capped.at("vgprs").get<int>() <= 128);
}

TEST_CASE("wave64 on RDNA halves the waves of wave32", "[cli][offline]") {
  const auto w32 = build("--kernel xgemm_fast --target gfx1012");
  const auto w64 = build("--kernel xgemm_fast --target gfx1012 --wavefront 64");
  CHECK(w32.at("wavefront") == 32);
  CHECK(w64.at("wavefront") == 64);
  CHECK(w64.at("waves_per_simd").get<int>() * 2 == w32.at("waves_per_simd").get<int>());
}

TEST_CASE("offline builds refuse bad input with one line", "[cli][offline]") {
  SECTION("a profile that is no AMD ISA") {
    const auto r = run_gemmtune("compile --kernel xgemm_fast --target sm_90");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("no AMD profile") && Catch::Contains("gfx906"));
  }
  SECTION("a configuration the template forbids") {
    const auto r = run_gemmtune("compile --kernel xgemm_fast --target gfx906 --params MWG=7");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("MWG"));
  }
  SECTION("a compiler that is not there") {
    const auto r =
        run_gemmtune_in(temp_dir("offline-nocc"), "GEMMTUNE_AMD_CLANG=/nonexistent/clang",
                        "compile --kernel xgemm_fast --target gfx906");
    CHECK(r.exit_code == 2);  // the variable's value is the user's mistake
    CHECK_THAT(r.err, Catch::Contains("GEMMTUNE_AMD_CLANG=/nonexistent/clang"));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  SECTION("--params without --target") {
    const auto r = run_gemmtune("compile --kernel xgemm_fast --params MWG=64");
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("space --target prunes the gpu space by real resources", "[cli][offline][space]") {
  const auto r = run_gemmtune(
      "space --kernel xgemm_fast --space gpu --target gfx906 --min-waves 2 "
      "--calibration-builds 4 --shortlist 3 --max-builds 8 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto valid = j.at("valid").get<uint64_t>();
  const auto fit = j.at("predicted_fit").get<uint64_t>();
  CHECK(valid > 100000);  // the gpu space is large
  CHECK(fit > 0);
  CHECK(fit < valid);  // the prune removes something
  CHECK(j.at("calibration").at("samples").get<int>() >= 2);
  const auto& list = j.at("shortlist");
  REQUIRE(list.size() >= 1);
  for (const auto& e : list) {
    CHECK_FALSE(e.at("spills").get<bool>());
    CHECK(e.at("waves_per_simd").get<int>() >= 2);
    CHECK(e.at("predicted_gflops").get<double>() > 0);
  }
}

TEST_CASE("each AMD profile's starting configurations build offline without a spill",
          "[cli][offline][starts]") {
  for (const auto& target : kTargets) {
    const auto profile = nlohmann::json::parse(
        gemmtune::read_text_file(gemmtune::test::source_path("devices/" + target + ".json")));
    REQUIRE(profile.contains("starting_configurations"));
    const auto& entries = profile.at("starting_configurations").at("entries");
    REQUIRE(entries.size() >= 2);
    for (const auto& e : entries) {
      std::string params;
      for (const auto& [name, value] : e.at("parameters").items()) {
        params += (params.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int>());
      }
      const auto r =
          run_gemmtune("compile --kernel " + e.at("kernel").get<std::string>() + " --target " +
                       target + " --precision " + e.at("precision").get<std::string>() +
                       " --params " + params + " --require-fit --json");
      INFO(target << " " << params << ": " << r.err);
      REQUIRE(r.exit_code == 0);
      const auto b = nlohmann::json::parse(r.out).at(0);
      CHECK_FALSE(b.at("spills").get<bool>());
      // What the profile states is what the build gives.
      CHECK(b.at("vgprs") == e.at("vgprs"));
      CHECK(b.at("lds_bytes") == e.at("lds_bytes"));
    }
  }
}

TEST_CASE("split-K in one launch builds offline for every AMD target without a spill",
          "[cli][offline][splitk]") {
  auto params_of = [](const nlohmann::json& parameters) {
    std::string params;
    for (const auto& [name, value] : parameters.items()) {
      params += (params.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int>());
    }
    return params;
  };
  for (const auto& target : kTargets) {
    // Every starting configuration of the profile that splits K, its parts added in the main
    // kernel (KREDUCE=1) instead of by the reduce kernel the profile measured it with.
    const auto profile = nlohmann::json::parse(
        gemmtune::read_text_file(gemmtune::test::source_path("devices/" + target + ".json")));
    std::vector<std::string> builds;
    for (const auto& e : profile.at("starting_configurations").at("entries")) {
      if (e.at("parameters").at("SPLITK").get<int>() <= 1) continue;
      builds.push_back("--kernel xgemm_fast --precision " + e.at("precision").get<std::string>() +
                       " --params " + params_of(e.at("parameters")));
    }
    // xgemm_skinny's defaults in 4 parts, both sides.
    builds.push_back("--kernel xgemm_skinny --params SIDE=0,SPLITK=4");
    builds.push_back("--kernel xgemm_skinny --params SIDE=1,SPLITK=4");
    for (const auto& args : builds) {
      const auto two = build(args + " --target " + target + " --require-fit");
      const auto one = build(args + ",KREDUCE=1 --target " + target + " --require-fit");
      INFO(target << " " << args << ": " << two.at("vgprs") << " VGPRs in two launches, "
                  << one.at("vgprs") << " in one");
      CHECK(one.at("config").at("KREDUCE") == 1);
      CHECK_FALSE(one.at("spills").get<bool>());
      CHECK_FALSE(one.at("launch_refused").get<bool>());
      // The parts are added after the accumulators are stored: no wave per SIMD is lost.
      CHECK(one.at("waves_per_simd") == two.at("waves_per_simd"));
    }
  }
}

TEST_CASE("GROUPM as a kernel argument builds for every AMD target at the same occupancy",
          "[cli][offline][runtime]") {
  // GROUPM 1 is built in (no rasterization code); 4, 8 and 16 are one build taking the argument.
  // Each profile's starting configurations both ways: no spill, no wave per SIMD lost.
  for (const auto& target : kTargets) {
    const auto profile = nlohmann::json::parse(
        gemmtune::read_text_file(gemmtune::test::source_path("devices/" + target + ".json")));
    for (const auto& e : profile.at("starting_configurations").at("entries")) {
      std::string params;
      for (const auto& [name, value] : e.at("parameters").items()) {
        if (name == "GROUPM") continue;
        params += (params.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int>());
      }
      const std::string args = "--kernel xgemm_fast --precision " +
                               e.at("precision").get<std::string>() + " --params " + params;
      const auto built_in = build(args + ",GROUPM=1 --target " + target + " --require-fit");
      const auto argued = build(args + ",GROUPM=8 --target " + target + " --require-fit");
      INFO(target << " " << params << ": " << built_in.at("vgprs") << " VGPRs with GROUPM 1, "
                  << argued.at("vgprs") << " with GROUPM an argument");
      CHECK(argued.at("config").at("GROUPM") == 8);
      CHECK_FALSE(argued.at("spills").get<bool>());
      CHECK(argued.at("waves_per_simd") == built_in.at("waves_per_simd"));
    }
  }
}

TEST_CASE("tiles of three times a power of two build for every AMD target without a spill",
          "[cli][offline][tiles]") {
  // The skinny space's 48- and 96-wide tiles, with split-K in one launch, and a 192-wide one.
  const std::vector<std::string> params = {
      "MWG=96,NWG=48,MDIMC=16,NDIMC=8,VWM=2,VWN=2,KWG=16",
      "MWG=48,NWG=96,MDIMC=8,NDIMC=16,VWM=2,VWN=2,KWG=16,SPLITK=4,KREDUCE=1",
      "MWG=192,NWG=96,MDIMC=16,NDIMC=16,VWM=4,VWN=2,KWG=8"};
  for (const auto& target : kTargets) {
    for (const auto& p : params) {
      const auto b =
          build("--kernel xgemm_fast --params " + p + " --target " + target + " --require-fit");
      INFO(target << " " << p);
      CHECK(b.at("isa") == target);
      CHECK_FALSE(b.at("spills").get<bool>());
      CHECK(b.at("waves_per_simd").get<int>() >= 1);
    }
  }
}

TEST_CASE("db lookup names a profile's offline choice where the database has no entry",
          "[cli][offline][starts]") {
  const std::string db = gemmtune::test::source_path("tests/data/db_gfx1012.json");
  // The database holds FP32 entries only: a half-precision problem has none.
  const auto r =
      run_gemmtune("db lookup " + db + " -m 1024 -n 1024 -k 1024 --precision 16acc32 --explain");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("chosen offline for gfx1012, not measured"));
  CHECK_THAT(r.out, Catch::Contains("offline choice"));
  const auto j =
      run_gemmtune("db lookup " + db + " -m 1024 -n 1024 -k 1024 --precision 16acc32 --json");
  REQUIRE(j.exit_code == 0);
  CHECK(nlohmann::json::parse(j.out).at("match") == "offline choice");
}

TEST_CASE("a search on a card of an AMD profile measures its starting configurations first",
          "[cli][starts][device]") {
  // The test device is PoCL; GEMMTUNE_DEVICE_PROFILE names the profile a user would force for a
  // card the matching does not know.
  const auto dir = temp_dir("offline-starts-search");
  const auto profile = nlohmann::json::parse(
      gemmtune::read_text_file(gemmtune::test::source_path("devices/gfx1012.json")));
  size_t fp32_starts = 0;
  for (const auto& e : profile.at("starting_configurations").at("entries")) {
    if (e.at("precision") == "32") ++fp32_starts;
  }
  REQUIRE(fp32_starts > 0);
  // The budget is the starting configurations alone (each a large kernel to build on PoCL).
  const auto r =
      run_gemmtune_in(dir, "GEMMTUNE_DEVICE_PROFILE=gfx1012",
                      "search --kernel xgemm_fast --space gpu -s 128x128x128 "
                      "--max-evals " +
                          std::to_string(fp32_starts) + " --out out --db db.json --cache-dir none");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results =
      nlohmann::json::parse(gemmtune::read_text_file(dir + "/out/search-xgemm_fast.json"));
  CHECK(results.dump().find("\"warm_started\":" + std::to_string(fp32_starts)) !=
        std::string::npos);
}

TEST_CASE("report on an AMD database shows the offline build's real counts",
          "[cli][offline][report]") {
  const auto r = run_gemmtune(
      "report " + gemmtune::test::source_path("tests/data/db_gfx1012.json") + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  size_t compiled = 0;
  for (const auto& entry : j.at("entries")) {
    for (const auto& item : entry.at("items")) {
      if (item.at("id") == "registers" &&
          item.at("basis").get<std::string>().find("offline AMDGPU build for gfx1012") !=
              std::string::npos) {
        ++compiled;
      }
    }
  }
  CHECK(compiled > 0);
}

}  // namespace gemmtune_tests::tools_test_cli_offline_amd
