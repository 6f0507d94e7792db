// SPDX-License-Identifier: Apache-2.0
// Bad recordings through the gemmtune binary: Kernel Tuner caches, T4 results and journals with a
// figure out of range, a time that is negative or zero, or a field of the wrong type are one error
// line naming the file and the field, exit 2; a T4 file given where a journal goes says what it is
// and which commands read it.
#include <catch2/catch.hpp>

#include <functional>
#include <string>
#include <vector>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_bad_recordings {

using namespace gemmtune;
using test::line_count;
using test::run_gemmtune;
using test::source_path;
using test::temp_dir;
using test::write_text;

namespace {

const std::string kCache = source_path("tests/data/kernel_tuner_cache_small.json");
const std::string kT4 = source_path("tests/data/t4_results_small.json");
const std::string kJournal = source_path("tests/data/rank_h100_replay_sample.jsonl");

// A copy of `from` in `dir` named `name`, its first `old` replaced by `now` (the text as it is,
// so that a figure no double holds can be written).
std::string replaced(const std::string& dir, const std::string& name, const std::string& from,
                     const std::string& old, const std::string& now) {
  std::string text = read_text_file(from);
  const size_t at = text.find(old);
  REQUIRE(at != std::string::npos);
  text.replace(at, old.size(), now);
  const std::string path = dir + "/" + name;
  write_text(path, text);
  return path;
}

// A copy of the T4 sample with `edit` applied to its first result.
std::string t4_copy(const std::string& dir, const std::string& name,
                    const std::function<void(nlohmann::json&)>& edit) {
  auto j = read_json_file(kT4);
  edit(j["results"][0]);
  const std::string path = dir + "/" + name;
  write_text(path, j.dump(1));
  return path;
}

// A copy of the journal sample with `edit` applied to the result of its first measured line.
std::string journal_copy(const std::string& dir, const std::string& name,
                         const std::function<void(nlohmann::json&)>& edit) {
  const std::string text = read_text_file(kJournal);
  std::string out;
  bool edited = false;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    auto j = nlohmann::json::parse(line);
    if (!edited && j["type"] == "result" && j["result"]["status"] == "ok") {
      edit(j["result"]);
      line = j.dump();
      edited = true;
    }
    out += line + "\n";
    start = end == std::string::npos ? text.size() : end + 1;
  }
  REQUIRE(edited);
  const std::string path = dir + "/" + name;
  write_text(path, out);
  return path;
}

// `command` fails as bad input: one line naming `path` and `field`, exit 2.
void check_refused(const std::string& command, const std::string& path, const std::string& field) {
  INFO(command);
  const auto r = run_gemmtune("-q " + command);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(path) && Catch::Contains(field) &&
                        !Catch::Contains("internal") && !Catch::Contains("json.exception"));
}

std::string replay(const std::string& path) {
  return "search-eval --replay " + path + " --seeds 1 --max-evals 4 --budgets 4";
}

}  // namespace

TEST_CASE("a recorded figure no double holds names the file and the field", "[cli][recording]") {
  const auto dir = temp_dir("bad-recording-overflow");
  const std::string huge(400, '9');
  check_refused(replay(replaced(dir, "time.json", kCache, "\"time\": 0.521733", "\"time\": 1e999")),
                dir + "/time.json", "'time'");
  check_refused(replay(replaced(dir, "compile.json", kCache, "\"compile_time\": 128.0",
                                "\"compile_time\": " + huge)),
                dir + "/compile.json", "'compile_time'");
  check_refused(replay(replaced(dir, "t4.json", kT4, "1.875", "1e999")), dir + "/t4.json",
                "element of field 'runtimes'");
}

TEST_CASE("negative or zero recorded times are refused wherever they are read",
          "[cli][recording][journal]") {
  const auto dir = temp_dir("bad-recording-times");
  SECTION("Kernel Tuner caches") {
    check_refused(replay(replaced(dir, "compile.json", kCache, "\"compile_time\": 128.0",
                                  "\"compile_time\": -5")),
                  dir + "/compile.json", "\"compile_time\" is -5");
    check_refused(
        replay(replaced(dir, "times.json", kCache, "\"times\": [0.5148", "\"times\": [-0.5148")),
        dir + "/times.json", "\"times\" holds -0.5148");
    check_refused(replay(replaced(dir, "zero.json", kCache, "\"times\": [0.5148", "\"times\": [0")),
                  dir + "/zero.json", "\"times\" holds 0");
  }
  SECTION("T4 results") {
    check_refused(replay(t4_copy(dir, "compile.json",
                                 [](nlohmann::json& r) { r["times"]["compilation"] = -250; })),
                  dir + "/compile.json", "\"compilation\" is -250");
    check_refused(replay(t4_copy(dir, "runs.json",
                                 [](nlohmann::json& r) { r["times"]["runtimes"][1] = -1.0; })),
                  dir + "/runs.json", "times.runtimes holds -1");
  }
  SECTION("journals") {
    for (const double median : {-5.0, 0.0}) {
      const auto journal = journal_copy(
          dir, "median.jsonl", [&](nlohmann::json& r) { r["time"]["median_ms"] = median; });
      for (const std::string& command :
           {replay(journal), "rank --journal " + journal, "export " + journal + " -f t4"}) {
        check_refused(command, journal, "result.time.median_ms");
      }
    }
    const auto compile =
        journal_copy(dir, "compile.jsonl", [](nlohmann::json& r) { r["compile_ms"] = -1; });
    check_refused(replay(compile), compile, "result.compile_ms");
  }
}

TEST_CASE("a Kernel Tuner or T4 field of the wrong type names the file and the field",
          "[cli][recording]") {
  const auto dir = temp_dir("bad-recording-types");
  struct Case {
    std::string path, field;
  };
  const std::vector<Case> cases = {
      {replaced(dir, "compile.json", kCache, "\"compile_time\": 128.0", "\"compile_time\": \"x\""),
       "\"compile_time\" is \"x\""},
      {replaced(dir, "rate.json", kCache, "\"GFLOP/s\": 1.0049", "\"GFLOP/s\": []"),
       "\"GFLOP/s\" is []"},
      {replaced(dir, "kernel.json", kCache, "\"kernel_name\": \"example_gemm\"",
                "\"kernel_name\": 5"),
       "\"kernel_name\" is 5"},
      {replaced(dir, "keys.json", kCache, "\"tune_params_keys\": [\"WG\"",
                "\"tune_params_keys\": [7"),
       "tune_params_keys holds 7"},
      {t4_copy(dir, "invalidity.json", [](nlohmann::json& r) { r["invalidity"] = 5; }),
       "results[0]: \"invalidity\" is 5"},
      {t4_copy(dir, "times.json", [](nlohmann::json& r) { r["times"] = "x"; }),
       "results[0]: \"times\" is \"x\""},
      {t4_copy(dir, "unit.json", [](nlohmann::json& r) { r["measurements"][0]["unit"] = 1; }),
       "\"unit\" is 1"},
      {t4_copy(dir, "name.json", [](nlohmann::json& r) { r["measurements"][0]["name"] = false; }),
       "results[0]: measurements[0]: \"name\" is false"},
  };
  for (const auto& c : cases) check_refused(replay(c.path), c.path, c.field);
}

TEST_CASE("a T4 or Kernel Tuner file given as a journal says what it is and what reads it",
          "[cli][recording][journal]") {
  for (const auto& [path, kind] :
       {std::pair{kT4, std::string("is T4 results")},
        std::pair{kCache, std::string("is a Kernel Tuner cache file")}}) {
    for (const std::string& command : {"rank --journal " + path, "search --resume " + path}) {
      INFO(command);
      const auto r = run_gemmtune("-q " + command);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
      CHECK_THAT(r.err, Catch::Contains(path) && Catch::Contains(kind) &&
                            Catch::Contains("search-eval --replay") &&
                            !Catch::Contains("killed search"));
    }
  }
}

}  // namespace gemmtune_tests::tools_test_cli_bad_recordings
