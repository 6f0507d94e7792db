// SPDX-License-Identifier: Apache-2.0
// gemmtune devices: the OpenCL devices and the profile each matches, as text and as JSON.
#include <catch2/catch.hpp>

#include <algorithm>

#include "src/core/json_util.hpp"

#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_devices {

using gemmtune::test::run_gemmtune;

TEST_CASE("gemmtune devices lists PoCL with the CPU profile", "[cli]") {
  auto r = run_gemmtune("devices");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("pthread") && Catch::Contains("cpu-generic"));
  auto j = run_gemmtune("devices --json");
  REQUIRE(j.exit_code == 0);
  CHECK_THAT(j.out, Catch::Contains("\"profile\": \"cpu-generic\""));
}

TEST_CASE("gemmtune devices --json lists each device's extensions", "[cli]") {
  auto r = run_gemmtune("devices --json");
  REQUIRE(r.exit_code == 0);
  const auto devices = nlohmann::json::parse(r.out);
  REQUIRE(!devices.empty());
  for (const auto& d : devices) {
    INFO(d.dump());
    const auto names = d.at("extensions").get<std::vector<std::string>>();
    // Every OpenCL 1.2 device has the global int32 atomics (split-K in one launch counts with
    // them); the list is sorted, each name once.
    CHECK(std::find(names.begin(), names.end(), "cl_khr_global_int32_base_atomics") != names.end());
    CHECK(std::is_sorted(names.begin(), names.end()));
    CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
    // fp64 is said both ways alike.
    CHECK((std::find(names.begin(), names.end(), "cl_khr_fp64") != names.end()) ==
          d.at("fp64").get<bool>());
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_devices
