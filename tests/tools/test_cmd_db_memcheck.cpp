// SPDX-License-Identifier: Apache-2.0
// db lookup --json under Valgrind's memcheck: the choice it prints points at the templates the
// lookup loaded, which must outlive the printing (a temporary lookup once let it read freed
// memory, printed garbage or died with bad_alloc on some shapes and not others).
#include <catch2/catch.hpp>

#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_db_memcheck {

using namespace gemmtune;

TEST_CASE("db lookup reads no freed memory, for a model pick and an exact entry",
          "[cli][db][memcheck]") {
  const auto valgrind = test::run_command_in(".", "", "valgrind --version");
  INFO("valgrind is missing: scripts/install-deps.sh tests installs it");
  REQUIRE(valgrind.exit_code == 0);
  const std::string db = test::source_path("results/databases/nvidia-h100-80gb-hbm3.json");
  for (const char* shape : {"-m 300 -n 300 -k 300", "-m 4096 -n 4096 -k 4096"}) {
    const auto r =
        test::run_command_in(".", "",
                             std::string("valgrind -q --error-exitcode=97 ") + GEMMTUNE_BINARY +
                                 " db lookup " + db + " " + shape + " --json");
    INFO(shape << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::StartsWith("{"));
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_db_memcheck
