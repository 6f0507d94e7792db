// SPDX-License-Identifier: Apache-2.0
// Bad files through the gemmtune binary: a field of the wrong type is one error line naming the
// file, the line (journals) and the field, exit 2, never "internal error" (exit 4); only regular
// files of bounded size are read; entries the template forbids are dropped with a warning.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_bad_files {

using namespace gemmtune;
using test::db_copy;
using test::kDb;
using test::line_count;
using test::run_gemmtune;
using test::temp_dir;
using test::write_replay;
using test::write_text;

namespace {

// The commands that read a database without building a kernel.
std::vector<std::string> database_readers(const std::string& db) {
  return {"db show " + db, "db lookup " + db + " -m 64 -n 64 -k 64", "export " + db + " -f csv",
          "report " + db, "compare " + kDb + " " + db};
}

// A journal of a replayed search in `dir` (its results file `dir`/out.json), with line `line`
// (1 = the header) passed through `edit`.
template <typename Edit>
std::string edited_journal(const std::string& dir, size_t line, Edit edit) {
  const std::string replay = write_replay(dir);
  const auto r = run_gemmtune("-q search --replay " + replay + " --max-evals 4 --no-db -o " + dir +
                              "/out.json");
  REQUIRE(r.exit_code == 0);
  const std::string journal = dir + "/out.journal.jsonl";
  std::vector<std::string> text;
  std::string all = read_text_file(journal), out;
  size_t start = 0, number = 1;
  while (start < all.size()) {
    const size_t end = all.find('\n', start);
    std::string l = all.substr(start, end - start);
    if (number++ == line) {
      auto j = nlohmann::json::parse(l);
      edit(j);
      l = j.dump();
    }
    out += l + "\n";
    start = end + 1;
  }
  write_text(journal, out);
  return journal;
}

}  // namespace

TEST_CASE("a database field of the wrong type names the file and the field", "[cli][database]") {
  const auto dir = temp_dir("bad-field-types");
  struct Case {
    std::string name;
    std::function<void(nlohmann::json&)> edit;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"type.json", [](nlohmann::json& j) { j["device"]["type"] = 5; }, "device.type"},
      {"updated.json", [](nlohmann::json& j) { j["metadata"]["updated"] = false; },
       "metadata.updated"},
      {"cu.json", [](nlohmann::json& j) { j["device"]["compute_units"] = "many"; },
       "device.compute_units"},
      {"runs.json", [](nlohmann::json& j) { j["entries"][1]["time"]["runs"] = "3"; },
       "entries[1].time.runs"},
      {"seed.json", [](nlohmann::json& j) { j["entries"][0]["found"]["seed"] = "x"; },
       "entries[0].found.seed"},
      {"layout.json", [](nlohmann::json& j) { j["entries"][2]["key"]["layout"] = 12; },
       "entries[2].key.layout"},
      {"usage.json",
       [](nlohmann::json& j) {
         j["entries"][0]["usage"] = {{"registers", "lots"}};
       },
       "entries[0].usage.registers"},
  };
  for (const auto& c : cases) {
    const auto path = db_copy(dir, c.name, c.edit);
    for (const auto& command : database_readers(path)) {
      INFO(command);
      const auto r = run_gemmtune("-q " + command);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
      CHECK_THAT(r.err, Catch::Contains(path) && Catch::Contains("at " + c.field) &&
                            !Catch::Contains("internal") && !Catch::Contains("json.exception"));
    }
  }
}

TEST_CASE("a journal field of the wrong type names the file, the line and the field",
          "[cli][journal][resume]") {
  SECTION("settings.output in the header") {
    const auto dir = temp_dir("bad-journal-output");
    const auto journal =
        edited_journal(dir, 1, [](nlohmann::json& j) { j["settings"]["output"] = 1.5; });
    const auto r = run_gemmtune("-q search --resume " + journal);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(journal) && Catch::Contains("line 1") &&
                          Catch::Contains("settings.output") && !Catch::Contains("internal"));
  }
  SECTION("a record type that is a number") {
    const auto dir = temp_dir("bad-journal-type");
    const auto journal = edited_journal(dir, 3, [](nlohmann::json& j) { j["type"] = 4096; });
    for (const std::string& command :
         {"search --resume " + journal,
          "search --no-db --replay " + journal + " -o " + dir + "/again.json"}) {
      INFO(command);
      const auto r = run_gemmtune("-q " + command);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
      CHECK_THAT(r.err, Catch::Contains(journal) && Catch::Contains("line 3") &&
                            Catch::Contains("at type") && !Catch::Contains("internal"));
    }
  }
  SECTION("a result field of the wrong type") {
    const auto dir = temp_dir("bad-journal-result");
    const auto journal =
        edited_journal(dir, 2, [](nlohmann::json& j) { j["result"]["gflops"] = "fast"; });
    const auto r = run_gemmtune("-q search --resume " + journal);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("line 2") && Catch::Contains("result.gflops"));
  }
}

TEST_CASE("a corrupt journal line before the last is an error naming it", "[cli][journal]") {
  const auto dir = temp_dir("bad-journal-middle");
  const auto journal = edited_journal(dir, 0, [](nlohmann::json&) {});
  std::string text = read_text_file(journal);
  // Line 3 loses its closing brace: a line cut short, but not at the end of the file.
  const size_t third = text.find('\n', text.find('\n') + 1) + 1;
  const size_t end = text.find('\n', third);
  text.erase(end - 1, 1);
  write_text(journal, text);
  auto r = run_gemmtune("-q search --resume " + journal);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(journal) && Catch::Contains("line 3") &&
                        Catch::Contains("not the last line"));

  // Cut short at the end, as a killed search leaves it: resumed, the tail is dropped and the
  // journal stays readable.
  const auto dir2 = temp_dir("bad-journal-tail");
  const auto cut = edited_journal(dir2, 0, [](nlohmann::json&) {});
  text = read_text_file(cut);
  write_text(cut, text.substr(0, text.size() - 10));
  r = run_gemmtune("search --resume " + cut + " --max-evals 6");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("cut short"));
  CHECK(run_gemmtune("-q search --resume " + cut + " --max-evals 7").exit_code == 0);
}

TEST_CASE("only regular files are read as databases and journals", "[cli][database]") {
  const auto dir = temp_dir("bad-file-kinds");
  const std::string fifo = dir + "/fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir}) {
    for (const std::string& command :
         {"db show " + path, "compare " + kDb + " " + path, "search --resume " + path}) {
      INFO(command);
      const auto r = run_gemmtune("-q " + command);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
      CHECK_THAT(r.err, Catch::Contains("not a regular file"));
    }
  }
  // Beyond the stated limit: refused before it is parsed.
  const std::string big = dir + "/big.json";
  REQUIRE(::truncate(big.c_str(), 0) != 0);  // does not exist yet
  write_text(big, "");
  REQUIRE(::truncate(big.c_str(), static_cast<off_t>(kMaxDocumentBytes + 1)) == 0);
  const auto r = run_gemmtune("-q db show " + big);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("larger than 256 MiB"));
}

TEST_CASE("entries whose values the template forbids are dropped on load", "[cli][database]") {
  const auto dir = temp_dir("bad-forbidden");
  // The test database's first entry, tuned at 64x64x64 is the one `db lookup` finds exactly.
  const auto first = read_json_file(kDb)["entries"][0];
  const std::string kernel = first["key"]["kernel"];
  const std::string shape = "-m " + std::to_string(first["key"]["m"].get<int64_t>()) + " -n " +
                            std::to_string(first["key"]["n"].get<int64_t>()) + " -k " +
                            std::to_string(first["key"]["k"].get<int64_t>());
  const auto seven = db_copy(dir, "seven.json",
                             [](nlohmann::json& j) { j["entries"][0]["parameters"]["MWG"] = 7; });
  // MWG=32 is listed, but 32 is no multiple of MDIMC * VWM = 64: a failed constraint.
  const auto constraint = db_copy(
      dir, "constraint.json", [](nlohmann::json& j) { j["entries"][0]["parameters"]["MWG"] = 32; });
  for (const auto& path : {seven, constraint}) {
    INFO(path);
    auto r = run_gemmtune("db show " + path);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("dropped") && Catch::Contains("MWG"));
    CHECK(line_count(r.err) == 1);  // the other entries are whole
    r = run_gemmtune("db lookup " + path + " --kernel " + kernel + " " + shape);
    CHECK_THAT(r.out + r.err, !Catch::Contains("exact match"));
    r = run_gemmtune("-q export " + path + " -f csv");
    CHECK(r.exit_code == 0);
    CHECK(line_count(r.out) == line_count(run_gemmtune("-q export " + kDb + " -f csv").out) - 1);
  }
}

}  // namespace gemmtune_tests::tools_test_cli_bad_files
