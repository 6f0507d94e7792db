// SPDX-License-Identifier: Apache-2.0
// `gemmtune search --shard I/N` end to end: shards of an exhaustive search measure exactly the
// configurations of one unsharded run (no overlap, nothing missed), `db merge` of their databases
// gives the unsharded run's best, model-based strategies split the shapes, and bad shards are
// refused with one line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "search/tuning/tuner.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_shard {

using namespace gemmtune;
using test::run_gemmtune;

namespace {

// The configurations a journal holds, as text.
std::multiset<std::string> measured(const std::string& journal) {
  std::multiset<std::string> out;
  for (const auto& e : read_journal(journal).entries) out.insert(to_string(e.result.config));
  return out;
}

// The fastest ok result over several journals, as the tuner ranks them.
Result fastest(const std::vector<std::string>& journals) {
  std::optional<Result> best;
  for (const auto& j : journals) {
    for (const auto& e : read_journal(j).entries) {
      if (better_result(e.result, best, e.problem.flops())) best = e.result;
    }
  }
  REQUIRE(best);
  return *best;
}

// The single entry of a database.
DatabaseEntry only_entry(const std::string& path) {
  const auto db = Database::load(path);
  REQUIRE(db.entries().size() == 1);
  return db.entries().front();
}

// A synthetic recording of the xgemm cpu space for two shapes.
std::string write_two_shape_replay(const std::string& dir) {
  return test::write_xgemm_cpu_replay(dir + "/replay.jsonl",
                                      {Shape{256, 256, 256}, Shape{512, 512, 512}}, 7);
}

}  // namespace

TEST_CASE("three shards of an exhaustive search measure what one run measures",
          "[search][cli][shard][device]") {
  if (!test::test_device().device) {
    WARN("no OpenCL device: skipped");
    return;
  }
  const std::string dir = test::temp_dir("search-shard");
  const std::string common =
      "search --kernel xgemm --space ci --strategy exhaustive -s 32x32x32 --in-process "
      "--compile-threads 1 --cache-dir " +
      dir + "/cache ";
  auto r = run_gemmtune(common + "-o " + dir + "/single.json --db " + dir + "/single-db.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto whole = measured(dir + "/single.journal.jsonl");
  REQUIRE(whole.size() > 3);

  std::vector<std::string> journals, dbs;
  for (int i = 0; i < 3; ++i) {
    r = run_gemmtune(common + "--shard " + std::to_string(i) + "/3 -o " + dir + "/out.json --db " +
                     dir + "/db.json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string tag = "-shard-" + std::to_string(i) + "of3";
    // Every file of a shard carries the shard; nothing is written under the unsharded names.
    CHECK(std::filesystem::exists(dir + "/out" + tag + ".json"));
    journals.push_back(dir + "/out" + tag + ".journal.jsonl");
    dbs.push_back(dir + "/db" + tag + ".json");
    CHECK(std::filesystem::exists(dbs.back()));
    CHECK(read_json_file(dir + "/out" + tag + ".json")["metadata"]["shard"] ==
          std::to_string(i) + "/3");
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/out.json"));
  CHECK_FALSE(std::filesystem::exists(dir + "/db.json"));

  // No overlap, nothing missed: the shards' configurations are those of the single run.
  std::multiset<std::string> together;
  for (const auto& j : journals) {
    const auto part = measured(j);
    CHECK(part.size() >= whole.size() / 3);
    CHECK(part.size() <= whole.size() / 3 + 1);
    together.insert(part.begin(), part.end());
  }
  CHECK(together == whole);

  // The merged database holds the fastest of everything the shards measured.
  r = run_gemmtune("db merge " + dir + "/merged.json " + dbs[0] + " " + dbs[1] + " " + dbs[2]);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto merged = only_entry(dir + "/merged.json");
  CHECK(merged.parameters == fastest(journals).config);

  // Timings on a shared machine differ between runs; replaying the single run's recording makes
  // them identical, so three merged shards must find exactly the single run's best.
  const std::string replay = dir + "/single.journal.jsonl";
  std::vector<std::string> replayed;
  for (int i = 0; i < 3; ++i) {
    r = run_gemmtune("search --replay " + replay + " --strategy exhaustive --shard " +
                     std::to_string(i) + "/3 -o " + dir + "/replayed.json --db " + dir +
                     "/replayed-db.json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    replayed.push_back(dir + "/replayed-db-shard-" + std::to_string(i) + "of3.json");
  }
  r = run_gemmtune("db merge " + dir + "/replayed-merged.json " + replayed[0] + " " + replayed[1] +
                   " " + replayed[2]);
  REQUIRE(r.exit_code == 0);
  const auto single = only_entry(dir + "/single-db.json");
  const auto replay_merged = only_entry(dir + "/replayed-merged.json");
  CHECK(replay_merged.parameters == single.parameters);
  CHECK(replay_merged.gflops == Approx(single.gflops));
}

TEST_CASE("a shard resumes under its own files", "[search][cli][shard][resume]") {
  const std::string dir = test::temp_dir("search-shard");
  const std::string replay = write_two_shape_replay(dir);
  auto r = run_gemmtune("search --replay " + replay +
                        " --strategy random --max-evals 10 --shard 1/4 -s 256x256x256 -o " + dir +
                        "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string journal = dir + "/out-shard-1of4.journal.jsonl";
  REQUIRE(read_journal(journal).entries.size() == 10);

  // --resume takes the shard back from the journal: the same part of the space, the same files.
  r = run_gemmtune("search --resume " + journal + " --max-evals 20");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto entries = read_journal(journal).entries;
  CHECK(entries.size() == 20);
  CHECK(measured(journal).size() == 20);
  CHECK(read_json_file(dir + "/out-shard-1of4.json")["metadata"]["shard"] == "1/4");
  CHECK_FALSE(std::filesystem::exists(dir + "/out.json"));

  // Every configuration it measured is one of shard 1's: index 1 modulo 4 in the recorded space.
  const auto space = SearchSpace::from_configurations(
      ReplayEvaluator(replay).configurations(entries.front().problem));
  for (const auto& e : entries) {
    const auto index = space.index_of(e.result.config);
    REQUIRE(index);
    CHECK(*index % 4 == 1);
  }
}

TEST_CASE("model-based strategies shard by shape", "[search][cli][shard]") {
  const std::string dir = test::temp_dir("search-shard");
  const std::string replay = write_two_shape_replay(dir);
  std::map<int, std::set<std::string>> shapes_of;
  for (int i = 0; i < 2; ++i) {
    const auto r =
        run_gemmtune("search --replay " + replay + " --strategy bayes --max-evals 12 --shard " +
                     std::to_string(i) + "/2 -o " + dir + "/bayes.json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string journal = dir + "/bayes-shard-" + std::to_string(i) + "of2.journal.jsonl";
    for (const auto& e : read_journal(journal).entries) {
      shapes_of[i].insert(e.problem.shape.to_string());
    }
  }
  CHECK(shapes_of[0] == std::set<std::string>{"256x256x256"});
  CHECK(shapes_of[1] == std::set<std::string>{"512x512x512"});

  // A third shard would have no shape: refused rather than run for nothing.
  const auto r = run_gemmtune("search --replay " + replay + " --strategy anneal --shard 2/3 -o " +
                              dir + "/anneal.json");
  CHECK(r.exit_code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("at most 2 shards") != std::string::npos);
}

TEST_CASE("a shard that is not I/N with I < N is refused", "[search][cli][shard]") {
  const std::string dir = test::temp_dir("search-shard");
  const std::string replay = write_two_shape_replay(dir);
  for (const std::string bad : {"3/3", "1/0", "-1/3", "1", "a/3", "1/3x", "/3"}) {
    INFO(bad);
    // --shard=VALUE, so that "-1/3" is not read as an option.
    auto r =
        run_gemmtune("search --replay " + replay + " --shard=" + bad + " -o " + dir + "/x.json");
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("is not I/N") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir + "/x.json"));
    // compile --shard shares the parser.
    r = run_gemmtune("compile --kernel xgemm --space ci --cache-dir " + dir + "/c --shard=" + bad);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("is not I/N") != std::string::npos);
  }
}

}  // namespace gemmtune_tests::tools_test_cmd_search_shard
