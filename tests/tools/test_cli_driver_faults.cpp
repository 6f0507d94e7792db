// SPDX-License-Identifier: Apache-2.0
// Driver faults through the gemmtune binary: a configuration whose build fails the way a crashing
// OpenCL compiler does fails with that diagnosis while the search goes on, and `gemmtune devices`
// adds a note only where a device's description calls for one.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_driver_faults {

using namespace gemmtune;
using test::run_gemmtune;
using test::run_gemmtune_in;

TEST_CASE(
    "a configuration the compiler crashes on fails with that diagnosis, and the search goes on",
    "[cli][search][device][drivers]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("driver-crash");
  const std::string templates = "--templates " + test::source_path("tests/data");
  auto r = run_gemmtune(templates +
                        " search --kernel faulty_compiler --space ci --strategy exhaustive "
                        "-s 16x16x16 --cache-dir none --no-db -o " +
                        dir + "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::map<int64_t, Result> by_fault;
  for (const auto& e : read_journal(dir + "/out.journal.jsonl").entries) {
    by_fault[e.result.config.at("FAULT")] = e.result;
  }
  REQUIRE(by_fault.size() == 2);
  CHECK(by_fault[0].status == Status::kOk);
  CHECK(by_fault[5].status == Status::kCompileFailed);
  CHECK_THAT(by_fault[5].message, Catch::StartsWith("the OpenCL compiler of ") &&
                                      Catch::Contains("crashed (") &&
                                      Catch::Contains("LLVM ERROR: Cannot select"));
  CHECK(read_json_file(dir + "/out.json")["results"][0]["best"]["config"]["FAULT"] == 0);

  r = run_gemmtune(templates +
                   " run --kernel faulty_compiler --params FAULT=5 -m 16 -n 16 -k 16 "
                   "--cache-dir none");
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.out + r.err, Catch::Contains("crashed (") && Catch::Contains("not of the kernel"));
}

TEST_CASE("gemmtune devices adds no note to a device whose driver is sound",
          "[cli][device][drivers]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  // PoCL reports OpenCL 3.0 and no AMD ISA: an ISA override in the environment says nothing of it.
  for (const std::string& env : {std::string(), std::string("HSA_OVERRIDE_GFX_VERSION=10.3.0")}) {
    INFO(env);
    auto r = run_gemmtune_in("", env, "devices");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("profile ") && !Catch::Contains("note "));
    r = run_gemmtune_in("", env, "devices --json");
    REQUIRE(r.exit_code == 0);
    for (const auto& d : nlohmann::json::parse(r.out)) CHECK_FALSE(d.contains("notes"));
  }
}

}  // namespace gemmtune_tests::tools_test_cli_driver_faults
