// SPDX-License-Identifier: Apache-2.0
// What the configure step records reaches the program: the build's own source folder, an install
// prefix, and AMD tools that exist where they were recorded.
#include <catch2/catch.hpp>

#include <filesystem>

#include "src/core/configured.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_core_test_configured {

namespace fs = std::filesystem;

TEST_CASE("the configured values are this build's", "[configured]") {
  using namespace gemmtune;
  REQUIRE_FALSE(configured::source_dir().empty());
  CHECK(fs::equivalent(configured::source_dir(), test::source_path("")));
  CHECK_FALSE(configured::install_prefix().empty());
  // The AMD tools are recorded only where the configure step found them.
  if (!configured::amd_clang().empty()) CHECK(fs::is_regular_file(configured::amd_clang()));
  if (!configured::amd_bitcode().empty()) {
    CHECK(fs::is_regular_file(fs::path(configured::amd_bitcode()) / "ockl.bc"));
  }
}

}  // namespace gemmtune_tests::src_core_test_configured
