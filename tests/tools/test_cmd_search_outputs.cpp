// SPDX-License-Identifier: Apache-2.0
// What a search leaves behind besides its journal: the tuned database and the report beside it,
// the refined configuration with --refine, and the binary cache warmed by `gemmtune compile`.
#include <catch2/catch.hpp>

#include <filesystem>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "src/device/binary_cache.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_outputs {

using namespace gemmtune;
using test::run_gemmtune;

using test::write_replay;

TEST_CASE("search says where the device's time went and what bounded it", "[search][cli]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("search-device-time");
  const auto r = run_gemmtune(
      "search --kernel xgemm_direct --space ci --shapes 32x32x32 "
      "--max-evals 3 --seed 5 --no-db --out " +
      dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Device time: ") && Catch::Contains("bounded by "));
  const auto meta = read_json_file(dir + "/search-xgemm_direct.json")["metadata"];
  const auto& t = meta["device_time_s"];
  CHECK(t["timing"].get<double>() > 0);
  CHECK(t["other_evaluation"].get<double>() >= 0);
  CHECK(t["proposal_wait"].get<double>() >= 0);
  // The rest of an evaluation is the builds waited for and the rest (verification, transfers).
  CHECK(t["build_wait"].get<double>() + t["loads_verification_transfers"].get<double>() ==
        Approx(t["other_evaluation"].get<double>()));
  CHECK(meta["strategy_s"].get<double>() > 0);
  CHECK_THAT(r.out, Catch::Contains("the strategy busy "));
  const std::string bound = meta["bounded_by"];
  CHECK((bound == "timing" || bound == "builds" ||
         bound == "program loads, verification and transfers" || bound == "proposals" ||
         bound.rfind("the strategy (", 0) == 0));
}

TEST_CASE("timing stops once the samples agree (--stable-cv), before --min-time-ms",
          "[search][cli][run]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  // Any spread is below a coefficient of variation of 100: the samples stop at --min-runs.
  const std::string base =
      "run --kernel xgemm_direct -m 32 -n 32 -k 32 --min-runs 3 --max-runs 40 "
      "--min-time-ms 1000000 --json --stable-cv ";
  const auto stable = run_gemmtune(base + "100");
  REQUIRE(stable.exit_code == 0);
  CHECK(nlohmann::json::parse(stable.out)["time"]["runs"] == 3);
  // Never stable: the unreachable time is capped by --max-runs.
  const auto never = run_gemmtune(base + "0");
  REQUIRE(never.exit_code == 0);
  CHECK(nlohmann::json::parse(never.out)["time"]["runs"] == 40);
}

TEST_CASE("a search stops timing a configuration slower than --stop-above-best times its best",
          "[search][cli][run]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  // Every configuration would take 6 samples; one slower than the best so far stops as soon as
  // its samples' median is (after one sample, or more where the first was near the best).
  const std::string base =
      "search --kernel xgemm_direct --space ci --shapes 32x32x32 --max-evals 12 --seed 5 --no-db "
      "--fresh --min-runs 6 --max-runs 6 --min-time-ms 1000000 --stable-cv 0 --stop-above-best ";
  auto results = [](const std::string& dir) {
    std::vector<nlohmann::json> ok;
    for (const auto& e : read_journal(dir + "/search-xgemm_direct.journal.jsonl").entries) {
      if (e.result.ok()) ok.push_back(nlohmann::json(e.result)["time"]);
    }
    return ok;
  };
  const std::string dir = test::temp_dir("search-stop-above");
  auto r = run_gemmtune(base + "1.0001 --out " + dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto times = results(dir);
  REQUIRE(times.size() >= 2);
  double best = 1e300;
  for (const auto& t : times) best = std::min(best, t["median_ms"].get<double>());
  size_t stopped = 0;
  for (const auto& t : times) {
    INFO(t.dump());
    if (t.value("stopped_above", false)) {
      ++stopped;
      CHECK(t["runs"] < 6);
      CHECK(t["median_ms"].get<double>() > best);  // slower than the best of its time, too
    } else {
      CHECK(t["runs"] == 6);
    }
  }
  // Twelve configurations, each a new best: not what a search of a real space gives.
  CHECK(stopped > 0);
  // 0: every configuration takes its samples.
  const std::string all = test::temp_dir("search-stop-above-off");
  r = run_gemmtune(base + "0 --out " + all);
  REQUIRE(r.exit_code == 0);
  for (const auto& t : results(all)) {
    CHECK(!t.value("stopped_above", false));
    CHECK(t["runs"] == 6);
  }
}

TEST_CASE("search writes the tuned database and its report", "[search][cli][database]") {
  const std::string dir = test::temp_dir("search-db");
  const std::string replay = write_replay(dir);
  const std::string db_path = dir + "/tuned/db.json";
  auto r = run_gemmtune("search --replay " + replay + " --strategy random --max-evals 20 --seed 2" +
                        " --db " + db_path + " -o " + dir + "/a.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("Tuned database: " + db_path));
  CHECK_THAT(r.out, Catch::Contains("Report: " + dir + "/tuned/db-report.md"));
  const auto db = Database::load(db_path);
  REQUIRE(db.entries().size() == 1);
  const auto search = read_json_file(dir + "/a.json");
  const auto& entry = db.entries().front();
  CHECK(entry.gflops == Approx(search["results"][0]["best"]["gflops"].get<double>()));
  CHECK(entry.found.strategy == "random");
  CHECK(entry.found.evaluations == 20);
  CHECK(entry.found.seed == 2);
  CHECK(std::filesystem::exists(dir + "/tuned/db-report.md"));
  CHECK(std::filesystem::exists(dir + "/tuned/db-report.json"));

  // A shorter search with another seed finds something no faster: the entry stays.
  r = run_gemmtune("search --replay " + replay + " --strategy random --max-evals 3 --seed 9" +
                   " --db " + db_path + " -o " + dir + "/b.json");
  REQUIRE(r.exit_code == 0);
  const auto b = read_json_file(dir + "/b.json");
  if (b["results"][0]["best"]["gflops"].get<double>() < entry.gflops) {
    CHECK(Database::load(db_path).entries().front().gflops == Approx(entry.gflops));
  }
  // --no-db leaves no database behind.
  r = run_gemmtune("search --replay " + replay + " --max-evals 3 --no-db --db " + dir +
                   "/none.json -o " + dir + "/c.json");
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/none.json"));
}

TEST_CASE("search with refine ends on a configuration no single change beats",
          "[search][cli][refine]") {
  const std::string dir = test::temp_dir("search-refine");
  const std::string replay = write_replay(dir);
  // Too small a refinement budget is refused before anything is measured.
  auto r = run_gemmtune("search --replay " + replay + " --max-evals 5 --refine --refine-evals 4" +
                        " --db " + dir + "/db.json -o " + dir + "/x.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--refine-evals"));
  CHECK_FALSE(std::filesystem::exists(dir + "/x.journal.jsonl"));

  r = run_gemmtune("search --replay " + replay + " --strategy random --max-evals 5 --seed 4" +
                   " --refine --refine-evals 400 --db " + dir + "/db.json -o " + dir + "/r.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto db = Database::load(dir + "/db.json");
  REQUIRE(db.entries().size() == 1);
  const auto& e = db.entries().front();
  CHECK(e.found.strategy == "random+refine");
  const auto searched = read_json_file(dir + "/r.json")["results"][0]["best"]["gflops"];
  // The refinement starts from the search's best, so it can only end at least as fast.
  CHECK(e.gflops >= searched.get<double>() * (1 - 1e-9));
  CHECK(e.found.evaluations > 5);
}

TEST_CASE("compile warms the binary cache for a later run", "[cli][device]") {
  const std::string dir = test::temp_dir("compile");
  const std::string cache = dir + "/cache";
  auto r =
      run_gemmtune("compile --kernel xgemm_direct --space cpu --shard 0/100 --cache-dir " + cache);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("built, 0 already cached, 0 failed"));
  // PoCL keeps its own builds: the entries hold the build log and no binary, whose export would
  // compile a generic copy of every kernel first. Other runtimes' entries hold the binary.
  const auto& device = test::test_device().device;
  REQUIRE(device);
  const bool source_only = BinaryCache::runtime_keeps_builds(device->info);
  int entries = 0;
  for (const auto& f : std::filesystem::directory_iterator(cache + "/kernels")) {
    const std::string text = read_text_file(f.path().string());
    const auto header = nlohmann::json::parse(text.substr(0, text.find('\n')));
    CHECK((header.at("binary_bytes").get<size_t>() == 0) == source_only);
    ++entries;
  }
  CHECK(entries > 0);
  r = run_gemmtune("compile --kernel xgemm_direct --space cpu --shard 0/100 --cache-dir " + cache);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("0 built"));
  CHECK_THAT(r.out, Catch::Contains("0 failed"));

  r = run_gemmtune("compile --kernel xgemm_direct --shard 3/3 --cache-dir " + cache);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--shard '3/3'"));
  r = run_gemmtune("compile --kernel xgemm_direct --cache-dir none");
  CHECK(r.exit_code == 2);
}

}  // namespace gemmtune_tests::tools_test_cmd_search_outputs
