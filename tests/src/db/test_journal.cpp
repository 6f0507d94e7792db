// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <fstream>

#ifdef GEMMTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/db/journal.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_db_test_journal {

using namespace gemmtune;

namespace {

Result ok_result(int64_t a, double ms) {
  Result r;
  r.config = {{"A", a}};
  r.time.median_ms = ms;
  r.gflops = 1.0 / ms;
  return r;
}

Problem problem_of(int64_t n) {
  Problem p;
  p.shape = {n, n, n};
  return p;
}

}  // namespace

TEST_CASE("journal round trip", "[search][journal]") {
  const std::string dir = test::temp_dir("journal");
  const std::string path = dir + "/j.jsonl";
  {
    JournalWriter w(path);
    w.write_header({{"kernel", "xgemm"}, {"space", "ci"}});
    w.append("xgemm", problem_of(64), ok_result(1, 2.0), 0.5);
    w.append("xgemm", problem_of(64), Result::failure({{"A", 2}}, Status::kCompileFailed, "boom"),
             0.7);
    w.append("xgemm", problem_of(128), ok_result(1, 9.0), 1.0);
  }
  const Journal j = read_journal(path);
  REQUIRE(j.headers.size() == 1);
  CHECK(j.headers[0]["space"] == "ci");
  REQUIRE(j.entries.size() == 3);
  CHECK(j.entries[1].result.status == Status::kCompileFailed);
  CHECK(j.entries[1].result.message == "boom");
  CHECK(j.entries[2].problem.shape.m == 128);
  CHECK(problem_key(j.entries[0]) == problem_key("xgemm", problem_of(64)));
  CHECK(problem_key(j.entries[0]) != problem_key(j.entries[2]));
}

TEST_CASE("a journal entry keeps its kernel through the file, inside its problem",
          "[search][journal]") {
  const std::string dir = test::temp_dir("journal-kernel");
  const std::string path = dir + "/j.jsonl";
  {
    JournalWriter w(path);
    w.write_header({{"kernel", "xgemm_fast"}});
    w.append("xgemm_fast", problem_of(64), ok_result(1, 2.0), 0.5);
  }
  // Where every earlier version wrote and read it: the result line's problem object.
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  std::getline(in, line);
  CHECK(nlohmann::json::parse(line).at("problem").at("kernel") == "xgemm_fast");
  const Journal j = read_journal(path);
  REQUIRE(j.entries.size() == 1);
  CHECK(j.entries[0].kernel == "xgemm_fast");
  CHECK(problem_key(j.entries[0]) == problem_key("xgemm_fast", problem_of(64)));

  // A record whose problem names no kernel (older files) is the default template's.
  nlohmann::json old = nlohmann::json(j.entries[0]);
  old["problem"].erase("kernel");
  CHECK(old.get<JournalEntry>().kernel == "xgemm");
}

TEST_CASE("journal survives a line cut short by a killed writer", "[search][journal]") {
  const std::string dir = test::temp_dir("journal");
  const std::string path = dir + "/j.jsonl";
  {
    JournalWriter w(path);
    w.write_header({{"kernel", "xgemm"}});
    w.append("xgemm", problem_of(64), ok_result(1, 2.0), 0.5);
  }
  {
    std::ofstream out(path, std::ios::app);
    out << R"({"type":"result","problem":{"shape":{"m":64,)";  // no newline: killed mid-write
  }
  // Read as it is: the cut-short last line is skipped.
  CHECK(read_journal(path).skipped_lines == 1);
  {
    JournalWriter w(path);  // resuming drops the cut-short tail, then appends
    w.append("xgemm", problem_of(64), ok_result(2, 3.0), 0.1);
  }
  const Journal j = read_journal(path);
  CHECK(j.skipped_lines == 0);
  REQUIRE(j.entries.size() == 2);
  CHECK(j.entries[1].result.config.at("A") == 2);
}

TEST_CASE("journal errors name the file", "[search][journal]") {
  const std::string dir = test::temp_dir("journal");
  CHECK_THROWS_WITH(read_journal(dir + "/missing.jsonl"), Catch::Contains("missing.jsonl"));
  write_file_atomic(dir + "/empty.jsonl", "\n");
  CHECK_THROWS_WITH(read_journal(dir + "/empty.jsonl"), Catch::Contains("no journal record"));
  write_file_atomic(dir + "/other.jsonl", "{\"type\":\"other\"}\n");
  CHECK_THROWS_WITH(read_journal(dir + "/other.jsonl"), Catch::Contains("line 1"));
  CHECK_THROWS_AS(JournalWriter(dir + "/x.jsonl.gz"), Error);
}

TEST_CASE("replay answers from a journal, gzip-compressed too", "[search][journal][replay]") {
  const std::string dir = test::temp_dir("replay");
  std::string text;
  {
    JournalWriter w(dir + "/r.jsonl");
    w.write_header({{"kernel", "xgemm"}, {"space", "ci"}, {"device", {{"id", "dev"}}}});
    w.append("xgemm", problem_of(64), ok_result(1, 2.0), 0);
    w.append("xgemm", problem_of(64), ok_result(2, 1.0), 0);
    w.append("xgemm", problem_of(64), ok_result(2, 5.0), 0);  // recorded twice: the first counts
    w.append("xgemm", problem_of(64), Result::failure({{"A", 4}}, Status::kWrongResult, "bad"), 0);
  }
  std::vector<std::string> files = {dir + "/r.jsonl"};
#ifdef GEMMTUNE_HAVE_ZLIB
  {
    const std::string plain = read_text_file(dir + "/r.jsonl");
    gzFile gz = gzopen((dir + "/r.jsonl.gz").c_str(), "wb");
    REQUIRE(gz);
    gzwrite(gz, plain.data(), unsigned(plain.size()));
    gzclose(gz);
    files.push_back(dir + "/r.jsonl.gz");
  }
#endif
  for (const auto& f : files) {
    INFO(f);
    ReplayEvaluator replay(f);
    CHECK(replay.header()["device"]["id"] == "dev");
    REQUIRE(replay.problems().size() == 1);
    CHECK(replay.configurations(problem_of(64)).size() == 3);
    CHECK(replay.evaluate(problem_of(64), {{"A", 2}}).time.median_ms == 1.0);
    CHECK(replay.evaluate(problem_of(64), {{"A", 4}}).status == Status::kWrongResult);
    CHECK(replay.evaluate(problem_of(64), {{"A", 8}}).status == Status::kInvalid);
    CHECK(replay.best(problem_of(64))->config.at("A") == 2);
    CHECK_THROWS_WITH(replay.evaluate(problem_of(32), {{"A", 1}}),
                      Catch::Contains("no recording of 32x32x32"));
  }
}

TEST_CASE("replay of a recording older than a parameter answers it at its default",
          "[search][journal][replay]") {
  const std::string dir = test::temp_dir("replay-newer-parameter");
  {
    JournalWriter w(dir + "/r.jsonl");
    w.write_header({{"kernel", "xgemm"}, {"space", "ci"}});
    w.append("xgemm", problem_of(64), ok_result(1, 2.0), 0);  // recorded before B existed
  }
  ReplayEvaluator replay(dir + "/r.jsonl");
  const Configuration with_default = {{"A", 1}, {"B", 0}};
  // Without the template's defaults nothing can be assumed about B.
  CHECK(replay.evaluate(problem_of(64), with_default).status == Status::kInvalid);
  replay.set_defaults({{"A", 4}, {"B", 0}});
  const Result r = replay.evaluate(problem_of(64), with_default);
  CHECK(r.ok());
  CHECK(r.time.median_ms == 2.0);
  CHECK(r.config == with_default);  // answered under the query's configuration
  // B at another value was never measured; A at its default is still matched exactly.
  CHECK(replay.evaluate(problem_of(64), {{"A", 1}, {"B", 1}}).status == Status::kInvalid);
  CHECK(replay.evaluate(problem_of(64), {{"A", 4}, {"B", 0}}).status == Status::kInvalid);
  CHECK(replay.evaluate(problem_of(64), {{"A", 1}}).ok());
}

}  // namespace gemmtune_tests::src_db_test_journal
