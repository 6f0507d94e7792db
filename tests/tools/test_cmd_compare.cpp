// SPDX-License-Identifier: Apache-2.0
#include <fstream>

#include <catch2/catch.hpp>

#include "src/db/database.hpp"
#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_compare {

using namespace gemmtune;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {
const std::string kBase = source_path("tests/data/db_gfx1012.json");
}

TEST_CASE("compare exits 0 when nothing regressed", "[cli][compare]") {
  const auto dir = temp_dir("cmp-ok");
  const auto r = run_gemmtune("compare " + kBase + " " + kBase + " --markdown " + dir +
                              "/summary.md --junit " + dir + "/junit.xml");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("0 failing"));
  CHECK_THAT(read_text_file(dir + "/summary.md"), Catch::Contains("| same |"));
  CHECK_THAT(read_text_file(dir + "/junit.xml"), Catch::Contains("failures=\"0\""));
}

TEST_CASE("compare exits 1 on a regression injected into a copy", "[cli][compare]") {
  const auto dir = temp_dir("cmp-regress");
  auto db = Database::load(kBase);
  auto slow = db.entries().at(1);
  slow.gflops *= 0.7;
  db.put(slow, true);
  db.save(dir + "/new.json");
  const auto r = run_gemmtune("compare " + kBase + " " + dir + "/new.json --threshold 5% --junit " +
                              dir + "/junit.xml --json");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["failures"] == 1);
  CHECK(j["threshold"] == Approx(0.05));
  CHECK(j["rows"][1]["verdict"] == "REGRESSION");
  CHECK_THAT(read_text_file(dir + "/junit.xml"), Catch::Contains("failures=\"1\""));
  // A generous threshold lets the same slowdown pass.
  CHECK(run_gemmtune("compare " + kBase + " " + dir + "/new.json --threshold 40%").exit_code == 0);
}

TEST_CASE("compare exits 2 on bad input", "[cli][compare]") {
  const auto dir = temp_dir("cmp-bad");
  auto r = run_gemmtune("compare " + kBase + " " + dir + "/absent.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("absent.json"));
  std::ofstream(dir + "/cut.json") << read_text_file(kBase).substr(0, 300);
  r = run_gemmtune("compare " + kBase + " " + dir + "/cut.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("cut.json") && Catch::Contains("line"));
  r = run_gemmtune("compare " + kBase + " " + kBase + " --threshold lots");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("threshold"));
  CHECK(run_gemmtune("compare " + kBase).exit_code == 2);
}

}  // namespace gemmtune_tests::tools_test_cmd_compare
