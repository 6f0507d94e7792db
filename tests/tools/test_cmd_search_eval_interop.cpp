// SPDX-License-Identifier: Apache-2.0
// Kernel Tuner and T4 files through the command line: search-eval replays Kernel Tuner caches
// (plain, gzipped, cut short) and T4 results; export writes databases and journals as T4 results
// that hold what T4's results schema requires and read back as the same recording; search-eval's
// time axis on a Kernel Tuner cache.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

#ifdef GEMMTUNE_HAVE_ZLIB
#include <zlib.h>
#endif

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_eval_interop {

using namespace gemmtune;
using test::run_gemmtune;

namespace {

const std::string kCache = test::source_path("tests/data/kernel_tuner_cache_small.json");
const std::string kT4 = test::source_path("tests/data/t4_results_small.json");
const std::string kDb = test::source_path("tests/data/db_gfx1012.json");

nlohmann::json search_eval(const std::string& replay, const std::string& extra = "") {
  const auto r = run_gemmtune("search-eval --replay " + replay +
                              " --strategies random,bayes --seeds 3 --max-evals 12 --budgets 12 "
                              "--json" +
                              extra);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 1);
  return j[0];
}

// What Kernel Tuner's T4 results schema (kernel_tuner/schema/T4/1.0.0/results-schema.json)
// requires, restated as checks: the schema belongs to Kernel Tuner and is not part of this
// project, and tests fetch nothing, so the test spells out each rule of it here. An item's
// required fields: configuration (object), times (object), invalidity (one of six words),
// correctness (number); the optional ones have the schema's types.
void check_t4_schema(const nlohmann::json& doc) {
  REQUIRE(doc.is_object());
  REQUIRE(doc["schema_version"].is_string());
  CHECK(std::regex_match(doc["schema_version"].get<std::string>(),
                         std::regex("^[0-9]+.[0-9]+.[0-9]+$")));
  REQUIRE(doc["results"].is_array());
  const std::set<std::string> classes = {"timeout",     "compile",     "runtime",
                                         "correctness", "constraints", "correct"};
  for (const auto& item : doc["results"]) {
    INFO(item.dump());
    REQUIRE(item.is_object());
    CHECK(item.at("configuration").is_object());
    REQUIRE(item.at("times").is_object());
    CHECK(classes.count(item.at("invalidity").get<std::string>()));
    CHECK(item.at("correctness").is_number());
    if (item.contains("timestamp")) CHECK(item["timestamp"].is_string());
    if (item.contains("objectives")) CHECK(item["objectives"].is_array());
    for (const char* number : {"compilation_time", "framework", "search_algorithm", "validation"}) {
      if (item["times"].contains(number)) CHECK(item["times"][number].is_number());
    }
    if (item["times"].contains("runtimes")) CHECK(item["times"]["runtimes"].is_array());
    if (!item.contains("measurements")) continue;
    REQUIRE(item["measurements"].is_array());
    for (const auto& m : item["measurements"]) {
      REQUIRE(m.is_object());
      if (m.contains("name")) CHECK(m["name"].is_string());
      if (m.contains("unit")) CHECK(m["unit"].is_string());
      if (m.contains("value")) {
        CHECK((m["value"].is_number() || m["value"].is_string() || m["value"].is_array()));
      }
    }
  }
}

}  // namespace

TEST_CASE("search-eval replays a Kernel Tuner cache file", "[cli][recording]") {
  const auto j = search_eval(kCache);
  CHECK(j["space_size"] == 48);
  CHECK(j["valid"] == 40);
  CHECK(j["problem"]["shape"] == nlohmann::json{{"m", 64}, {"n", 64}, {"k", 64}});
  // The fastest: WG 32, VEC 2, unrolled, row layout (position 0 of LAYOUT).
  CHECK(j["optimum"] == nlohmann::json{{"LAYOUT", 0}, {"UNROLL", 1}, {"VEC", 2}, {"WG", 32}});
  CHECK(j["optimum_ms"].get<double>() == Approx(0.16));
  CHECK(j["strategies"].size() == 2);
}

TEST_CASE("search-eval replays a gzipped and a cut-short Kernel Tuner cache", "[cli][recording]") {
  const std::string dir = test::temp_dir("kt-cli");
  const std::string text = read_text_file(kCache);
  // Cut in the middle of the 31st entry line: 30 entries are whole.
  size_t pos = text.find("\"cache\"");
  for (int line = 0; line < 31; ++line) pos = text.find('\n', pos) + 1;
  const std::string cut = dir + "/cut.json";
  write_file_atomic(cut, text.substr(0, pos + 40));
  auto r = run_gemmtune("search-eval --replay " + cut + " --strategies random --seeds 2 " +
                        "--max-evals 5 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)[0]["space_size"] == 30);
  CHECK(r.err.find("read up to its last whole entry") != std::string::npos);
#ifdef GEMMTUNE_HAVE_ZLIB
  const std::string gz = dir + "/cache.json.gz";
  gzFile f = gzopen(gz.c_str(), "wb");
  REQUIRE(f);
  gzwrite(f, text.data(), unsigned(text.size()));
  gzclose(f);
  CHECK(search_eval(gz)["space_size"] == 48);
#endif
  // Not a recording of any kind: a one-line error and exit 2.
  write_file_atomic(dir + "/other.json", "{\"entries\": []}\n");
  r = run_gemmtune("search-eval --replay " + dir + "/other.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("neither a gemmtune journal, a Kernel Tuner cache file") != std::string::npos);
}

TEST_CASE("search-eval replays T4 results", "[cli][recording]") {
  const auto j = search_eval(kT4);
  CHECK(j["space_size"] == 16);
  CHECK(j["valid"] == 10);
  CHECK(j["optimum"] ==
        nlohmann::json{{"block_size_x", 64}, {"block_size_y", 2}, {"use_shared", 1}});
}

TEST_CASE("export -f t4 writes a database's entries as T4 results", "[cli][recording]") {
  const std::string dir = test::temp_dir("t4-db");
  const auto r = run_gemmtune("export " + kDb + " -f t4 -o " + dir + "/db.t4.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = read_json_file(dir + "/db.t4.json");
  check_t4_schema(doc);
  const auto db = read_json_file(kDb);
  REQUIRE(doc["results"].size() == db["entries"].size());
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    const auto& item = doc["results"][i];
    const auto& entry = db["entries"][i];
    CHECK(item["configuration"] == entry["parameters"]);
    CHECK(item["invalidity"] == "correct");
    CHECK(item["measurements"][0]["name"] == "time");
    CHECK(item["measurements"][0]["value"] == entry["time"]["median_ms"]);
  }
}

TEST_CASE("export -f t4 writes a journal's results, and search-eval replays them alike",
          "[cli][recording]") {
  const std::string dir = test::temp_dir("t4-journal");
  // Some failures of every kind, to see their classes come through.
  int n = 0;
  const Status kinds[] = {Status::kCompileFailed, Status::kRunFailed, Status::kInvalid,
                          Status::kWrongResult, Status::kTimeout};
  const std::string journal = test::write_replay(dir, {{256, 256, 256}}, [&](const Result& r) {
    const int i = n++;
    if (i % 7 != 3) return r;
    return Result::failure(r.config, kinds[(i / 7) % 5], "failed");
  });
  auto r = run_gemmtune("export " + journal + " -f t4 -o " + dir + "/j.t4.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = read_json_file(dir + "/j.t4.json");
  check_t4_schema(doc);
  std::map<std::string, int> classes;
  for (const auto& item : doc["results"]) ++classes[item["invalidity"].get<std::string>()];
  for (const char* c : {"correct", "compile", "runtime", "constraints", "correctness", "timeout"}) {
    CHECK(classes[c] > 0);
  }
  const auto from_journal = search_eval(journal);
  const auto from_t4 = search_eval(dir + "/j.t4.json");
  CHECK(from_t4["space_size"] == from_journal["space_size"]);
  CHECK(from_t4["valid"] == from_journal["valid"]);
  CHECK(from_t4["optimum"] == from_journal["optimum"]);
  CHECK(from_t4["problem"]["shape"] == from_journal["problem"]["shape"]);
  // A journal exports only as T4; other formats take a database.
  r = run_gemmtune("export " + journal + " -f csv");
  CHECK(r.exit_code == 2);
}

TEST_CASE("search-eval reports the fraction reached after simulated seconds",
          "[cli][search-eval]") {
  // An exhaustive run measures all 48 configurations; with the measuring process building each
  // in turn it needs the sum of every recorded build and measurement.
  const auto cache = read_json_file(kCache)["cache"];
  double sequential_s = 0;
  for (const auto& [key, e] : cache.items()) {
    sequential_s += e["compile_time"].get<double>() / 1e3;
    if (e["time"].is_number()) sequential_s += 3 * e["time"].get<double>() / 1e3;
  }
  auto run = [&](int processes) {
    const auto r = run_gemmtune("search-eval --replay " + kCache +
                                " --strategies exhaustive --seeds 1 --max-evals 48 " +
                                "--json --compile-processes " + std::to_string(processes) +
                                fmt::format(" --times {},{},{}", 0.75 * sequential_s,
                                            0.999 * sequential_s, 1.001 * sequential_s));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out)[0];
    CHECK(j["settings"]["compile_processes"] == processes);
    return j["strategies"][0]["times"];
  };
  const auto alone = run(0);
  REQUIRE(alone.size() == 3);
  CHECK(alone[0]["runs_ended"] == 0);
  CHECK(alone[1]["runs_ended"] == 0);
  CHECK(alone[2]["runs_ended"] == 1);
  CHECK(alone[2]["mean_fraction"].get<double>() == Approx(1.0));
  // Two processes build side by side: the whole space is done well before.
  const auto pooled = run(2);
  CHECK(pooled[0]["runs_ended"] == 1);
  CHECK(pooled[0]["mean_fraction"].get<double>() == Approx(1.0));
  const auto r = run_gemmtune("search-eval --replay " + kCache + " --times 0");
  CHECK(r.exit_code == 2);
}

}  // namespace gemmtune_tests::tools_test_cmd_search_eval_interop
