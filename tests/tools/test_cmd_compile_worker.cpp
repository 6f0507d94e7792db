// SPDX-License-Identifier: Apache-2.0
// The compile pool end to end: `gemmtune compile-worker` builds what it is sent into the binary
// cache, and `gemmtune search --compile-processes P` measures exactly what a search without the
// pool measures, loading from the cache what the pool built.
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "src/core/json_util.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_compile_worker {

using namespace gemmtune;
using test::run_gemmtune;

namespace {

// Binaries in a cache folder (they lie in a subfolder).
size_t cache_files(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec)) {
    n += e.path().extension() == ".bin";
  }
  return n;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

// Configuration → status of every evaluation of a journal.
std::map<std::string, std::string> statuses(const std::string& journal) {
  std::map<std::string, std::string> out;
  for (const auto& e : read_journal(journal).entries) {
    out[to_string(e.result.config)] = to_string(e.result.status);
  }
  return out;
}

bool have_device() {
  if (test::test_device().device) return true;
  WARN("no OpenCL device: skipped");
  return false;
}

}  // namespace

TEST_CASE("compile-worker builds each configuration it reads into the cache",
          "[compile-pool][cli][device]") {
  if (!have_device()) return;
  const std::string dir = test::temp_dir("compile-worker");
  test::KernelCase problem = test::problem_of("xgemm", {32, 32, 32}, Order::kRowMajor, "NN");
  const auto small =
      test::small_config(*test::make_test_evaluator(test::quick_evaluator_options()), "xgemm");
  Configuration invalid = small;
  invalid["MWG"] = 24;  // not a multiple of MDIMC * VWM
  const nlohmann::json pj = problem_json(problem, problem.kernel);
  {
    std::ofstream requests(dir + "/requests.jsonl");
    requests << nlohmann::json{{"problem", pj}, {"config", configuration_to_json(small)}}.dump()
             << "\n"
             << nlohmann::json{{"problem", pj}, {"config", configuration_to_json(invalid)}}.dump()
             << "\nnot json\n";
  }
  const std::string cmd =
      "compile-worker --cache-dir " + dir + "/cache < " + dir + "/requests.jsonl";
  auto r = run_gemmtune(cmd);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto answers = json_lines(r.out);
  REQUIRE(answers.size() == 4);
  CHECK(answers[0]["ready"] == true);
  // The builds run below the search's own priority (by 10 nice steps, at most to 19), so that
  // they never keep the strategy or the measuring lanes waiting for a core.
  errno = 0;
  const int own = ::getpriority(PRIO_PROCESS, 0);
  REQUIRE(errno == 0);
  CHECK(answers[0]["nice"].get<int>() == std::min(19, own + 10));
  CHECK(answers[1]["outcome"] == "built");
  // Where the build's time went: most of it in the driver, some in the binary cache.
  const double ms = answers[1]["ms"], driver = answers[1]["driver_ms"];
  const double cache = answers[1]["cache_ms"];
  CHECK(driver > 0);
  CHECK(cache > 0);
  CHECK(driver + cache <= ms);
  CHECK(answers[2]["outcome"] == "invalid");
  CHECK(answers[3]["outcome"] == "failed");
  CHECK(answers[3]["message"].get<std::string>().find("parse") != std::string::npos);
  CHECK(cache_files(dir + "/cache") == 1);

  // A second worker finds the build in the cache.
  r = run_gemmtune(cmd);
  REQUIRE(r.exit_code == 0);
  answers = json_lines(r.out);
  REQUIRE(answers.size() == 4);
  CHECK(answers[1]["outcome"] == "cached");
  CHECK(answers[1]["driver_ms"].get<double>() > 0);  // a program made from the entry
  CHECK(cache_files(dir + "/cache") == 1);
}

TEST_CASE("a search with compile processes measures what one without them measures",
          "[compile-pool][cli][search][device]") {
  if (!have_device()) return;
  const std::string dir = test::temp_dir("compile-pool");
  const std::string common =
      "search --kernel xgemm --space ci --strategy exhaustive -s 32x32x32 --no-db ";
  auto r = run_gemmtune(common + "--compile-processes 0 --cache-dir " + dir + "/plain-cache -o " +
                        dir + "/plain.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  r = run_gemmtune(common + "--compile-processes 2 --cache-dir " + dir + "/pool-cache -o " + dir +
                   "/pooled.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("per minute") != std::string::npos);  // the figure of record stays

  // The same configurations, with the same outcomes.
  const auto plain = statuses(dir + "/plain.journal.jsonl");
  REQUIRE(plain.size() > 3);
  CHECK(statuses(dir + "/pooled.journal.jsonl") == plain);
  CHECK(read_json_file(dir + "/plain.json")["metadata"]["compile_pool"].is_null());

  // The pool built into the search's cache, and the measurement loaded every one of those builds
  // from there instead of compiling it again.
  const auto pooled = read_json_file(dir + "/pooled.json");
  const auto stats = pooled["metadata"]["compile_pool"];
  INFO(stats.dump());
  CHECK(stats["starts"] == 2);
  CHECK(stats["stopped"] == false);
  const size_t built = stats["built"];
  CHECK(built >= 1);
  CHECK(cache_files(dir + "/pool-cache") >= built);
  size_t loaded = 0;
  for (const auto& e : read_journal(dir + "/pooled.journal.jsonl").entries) {
    loaded += e.result.binary_cached;
  }
  CHECK(loaded == built + stats["cached"].get<size_t>());
  // Where the time went: the workers' builds (most of it in the driver), the measurement's waits
  // for them and its loads of what they built, which each result's steps include.
  const double build_s = stats["build_s"], driver_s = stats["driver_s"];
  CHECK(build_s > 0);
  CHECK(driver_s > 0);
  CHECK(driver_s <= build_s);
  CHECK(stats["wait_s"].get<double>() >= 0);
  const double load_s = stats["load_s"];
  CHECK(load_s > 0);
  double program_s = 0;
  for (const auto& e : read_journal(dir + "/pooled.journal.jsonl").entries) {
    program_s += e.result.steps.program_ms / 1e3;
    if (e.result.ok()) CHECK(e.result.steps.timing_ms > 0);
  }
  CHECK(program_s >= load_s);
  CHECK(r.err.find("compile pool: " + std::to_string(built) + " built") != std::string::npos);
  CHECK(pooled["metadata"]["evaluator"].get<std::string>().find("with 2 compile processes") !=
        std::string::npos);
}

TEST_CASE("a search builds configurations that differ only in a runtime parameter once",
          "[compile-pool][cli][search][device][runtime]") {
  if (!have_device()) return;
  // The ci space in its order varies GROUPM (xgemm_fast's runtime parameter) within 32
  // configurations: each pair that differs only in its argued values (4, 8) is one binary; 1 is
  // built in.
  const std::string dir = test::temp_dir("compile-pool-runtime");
  const auto r = run_gemmtune(
      "search --kernel xgemm_fast --space ci --strategy exhaustive -s 32x32x32 --max-evals 32 "
      "--no-db --compile-processes 2 --cache-dir " +
      dir + "/cache -o " + dir + "/s.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::set<std::string> builds;
  size_t verified = 0;
  for (const auto& e : read_journal(dir + "/s.journal.jsonl").entries) {
    if (!e.result.ok()) continue;
    ++verified;
    Configuration c = e.result.config;
    if (c.at("GROUPM") != 1) c.erase("GROUPM");
    builds.insert(to_string(c));
  }
  // The budget counts the strategy's proposals; runtime siblings of measured configurations,
  // measured while a build was under way, come beside them (as many as the timing allowed).
  const auto results = read_json_file(dir + "/s.json");
  const size_t siblings = results["metadata"]["runtime_siblings"];
  CHECK(results["results"][0]["runtime_siblings"] == siblings);
  CHECK(verified == 32 + siblings);
  CHECK(results["results"][0]["evaluations"] == verified);
  CHECK(builds.size() < verified);
  CHECK(cache_files(dir + "/cache") == builds.size());
  const auto stats = results["metadata"]["compile_pool"];
  INFO(stats.dump());
  CHECK(stats["built"].get<size_t>() + stats["cached"].get<size_t>() <= builds.size());
  CHECK((r.out.find("runtime siblings") != std::string::npos) == (siblings > 0));
}

TEST_CASE("bad compile-processes settings are refused with one line",
          "[compile-pool][cli][search]") {
  const std::string dir = test::temp_dir("compile-pool");
  auto one_line_error = [](const test::CommandResult& r, const std::string& what) {
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find(what) != std::string::npos);
  };
  one_line_error(
      run_gemmtune("search -s 32x32x32 --compile-processes -1 --no-db -o " + dir + "/a.json"),
      "--compile-processes");
  one_line_error(
      run_gemmtune("search -s 32x32x32 --compile-processes x --no-db -o " + dir + "/a.json"),
      "--compile-processes");
  one_line_error(run_gemmtune("search --replay " + dir + "/none.jsonl --compile-processes 1 -o " +
                              dir + "/a.json"),
                 "a replay builds nothing");
  if (have_device()) {
    one_line_error(run_gemmtune("search -s 32x32x32 --compile-processes 2 --cache-dir none "
                                "--no-db -o " +
                                dir + "/a.json"),
                   "--cache-dir none");
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/a.json"));
  CHECK_FALSE(std::filesystem::exists(dir + "/a.journal.jsonl"));
}

TEST_CASE("bayes keeps the compile processes busy when builds outlast measurements",
          "[compile-pool][cli][search][device][bayes]") {
  if (!have_device()) return;
  const std::string dir = test::temp_dir("compile-pool-bayes");
  // Builds on the CPU device take far longer than measuring a 32³ GEMM.
  const std::string common =
      "search --kernel xgemm --space ci --strategy bayes -s 32x32x32 --max-evals 14 --no-db "
      "--compile-processes 2 ";
  // The default batch follows the pace: as many as two processes take (one build each in flight
  // and one waiting, plus the one measured).
  auto r = run_gemmtune(common + "--cache-dir " + dir + "/cache1 -o " + dir + "/default.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto paced = read_json_file(dir + "/default.json")["results"][0];
  CHECK(paced["max_in_flight"] == 5);
  CHECK(paced["evaluations"] == 14);
  CHECK(r.err.find("up to 5 in flight of 5 asked") != std::string::npos);
  // A fixed batch holds whatever the pool could take.
  r = run_gemmtune(common + "--cache-dir " + dir + "/cache2 --strategy-option bayes.batch=2 -o " +
                   dir + "/fixed.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_json_file(dir + "/fixed.json")["results"][0]["max_in_flight"] == 2);
  CHECK(r.err.find("up to 2 in flight of 5 asked") != std::string::npos);
}

}  // namespace gemmtune_tests::tools_test_cmd_compile_worker
