// SPDX-License-Identifier: Apache-2.0
// The OpenCL drivers AMD users have, through the command line: Mesa's rusticl (run on the CPU with
// RUSTICL_ENABLE=llvmpipe, the same front end as radeonsi's), whose profiling events read 0 ns,
// and a Clover-like device (PoCL capped at 256 work-items, kernels built as OpenCL C 1.1).
// scripts/test.sh installs Mesa's OpenCL, so a missing driver is a failure here, never a skip.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_drivers {

using namespace gemmtune;

namespace {

const char* kRusticl = "RUSTICL_ENABLE=llvmpipe";
const char* kRusticlDevice = "llvmpipe";
// PoCL as Clover is: at most 256 work-items per group, OpenCL C 1.1 only.
const char* kCloverLike = "POCL_MAX_WORK_GROUP_SIZE=256 GEMMTUNE_DEVICE_OPENCL_C=1.1";
// A rate no CPU of this machine's kind reaches: above it the timer, not the kernel, was measured.
constexpr double kSaneCpuGflops = 5000;
const char* kRunOnce = " --min-runs 2 --min-time-ms 0";

bool rusticl_listed(const std::string& dir) {
  const auto r = test::run_gemmtune_in(dir, kRusticl, "devices");
  return r.exit_code == 0 && r.out.find(kRusticlDevice) != std::string::npos;
}

}  // namespace

TEST_CASE("rusticl: every template runs, timed by the host clock since its events read 0",
          "[cli][drivers][rusticl]") {
  const std::string dir = test::temp_dir("rusticl-run");
  if (!rusticl_listed(dir))
    return test::unavailable("Mesa's rusticl (mesa-opencl-icd) lists no llvmpipe device");
  // Each template's small configuration: rusticl's kernels allow 32 work-items here.
  for (const test::SmallCase& c : test::kSmallCases) {
    INFO(c.kernel);
    const auto r = test::run_gemmtune_in(dir, kRusticl,
                                         std::string("run --device ") + kRusticlDevice +
                                             " --kernel " + c.kernel + " -p " + c.params + " " +
                                             c.problem + kRunOnce + " --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["status"] == "ok");
    CHECK(j["gflops"].get<double>() > 0);
    CHECK(j["gflops"].get<double>() < kSaneCpuGflops);
    CHECK(j["time"]["clock"] == "host-queued");
    CHECK_THAT(j["time"]["clock_note"].get<std::string>(), Catch::Contains("profiling events"));
  }
  // The plain summary says which clock and why.
  const auto plain = test::run_gemmtune_in(
      dir, kRusticl,
      std::string("run --device ") + kRusticlDevice + " --kernel xgemm_direct -p " +
          test::kSmallCases[1].params + " " + test::kSmallCases[1].problem + kRunOnce);
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.out, Catch::Contains("host-queued"));
  CHECK_THAT(plain.err, Catch::Contains("timing with the host clock"));
}

TEST_CASE("rusticl: a short search stores a rate a CPU can reach, and the clock it used",
          "[cli][drivers][rusticl]") {
  const std::string dir = test::temp_dir("rusticl-search");
  if (!rusticl_listed(dir))
    return test::unavailable("Mesa's rusticl (mesa-opencl-icd) lists no llvmpipe device");
  const auto r = test::run_gemmtune_in(
      dir, kRusticl,
      std::string("-q search --device ") + kRusticlDevice +
          " --kernel xgemm_direct --shapes 48x40x24 --max-evals 6 --seed 3 --min-runs 1 "
          "--min-time-ms 0 --db db.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto db = read_json_file(dir + "/db.json");
  REQUIRE(db["entries"].size() == 1);
  const auto& e = db["entries"][0];
  CHECK(e["gflops"].get<double>() > 0);
  CHECK(e["gflops"].get<double>() < kSaneCpuGflops);
  CHECK(e["time"]["clock"] == "host-queued");
}

TEST_CASE(
    "a Clover-like device: every template's defaults build as OpenCL C 1.1 within 256 "
    "work-items, and a search stays within them",
    "[cli][drivers][clover]") {
  const std::string dir = test::temp_dir("clover-like");
  const auto devices = test::run_gemmtune_in(dir, kCloverLike, "devices --json");
  REQUIRE(devices.exit_code == 0);
  CHECK_THAT(devices.out, Catch::Contains("OpenCL C 1.1"));
  // Every template's defaults, as a Clover user would first run them.
  for (const test::SmallCase& c : test::kSmallCases) {
    INFO(c.kernel);
    const auto r = test::run_gemmtune_in(
        dir, kCloverLike,
        std::string("run --kernel ") + c.kernel + " " + c.problem + kRunOnce + " --json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(nlohmann::json::parse(r.out)["status"] == "ok");
  }
  const auto search = test::run_gemmtune_in(
      dir, kCloverLike,
      "-q search --kernel xgemm --shapes 64x64x64 --max-evals 4 --seed 2 --min-runs 1 "
      "--min-time-ms 0 --db db.json --journal journal.jsonl");
  INFO(search.err);
  REQUIRE(search.exit_code == 0);
  const auto db = read_json_file(dir + "/db.json");
  REQUIRE(db["entries"].size() == 1);
  CHECK(db["entries"][0]["status"] == "ok");
}

}  // namespace gemmtune_tests::tools_test_cli_drivers
