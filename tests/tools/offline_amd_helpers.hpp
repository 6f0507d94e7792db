// SPDX-License-Identifier: Apache-2.0
// Helpers of the offline AMD tests: the ISAs gemmtune targets and one checked offline build.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/test_support.hpp"

namespace gemmtune::test {

// The ISAs gemmtune targets, one device profile each (devices/gfx*.json).
inline const std::vector<std::string> kAmdTargets = {"gfx803",  "gfx906",  "gfx1010",
                                                     "gfx1012", "gfx1030", "gfx1100"};

// The first build of `gemmtune compile ARGS --json` (ARGS with --target), its process result
// checked.
inline nlohmann::json offline_build(const std::string& args) {
  const auto r = run_gemmtune("compile " + args + " --json");
  INFO(args << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.is_array());
  REQUIRE(j.size() >= 1);
  return j[0];
}

// The first xgemm_fast build of `args` (with --target), refused where it does not fit.
inline nlohmann::json offline_fast_build(const std::string& args) {
  return offline_build("--kernel xgemm_fast " + args + " --require-fit");
}

}  // namespace gemmtune::test
