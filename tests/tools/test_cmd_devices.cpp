// SPDX-License-Identifier: Apache-2.0
// gemmtune devices: the OpenCL devices and the profile each matches, as text and as JSON.
#include <catch2/catch.hpp>

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

}  // namespace gemmtune_tests::tools_test_cmd_devices
