// SPDX-License-Identifier: Apache-2.0
// Files, locks, signals and exit codes, end to end through the gemmtune binary: bad or busy files
// give one error line with the documented exit code (README, "Exit codes") and leave every input
// as it was; a stopped search keeps what it measured.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/file_lock.hpp"
#include "src/db/journal.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_reliability {

using namespace gemmtune;
using test::line_count;
using test::run_gemmtune;
using test::source_path;
using test::spawn_gemmtune;
using test::temp_dir;

namespace {

using test::db_copy;
using test::exists;
using test::kDb;
using test::write_replay;
using test::write_text;

size_t count_results(const std::string& journal) {
  return exists(journal) ? test::count_journal_results(journal) : 0;
}

void wait_for_results(const std::string& journal, size_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  while (count_results(journal) < n) {
    REQUIRE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 60);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int exit_status_of(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 07777;
}

// The database's text with the number of entries[0].gflops replaced by `literal` (JSON cannot
// hold 1e999 as a value, so it goes in as text).
std::string db_with_gflops_literal(const std::string& dir, const std::string& literal) {
  auto j = read_json_file(kDb);
  j["entries"][0]["gflops"] = 12345.5;
  std::string text = j.dump(2);
  text.replace(text.find("12345.5"), 7, literal);
  const std::string path = dir + "/overflow.json";
  write_text(path, text);
  return path;
}

}  // namespace

TEST_CASE("db merge holds the database lock: a writer's entry is not lost", "[cli][database]") {
  const auto dir = temp_dir("rel-merge-lock");
  const std::string db = dir + "/db.json";
  std::filesystem::copy_file(kDb, db);
  auto other = Database::load(kDb);
  auto extra = other.entries().at(0);
  extra.key.shape = Shape{512, 512, 512};
  other.put(extra, false);
  other.save(dir + "/other.json");

  auto late = other.entries().at(0);
  late.key.shape = Shape{640, 640, 640};
  pid_t pid = -1;
  {
    // This test is the writer (a search's Database::update) inside its read-modify-write.
    FileLock lock(database_lock_path(db), FileLock::Wait::kBlock, "test");
    pid = spawn_gemmtune({"-q", "db", "merge", db, db, dir + "/other.json"}, dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    int status = 0;
    CHECK(::waitpid(pid, &status, WNOHANG) == 0);  // the merge waits for the lock
    auto d = Database::load(db);
    d.put(late, false);
    d.save_locked(db);
  }
  CHECK(exit_status_of(pid) == 0);
  const auto merged = Database::load(db);
  CHECK(merged.find(late.key) != nullptr);   // written while the merge waited
  CHECK(merged.find(extra.key) != nullptr);  // from the other input
  CHECK(merged.entries().size() == 6);

  // An existing output that is not an input keeps its entries.
  const std::string out = dir + "/out.json";
  auto own = Database::load(kDb);
  auto only_in_out = own.entries().at(0);
  only_in_out.key.shape = Shape{768, 768, 768};
  own.put(only_in_out, false);
  own.save(out);
  const auto r = run_gemmtune("db merge " + out + " " + kDb);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Database::load(out).find(only_in_out.key) != nullptr);
}

TEST_CASE("a database keeps its mode, and a read-only one is refused", "[cli][database]") {
  const auto dir = temp_dir("rel-mode");
  const std::string db = dir + "/db.json";
  std::filesystem::copy_file(kDb, db);
  ::chmod(db.c_str(), 0640);
  auto r = run_gemmtune("db merge " + db + " " + db + " " + kDb);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(mode_of(db) == 0640);

  ::chmod(db.c_str(), 0444);
  const std::string before = read_text_file(db);
  r = run_gemmtune("db merge " + db + " " + db + " " + kDb);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(db) && Catch::Contains("read-only"));
  CHECK(read_text_file(db) == before);
  CHECK(mode_of(db) == 0444);
}

TEST_CASE("a journal belongs to one search at a time, and SIGTERM stops like SIGINT",
          "[cli][search][resume]") {
  const auto dir = temp_dir("rel-journal");
  const std::string replay = write_replay(dir);
  const std::string journal = dir + "/out.journal.jsonl";
  const std::string db = dir + "/db.json";
  const pid_t pid =
      spawn_gemmtune({"-q", "search", "--replay", replay, "--replay-delay-ms", "100", "--strategy",
                      "random", "--max-evals", "80", "--db", db, "-o", dir + "/out.json"},
                     dir);
  wait_for_results(journal, 2);

  // A second --resume of the running search's journal: busy, exit 5, nothing appended.
  auto r = run_gemmtune("-q search --resume " + journal + " -o " + dir + "/second.json");
  CHECK(r.exit_code == 5);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(journal) && Catch::Contains("in use"));
  // A second plain search into the same folder: the journal exists, exit 2.
  r = run_gemmtune("-q search --replay " + replay + " --max-evals 3 -o " + dir + "/out.json");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("already exists"));
  CHECK_FALSE(exists(dir + "/second.json"));

  ::kill(pid, SIGTERM);
  CHECK(exit_status_of(pid) == 128 + SIGTERM);
  const size_t measured = count_results(journal);
  CHECK(measured >= 2);
  CHECK(measured < 80);
  const std::string err = read_text_file(dir + "/bg.err");
  CHECK_THAT(err, Catch::Contains("SIGTERM") && Catch::Contains("--resume " + journal));
  CHECK(read_json_file(dir + "/out.json")["metadata"]["complete"] == false);
  // What was measured is in the database.
  REQUIRE(exists(db));
  CHECK(Database::load(db).entries().size() == 1);

  // The journal is free again: the search resumes and completes.
  r = run_gemmtune("-q search --resume " + journal);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_results(journal) == 80);
}

TEST_CASE("search checks --db and -o before measuring", "[cli][search][database]") {
  const auto dir = temp_dir("rel-prechecks");
  const std::string replay = write_replay(dir);
  std::filesystem::create_directories(dir + "/folder");
  write_text(dir + "/cut.json", read_text_file(kDb).substr(0, 400));
  write_text(dir + "/file.txt", "x");
  const std::string ro = dir + "/ro.json";
  {
    // A database of the replay's device, read-only.
    Database d;
    d.device.name = "synthetic GEMM-like space";
    d.save(ro);
    ::chmod(ro.c_str(), 0444);
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--db " + dir + "/folder", "is a folder"},
      {"--db " + kDb, "holds results of 'gfx1012'"},  // another device's database
      {"--db " + dir + "/cut.json", "not valid JSON"},
      {"--db " + ro, "read-only"},
      {"--db " + dir + "/file.txt/db.json", "not a folder"},
      {"--no-db -o " + dir + "/folder", "is a folder"},
      {"--no-db -o " + dir + "/file.txt/out.json", "not a folder"},
  };
  for (const auto& [args, why] : cases) {
    INFO(args);
    const std::string out = args.find(" -o ") == std::string::npos ? " -o " + dir + "/x.json" : "";
    const auto r = run_gemmtune("-q search --replay " + replay + " --max-evals 3 " + args + out);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(why));
    // Refused before the first evaluation: no journal was started.
    CHECK_FALSE(exists(dir + "/x.journal.jsonl"));
    CHECK_FALSE(exists(dir + "/folder.journal.jsonl"));
  }
  CHECK(read_text_file(kDb).find("gfx1012") != std::string::npos);
}

TEST_CASE("compare range-checks its inputs and refuses another device", "[cli][compare]") {
  const auto dir = temp_dir("rel-compare");
  const auto negative_cv =
      db_copy(dir, "cv.json", [](nlohmann::json& j) { j["entries"][1]["time"]["cv"] = -5.0; });
  auto r = run_gemmtune("compare " + kDb + " " + negative_cv);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(negative_cv) && Catch::Contains("entries[1].time.cv") &&
                        Catch::Contains("negative"));

  const auto other =
      db_copy(dir, "other.json", [](nlohmann::json& j) { j["device"]["name"] = "Other GPU"; });
  r = run_gemmtune("compare " + kDb + " " + other);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("different devices") && Catch::Contains("Other GPU") &&
                        Catch::Contains("--allow-other-device"));
  r = run_gemmtune("compare --allow-other-device " + kDb + " " + other);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("0 failing"));
}

TEST_CASE("a number that overflows is a bad file, not an internal error", "[cli][database]") {
  const auto dir = temp_dir("rel-overflow");
  const std::string bad = db_with_gflops_literal(dir, "1e999");
  const std::vector<std::string> commands = {
      "db show " + bad,
      "db merge " + dir + "/merged.json " + bad,
      "db lookup " + bad + " -m 64 -n 64 -k 64",
      "export " + bad + " -f csv",
      "report " + bad,
      "compare " + bad + " " + kDb,
  };
  for (const auto& c : commands) {
    INFO(c);
    const auto r = run_gemmtune("-q " + c);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(bad) && Catch::Contains("'gflops'") &&
                          Catch::Contains("1e999") && !Catch::Contains("internal"));
  }
  CHECK_FALSE(exists(dir + "/merged.json"));

  // search --db with such a database, and --resume / --replay of a journal holding one.
  const std::string replay = write_replay(dir);
  auto r = run_gemmtune("-q search --replay " + replay + " --max-evals 3 --db " + bad + " -o " +
                        dir + "/a.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("'gflops'") && Catch::Contains("1e999"));
  REQUIRE(
      run_gemmtune("-q search --replay " + replay + " --max-evals 3 --no-db -o " + dir + "/b.json")
          .exit_code == 0);
  const std::string journal = dir + "/b.journal.jsonl";
  std::string text = read_text_file(journal);
  const auto at = text.rfind("\"gflops\":");
  REQUIRE(at != std::string::npos);
  text.replace(at, text.find(',', at) - at, "\"gflops\":-1e999");
  write_text(journal, text);
  for (const std::string& c : {"search --resume " + journal,
                               "search --no-db --replay " + journal + " -o " + dir + "/c.json"}) {
    INFO(c);
    r = run_gemmtune("-q " + c);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains(journal) && Catch::Contains("'gflops'") &&
                          Catch::Contains("line 4"));
  }
}

TEST_CASE("entries that cannot be measurements are refused on load", "[cli][database]") {
  const auto dir = temp_dir("rel-entries");
  const std::vector<std::tuple<std::string, std::function<void(nlohmann::json&)>, std::string>>
      cases = {
          {"neg.json", [](nlohmann::json& j) { j["entries"][0]["gflops"] = -3.0; },
           "entries[0].gflops"},
          {"zero.json", [](nlohmann::json& j) { j["entries"][2]["time"]["median_ms"] = 0.0; },
           "entries[2].time.median_ms"},
          {"kernel.json", [](nlohmann::json& j) { j["entries"][0]["key"]["kernel"] = "sgemm_v9"; },
           "key.kernel 'sgemm_v9'"},
          {"param.json", [](nlohmann::json& j) { j["entries"][0]["parameters"]["BOGUS"] = 4; },
           "parameters.BOGUS"},
      };
  for (const auto& [name, edit, field] : cases) {
    INFO(name);
    const auto path = db_copy(dir, name, edit);
    for (const std::string& c :
         {"db show " + path, "db merge " + dir + "/m.json " + kDb + " " + path,
          "export " + path + " -f csv"}) {
      const auto r = run_gemmtune("-q " + c);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
      CHECK_THAT(r.err, Catch::Contains(path) && Catch::Contains(field));
    }
    CHECK_FALSE(exists(dir + "/m.json"));  // nothing merged, nothing passed on
  }
}

TEST_CASE("search-eval says when a recording is not the whole space", "[cli][search]") {
  const auto dir = temp_dir("rel-partial");
  const std::string replay = write_replay(dir);
  REQUIRE(run_gemmtune("-q search --replay " + replay +
                       " --strategy random --max-evals 30 --no-db -o " + dir + "/p.json")
              .exit_code == 0);
  const std::string sample = dir + "/p.journal.jsonl";
  auto r = run_gemmtune("search-eval --replay " + sample + " --seeds 2 --max-evals 5");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("random search") && Catch::Contains("--allow-partial"));
  r = run_gemmtune("-q search-eval --replay " + sample +
                   " --seeds 2 --max-evals 5 --strategies random --json --allow-partial");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)[0]["settings"]["whole_space"] == false);
}

TEST_CASE("a resumed search refuses problems its journal does not hold", "[cli][search][resume]") {
  const auto dir = temp_dir("rel-resume-problems");
  const std::string replay = write_replay(dir, {{256, 256, 256}, {128, 128, 128}});
  REQUIRE(run_gemmtune("-q search --replay " + replay + " -s 256x256x256 --max-evals 4 --no-db " +
                       "-o " + dir + "/a.json")
              .exit_code == 0);
  const std::string journal = dir + "/a.journal.jsonl";
  auto r = run_gemmtune("-q search --resume " + journal + " -s 128x128x128");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("shape 128x128x128") && Catch::Contains("--new-problems"));
  CHECK(count_results(journal) == 4);  // nothing measured
  r = run_gemmtune("-q search --resume " + journal + " -s 128x128x128 --new-problems");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(count_results(journal) == 8);
}

TEST_CASE("a search that finds no valid configuration exits 1", "[cli][search]") {
  const auto dir = temp_dir("rel-all-fail");
  const std::string replay = write_replay(dir, {{256, 256, 256}}, [](const Result& r) {
    return Result::failure(r.config, Status::kCompileFailed, "no");
  });
  const auto r = run_gemmtune("-q search --replay " + replay + " --max-evals 5 --db " + dir +
                              "/db.json -o " + dir + "/out.json");
  CHECK(r.exit_code == 1);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("no valid configuration for 256x256x256") &&
                        Catch::Contains("5 of 5"));
  CHECK(exists(dir + "/out.json"));  // the outputs are written all the same
  CHECK(count_results(dir + "/out.journal.jsonl") == 5);
}

TEST_CASE("a problem larger than the device's memory is refused before compiling",
          "[cli][search][device]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  const auto dir = temp_dir("rel-too-big");
  // Each matrix stays under the kernels' 2^31-element index limit (refused at parse time, exit
  // 2), but one matrix alone (8.5 GB) is beyond the device's largest allocation.
  const auto r = run_gemmtune("-q search -s 46000x46000x46000 --kernel xgemm --no-db -o " + dir +
                              "/out.json --cache-dir none");
  CHECK(r.exit_code == 3);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("46000x46000x46000") && Catch::Contains("GiB"));
  CHECK_FALSE(exists(dir + "/out.journal.jsonl"));
  // `run` refuses it the same way.
  const auto one =
      run_gemmtune("-q run --kernel xgemm -m 46000 -n 46000 -k 46000 --cache-dir none");
  CHECK(one.exit_code == 3);
  CHECK(line_count(one.err) == 1);
  CHECK_THAT(one.err, Catch::Contains("46000x46000x46000") && Catch::Contains("GiB"));
}

}  // namespace gemmtune_tests::tools_test_cli_reliability
