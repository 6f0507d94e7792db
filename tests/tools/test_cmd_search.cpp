// SPDX-License-Identifier: Apache-2.0
// The search and search-eval commands end to end: replay runs, interruption by SIGINT and SIGKILL
// with resumption, a search in which nothing passes, and (on the OpenCL device) kernels that
// hang, crash or fail.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search {

using namespace gemmtune;
using test::run_gemmtune;
using test::spawn_gemmtune;

namespace {

size_t count_results(const std::string& journal) {
  return test::count_journal_results(journal);
}

void wait_for_results(const std::string& journal, size_t n, double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  while (count_results(journal) < n) {
    REQUIRE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() <
            timeout_s);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Configurations journalled for the (single) shape, in order.
std::vector<std::string> journalled(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& e : read_journal(path).entries) out.push_back(to_string(e.result.config));
  return out;
}

}  // namespace

TEST_CASE("search on a replay writes the best and the journal", "[search][cli]") {
  const std::string dir = test::temp_dir("search-cli");
  const std::string replay = test::write_replay(dir);
  const auto r = run_gemmtune("search --replay " + replay + " --strategy anneal --max-evals 25 " +
                              "--seed 3 -o " + dir + "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("per minute") != std::string::npos);
  // The summary line counts the verified results apart from every measured one.
  std::smatch m;
  const std::regex summary(R"((\d+) configurations measured in .* per minute; (\d+) verified: )");
  REQUIRE(std::regex_search(r.out, m, summary));
  CHECK(std::stoi(m[1]) == 25);
  CHECK(std::stoi(m[2]) >= 1);
  CHECK(std::stoi(m[2]) <= 25);
  const auto out = read_json_file(dir + "/out.json");
  CHECK(out["metadata"]["verified_per_minute"].get<double>() > 0);
  CHECK(out["metadata"]["strategy"] == "anneal");
  CHECK(out["metadata"]["seed"] == 3);
  CHECK(out["metadata"]["device"]["id"] == "synthetic");
  REQUIRE(out["results"].size() == 1);
  CHECK(out["results"][0]["evaluations"] == 25);
  CHECK(out["results"][0]["best"]["status"] == "ok");
  // The journal sits beside the output and holds every evaluation.
  CHECK(count_results(dir + "/out.journal.jsonl") == 25);

  // The same seed gives the same sequence.
  const auto again =
      run_gemmtune("search --replay " + replay + " --strategy anneal --max-evals 25 --seed 3 -o " +
                   dir + "/again.json");
  REQUIRE(again.exit_code == 0);
  CHECK(journalled(dir + "/again.journal.jsonl") == journalled(dir + "/out.journal.jsonl"));

  // A journal is never silently mixed with another run.
  const auto clash =
      run_gemmtune("search --replay " + replay + " --max-evals 5 -o " + dir + "/out.json");
  CHECK(clash.exit_code == 2);
  CHECK(clash.err.find("--resume") != std::string::npos);
}

TEST_CASE("a journal is resumed only on the device that recorded it", "[search][cli][resume]") {
  const std::string dir = test::temp_dir("search-cli");
  const std::string replay = test::write_replay(dir);
  // The same recording, claimed by another device.
  const std::string other = dir + "/other.jsonl";
  {
    std::ifstream in(replay);
    std::ofstream out(other);
    std::string line;
    std::getline(in, line);
    auto header = nlohmann::json::parse(line);
    header["device"]["id"] = "other-gpu";
    out << header.dump() << "\n" << in.rdbuf();
  }
  const std::string journal = dir + "/out.journal.jsonl";
  REQUIRE(run_gemmtune("search --replay " + replay + " --max-evals 5 -o " + dir + "/out.json")
              .exit_code == 0);
  const auto r = run_gemmtune("search --resume " + journal + " --replay " + other);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("recorded on synthetic, not on the selected device other-gpu") !=
        std::string::npos);
  CHECK(count_results(journal) == 5);  // nothing appended
  const auto same = run_gemmtune("search --resume " + journal + " --max-evals 8");
  INFO(same.err);
  CHECK(same.exit_code == 0);
  CHECK(count_results(journal) == 8);
}

TEST_CASE("search rejects bad input with one line", "[search][cli]") {
  const std::string dir = test::temp_dir("search-cli");
  const std::string replay = test::write_replay(dir);
  auto r = run_gemmtune("search --replay " + replay + " --strategy-option bayes.foo=1 -o " + dir +
                        "/a.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("has no option 'foo'") != std::string::npos);
  r = run_gemmtune("search --replay " + replay + " --strategy nope -o " + dir + "/b.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown strategy 'nope'") != std::string::npos);
  r = run_gemmtune("search --replay " + replay + " -s 100x100x100 -o " + dir + "/c.json");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("no recording of 100x100x100") != std::string::npos);
  r = run_gemmtune("search --replay " + dir + "/none.jsonl -o " + dir + "/d.json");
  CHECK(r.exit_code == 2);
  for (const char* factor : {"0.5", "1", "-2", "x"}) {
    INFO(factor);
    r = run_gemmtune("search --replay " + replay + " --stop-above-best " + factor + " -o " + dir +
                     "/e.json");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--stop-above-best") != std::string::npos);
    CHECK(test::line_count(r.err) == 1);
  }
}

TEST_CASE("a search stopped by SIGINT or SIGKILL resumes without measuring twice",
          "[search][cli][resume]") {
  for (const int sig : {SIGINT, SIGKILL}) {
    INFO("signal " << sig);
    const std::string dir = test::temp_dir("search-kill");
    const std::string replay = test::write_replay(dir);
    const std::string journal = dir + "/out.journal.jsonl";
    const pid_t pid =
        spawn_gemmtune({"search", "--replay", replay, "--replay-delay-ms", "40", "--strategy",
                        "bayes", "--max-evals", "30", "--seed", "9", "-o", dir + "/out.json"},
                       dir);
    wait_for_results(journal, 6, 60);
    ::kill(pid, sig);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const auto before = journalled(journal);
    REQUIRE(before.size() >= 6);
    REQUIRE(before.size() < 30);
    if (sig == SIGINT) {
      // Stopped cleanly: results written, the way to continue printed, and 128 + SIGINT as the
      // exit status so that a script can tell a stopped search from a finished one.
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 128 + SIGINT);
      const auto out = read_json_file(dir + "/out.json");
      CHECK(out["metadata"]["complete"] == false);
      std::ifstream err(dir + "/bg.err");
      const std::string text((std::istreambuf_iterator<char>(err)), {});
      CHECK(text.find("--resume " + journal) != std::string::npos);
    } else {
      CHECK(WIFSIGNALED(status));
    }
    const auto r = run_gemmtune("search --resume " + journal);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto after = journalled(journal);
    CHECK(after.size() == 30);
    CHECK(std::set<std::string>(after.begin(), after.end()).size() == 30);    // none twice
    for (size_t i = 0; i < before.size(); ++i) CHECK(after[i] == before[i]);  // none lost
    const auto out = read_json_file(dir + "/out.json");
    CHECK(out["metadata"]["complete"] == true);
    CHECK(out["results"][0]["resumed"] == before.size());
    CHECK(out["results"][0]["measured"] == 30 - before.size());
  }
}

TEST_CASE("search-eval compares strategies on a replay", "[search][cli]") {
  const std::string dir = test::temp_dir("search-eval");
  const std::string replay = test::write_replay(dir);
  auto r = run_gemmtune("search-eval --replay " + replay +
                        " --strategies bayes,random --seeds 4 --max-evals 20 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 1);
  REQUIRE(j[0]["strategies"].size() == 2);
  CHECK(j[0]["strategies"][0]["strategy"] == "bayes");
  CHECK(j[0]["strategies"][0]["thresholds"].size() == 3);
  CHECK(j[0]["strategies"][0]["budgets"].size() == 2);  // 10 and 20 fit in 20 evaluations
  r = run_gemmtune("search-eval --replay " + replay +
                   " --strategies random --seeds 2 --max-evals 10");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Mean fraction of the optimum") != std::string::npos);
  r = run_gemmtune("search-eval --replay " + replay + " --strategies random,bogus");
  CHECK(r.exit_code == 2);
}

// ---- on the OpenCL device (PoCL in CI) ----

TEST_CASE("a search survives kernels that hang and crash", "[search][cli][device]") {
  const std::string dir = test::temp_dir("search-faulty");
  const auto r =
      run_gemmtune("--templates " + test::source_path("tests/data") +
                   " search --kernel faulty --space ci --strategy exhaustive " +
                   "-s 16x16x16 --eval-timeout 5 --cache-dir none --no-db -o " + dir + "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::map<int64_t, std::set<std::string>> status_by_fault;
  for (const auto& e : read_journal(dir + "/out.journal.jsonl").entries) {
    status_by_fault[e.result.config.at("FAULT")].insert(to_string(e.result.status));
  }
  CHECK(status_by_fault[0] == std::set<std::string>{"ok"});
  CHECK(status_by_fault[1] == std::set<std::string>{"timeout"});
  CHECK(status_by_fault[2] == std::set<std::string>{"crashed"});
  CHECK(status_by_fault[3] == std::set<std::string>{"compile_failed"});
  CHECK(status_by_fault[4] == std::set<std::string>{"wrong_result"});
  const auto out = read_json_file(dir + "/out.json");
  CHECK(out["results"][0]["evaluations"] == 8);
  CHECK(out["results"][0]["best"]["config"]["FAULT"] == 0);
}

TEST_CASE("a search with a database starts from the entry of the nearest shape",
          "[search][cli][database][device]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("search-db-start");
  const std::string common =
      "search --kernel xgemm_direct --space ci --strategy random --in-process --compile-threads 1 "
      "--fresh --cache-dir " +
      dir + "/cache --db " + dir + "/db.json ";
  auto r = run_gemmtune(common + "-s 24x24x24 --max-evals 3 --seed 5 -o " + dir + "/a.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Database db = Database::load(dir + "/db.json");
  REQUIRE(db.entries().size() == 1);
  const std::string tuned = to_string(db.entries()[0].parameters);
  // Another shape of the family, another seed: its first measurement is the entry's
  // configuration, before the strategy proposes anything.
  r = run_gemmtune(common + "-s 20x20x20 --max-evals 2 --seed 9 -o " + dir + "/b.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto order = journalled(dir + "/b.journal.jsonl");
  REQUIRE_FALSE(order.empty());
  CHECK(order.front() == tuned);
  CHECK(read_json_file(dir + "/b.json")["results"][0]["warm_started"] == 1);
}

TEST_CASE("search --epilogue is journalled and taken back on --resume",
          "[epilogue][cli][search][device]") {
  const auto devices = test::run_gemmtune("devices --json");
  if (devices.exit_code != 0 || nlohmann::json::parse(devices.out).empty())
    return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("epilogue-search");
  const std::string out = dir + "/out.json", journal = dir + "/out.journal.jsonl";
  auto r = test::run_gemmtune(
      "search --kernel xgemm_fast --space ci --strategy random --max-evals 2 -s 9x7x5 "
      "--epilogue relu,bias --no-db --in-process --compile-threads 1 --cache-dir " +
      test::test_device().cache_dir + " -o " + out);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(journal);
  std::string header;
  REQUIRE(std::getline(in, header));
  CHECK(nlohmann::json::parse(header).at("settings").at("epilogue") == "bias,relu");

  // Resumed without --epilogue: the journal's applies, and its evaluations count as done.
  r = test::run_gemmtune("search --resume " + journal + " --max-evals 3 --json");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::ifstream written(out);
  const auto result = nlohmann::json::parse(written).at("results").at(0);
  CHECK(result.at("problem").at("epilogue") == "bias,relu");
  CHECK(result.at("resumed") == 2);
  CHECK(result.at("evaluations") == 3);
}

TEST_CASE("a search in which no configuration passes fails its check", "[cli][search]") {
  const std::string dir = test::temp_dir("cli-search-none");
  const std::string replay = test::write_replay(dir, {{256, 256, 256}}, [](const Result& r) {
    return Result::failure(r.config, Status::kWrongResult, "made up");
  });
  const auto r = run_gemmtune("search --replay " + replay +
                              " --strategy random --max-evals 5 -q -o " + dir + "/s.json");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("5 of 5 evaluations failed"));
  CHECK(test::line_count(r.err) == 1);
  CHECK(std::filesystem::exists(dir + "/s.json"));  // the outputs are written all the same
}

}  // namespace gemmtune_tests::tools_test_cmd_search
