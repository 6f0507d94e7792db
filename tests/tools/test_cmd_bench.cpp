// SPDX-License-Identifier: Apache-2.0
// gemmtune bench re-measures a database as the library would run it: an entry written before a
// parameter existed runs with that parameter's default; one naming a parameter the template no
// longer has is reported stale, and the others are still measured.
#include <catch2/catch.hpp>

#include <filesystem>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_bench {

using namespace gemmtune;
using test::run_gemmtune;

TEST_CASE("bench measures entries that predate a parameter with its default", "[cli][bench]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("cmd-bench");
  // A shipped database's xgemm_fast entry, as an older gemmtune wrote it (no KREDUCE, no GLV),
  // and a copy naming a parameter no template declares.
  nlohmann::json db = read_json_file(test::source_path("results/databases/pocl-cpu.json"));
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : db["entries"]) {
    if (e["key"]["kernel"] != "xgemm_fast") continue;
    nlohmann::json old = e;
    old["parameters"].erase("KREDUCE");
    old["parameters"].erase("GLV");
    entries.push_back(old);
    nlohmann::json stale = e;
    stale["key"]["m"] = 48;
    stale["parameters"]["NOSUCH"] = 1;
    entries.push_back(stale);
    break;
  }
  REQUIRE(entries.size() == 2);
  db["entries"] = entries;
  write_json_atomic(dir + "/old.json", db);

  const auto r = run_gemmtune("bench " + dir + "/old.json -o " + dir +
                              "/new.json --min-runs 1 "
                              "--min-time-ms 0");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("stale") && Catch::Contains("NOSUCH"));
  const nlohmann::json measured = read_json_file(dir + "/new.json");
  int ok = 0, invalid = 0;
  for (const auto& e : measured["entries"]) {
    if (e["status"] == "ok") {
      ++ok;
      CHECK(e["gflops"].get<double>() > 0);
      CHECK_FALSE(e["parameters"].contains("KREDUCE"));  // as the base spells it
    } else {
      ++invalid;
    }
  }
  CHECK(ok == 1);
  CHECK(invalid == 1);
}

}  // namespace gemmtune_tests::tools_test_cmd_bench
