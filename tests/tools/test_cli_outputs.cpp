// SPDX-License-Identifier: Apache-2.0
// No command's output replaces one of its inputs (compared as files, not spellings), nor a tuned
// database it did not read unless --force: each refusal is exit 2 with one line, before any work,
// and the input stays byte-identical.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_outputs {

using namespace gemmtune;
using test::run_gemmtune;

namespace {

const std::string kDb = test::source_path("tests/data/db_gfx1012.json");

// A copy of the sample database in `dir`, to be guarded.
std::string database_copy(const std::string& dir, const std::string& name = "D.json") {
  const std::string path = dir + "/" + name;
  std::filesystem::copy_file(kDb, path, std::filesystem::copy_options::overwrite_existing);
  return path;
}

// The command was refused as bad input with one line, and `path` holds `before` still.
void check_refused(const test::CommandResult& r, const std::string& path,
                   const std::string& before) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, Catch::Contains("same file") || Catch::Contains("--force"));
  CHECK(read_text_file(path) == before);
}

}  // namespace

TEST_CASE("search refuses a results file that is its database", "[cli][outputs][search]") {
  const std::string dir = test::temp_dir("outputs-search-db");
  const std::string replay = test::write_replay(dir);
  const std::string db = dir + "/D.json";
  const std::string search = "search --replay " + replay + " --strategy random --max-evals 3";
  // A database of the replay's device, as a first search leaves it.
  REQUIRE(run_gemmtune(search + " --db " + db + " -o " + dir + "/first.json" + " --journal " + dir +
                       "/first.jsonl")
              .exit_code == 0);
  const std::string before = read_text_file(db);
  // Spelled differently: the check compares the files.
  check_refused(run_gemmtune(search + " --db " + db + " -o " + dir + "/./D.json"), db, before);
  CHECK_FALSE(std::filesystem::exists(dir + "/D.jsonl"));  // refused before the journal
  // The replay and the resumed journal are inputs too.
  check_refused(run_gemmtune(search + " --no-db -o " + replay), replay, read_text_file(replay));
  const std::string journal = dir + "/first.jsonl";
  check_refused(run_gemmtune("search -q --resume " + journal + " -o " + journal), journal,
                read_text_file(journal));
}

TEST_CASE("search replaces another database with its results file only with --force",
          "[cli][outputs][search]") {
  const std::string dir = test::temp_dir("outputs-search-other");
  const std::string replay = test::write_replay(dir);
  const std::string other = database_copy(dir, "other.json");
  const std::string before = read_text_file(other);
  const std::string search = "search --replay " + replay + " --strategy random --max-evals 3" +
                             " --db " + dir + "/tuned.json -o " + other;
  check_refused(run_gemmtune(search), other, before);
  const auto r = run_gemmtune(search + " --force");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_json_file(other)["format"] == "gemmtune-search");
}

TEST_CASE("export refuses to write over its database", "[cli][outputs][export]") {
  const std::string dir = test::temp_dir("outputs-export");
  const std::string db = database_copy(dir);
  const std::string before = read_text_file(db);
  check_refused(run_gemmtune("export " + db + " -f csv -o " + db), db, before);
  // A symbolic link is the same file.
  std::filesystem::create_symlink(db, dir + "/link.json");
  check_refused(run_gemmtune("export " + db + " -f csv -o " + dir + "/link.json"), db, before);
  // Another database: only with --force.
  const std::string other = database_copy(dir, "other.json");
  check_refused(run_gemmtune("export " + db + " -f csv -o " + other), other, before);
  CHECK(run_gemmtune("export " + db + " -f csv -o " + other + " --force").exit_code == 0);
  CHECK(read_text_file(other) != before);
}

TEST_CASE("compare refuses reports written over a database compared", "[cli][outputs][compare]") {
  const std::string dir = test::temp_dir("outputs-compare");
  const std::string db = database_copy(dir);
  const std::string before = read_text_file(db);
  check_refused(run_gemmtune("compare " + db + " " + db + " --markdown " + db), db, before);
  check_refused(run_gemmtune("compare " + kDb + " " + db + " --junit " + dir + "/./D.json"), db,
                before);
  const std::string other = database_copy(dir, "other.json");
  check_refused(run_gemmtune("compare " + db + " " + db + " --junit " + other), other, before);
  CHECK(run_gemmtune("compare " + db + " " + db + " --junit " + other + " --force").exit_code == 0);
}

TEST_CASE("report and bench refuse outputs over their database", "[cli][outputs]") {
  const std::string dir = test::temp_dir("outputs-report-bench");
  // report -o FOLDER writes <stem>-report.json there: here a second name of the database.
  const std::string db = database_copy(dir, "x.json");
  const std::string before = read_text_file(db);
  std::filesystem::create_directory(dir + "/out");
  std::filesystem::create_hard_link(db, dir + "/out/x-report.json");
  check_refused(run_gemmtune("report " + db + " -o " + dir + "/out"), db, before);
  // bench refuses before it looks for a device.
  check_refused(run_gemmtune("bench " + db + " -o " + dir + "/./x.json"), db, before);
}

}  // namespace gemmtune_tests::tools_test_cli_outputs
