// SPDX-License-Identifier: Apache-2.0
// Resuming and the files a search leaves, through the gemmtune binary: a moved journal resumes
// where it lies, a shard option that does not match the journal is refused, a sharded --db says
// where its entries go, a refused search leaves no empty folder, and a database write removes the
// temporary files of killed writers.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "src/core/json_util.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cli_resume_outputs {

using namespace gemmtune;
using test::exists;
using test::kDb;
using test::line_count;
using test::run_gemmtune;
using test::run_gemmtune_in;
using test::temp_dir;
using test::write_replay;
using test::write_text;

namespace fs = std::filesystem;

namespace {

// The pid of a process that has ended (a child that exited at once, reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

void make_old(const std::string& path) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(2));
}

}  // namespace

TEST_CASE("a journal moved with its folder resumes there", "[cli][search][resume]") {
  const auto dir = temp_dir("resume-moved");
  const std::string replay = write_replay(dir);
  REQUIRE(run_gemmtune("-q search --replay " + replay + " --max-evals 3 --no-db --out " + dir +
                       "/first")
              .exit_code == 0);
  fs::rename(dir + "/first", dir + "/moved");
  const std::string journal = dir + "/moved/search-xgemm.journal.jsonl";
  REQUIRE(exists(journal));
  const auto r = run_gemmtune("-q search --resume " + journal + " --max-evals 5");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(exists(dir + "/first"));
  const auto results = read_json_file(dir + "/moved/search-xgemm.json");
  CHECK(results["results"].at(0)["evaluations"] == 5);
}

TEST_CASE("a shard option that does not match the journal is refused", "[cli][search][shard]") {
  const auto dir = temp_dir("resume-shard");
  const std::string replay = write_replay(dir, {{256, 256, 256}, {128, 128, 128}});
  REQUIRE(run_gemmtune("-q search --replay " + replay + " --max-evals 2 --no-db -o " + dir +
                       "/whole.json")
              .exit_code == 0);
  const std::string whole = dir + "/whole.journal.jsonl";
  const std::string before = read_text_file(whole);
  auto r = run_gemmtune("-q search --resume " + whole + " --shard 1/2");
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("unsharded") && Catch::Contains("--shard 1/2"));
  CHECK_FALSE(exists(dir + "/whole.journal-shard-1of2.jsonl"));
  CHECK_FALSE(exists(dir + "/whole-shard-1of2.journal.jsonl"));
  CHECK(read_text_file(whole) == before);

  REQUIRE(run_gemmtune("-q search --replay " + replay + " --max-evals 2 --no-db --shard 1/2 -o " +
                       dir + "/part.json")
              .exit_code == 0);
  const std::string part = dir + "/part-shard-1of2.journal.jsonl";
  r = run_gemmtune("-q search --resume " + part + " --shard 0/2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("shard 1/2") && Catch::Contains("--shard 0/2"));
  r = run_gemmtune("-q search --resume " + part + " --shard 1/2 --max-evals 3");
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("a sharded search says which database it writes", "[cli][search][shard][database]") {
  const auto dir = temp_dir("shard-db");
  const std::string replay = write_replay(dir);
  const auto r = run_gemmtune("search --replay " + replay + " --max-evals 2 --shard 0/2 --db " +
                              dir + "/tuned.json -o " + dir + "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains(dir + "/tuned-shard-0of2.json") &&
                        Catch::Contains("not " + dir + "/tuned.json") &&
                        Catch::Contains("db merge"));
  CHECK(exists(dir + "/tuned-shard-0of2.json"));
  CHECK_FALSE(exists(dir + "/tuned.json"));
}

TEST_CASE("a refused search leaves no empty folder", "[cli][search]") {
  const auto dir = temp_dir("refused-folder");
  const std::string replay = write_replay(dir);
  // kDb belongs to another device than the recording: refused before anything is measured.
  auto r = run_gemmtune("-q search --replay " + replay + " --max-evals 2 --db " + kDb + " --out " +
                        dir + "/out");
  CHECK(r.exit_code == 2);
  CHECK_FALSE(exists(dir + "/out"));
  // The default folder under gemmtune-results/searches as well.
  r = run_gemmtune_in(dir, "", "-q search --replay " + replay + " --max-evals 2 --db " + kDb);
  CHECK(r.exit_code == 2);
  const bool left =
      fs::exists(dir + "/gemmtune-results/searches") && !fs::is_empty(dir + "/gemmtune-results/searches");
  CHECK_FALSE(left);
}

TEST_CASE("a database write removes the temporary files of killed writers", "[cli][database]") {
  const auto dir = temp_dir("stale-temps");
  const std::string replay = write_replay(dir);
  const std::string db = dir + "/tuned.json";
  const std::string dead = db + ".tmp." + std::to_string(dead_pid()) + ".0";
  const std::string recent = db + ".tmp." + std::to_string(dead_pid()) + ".3";
  const std::string alive = db + ".tmp." + std::to_string(::getpid()) + ".1";
  const std::string other = dir + "/other.json.tmp." + std::to_string(dead_pid()) + ".0";
  for (const auto& f : {dead, recent, alive, other}) write_text(f, "{");
  for (const auto& f : {dead, alive, other}) make_old(f);
  const auto r = run_gemmtune("-q search --replay " + replay + " --max-evals 2 --db " + db +
                              " -o " + dir + "/out.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(exists(db));
  CHECK_FALSE(exists(dead));  // a dead writer's, old: removed
  CHECK(exists(recent));      // too recent to be sure
  CHECK(exists(alive));       // its writer runs
  CHECK(exists(other));       // another file's
}

TEST_CASE("merge and compare name a different driver", "[cli][database][compare]") {
  const auto dir = temp_dir("driver-differs");
  const auto newer = test::db_copy(dir, "newer.json", [](nlohmann::json& j) {
    j["device"]["driver_version"] = "9999.1";
    for (auto& e : j["entries"]) e["gflops"] = e["gflops"].get<double>() * 1.01;
  });
  auto r = run_gemmtune("compare " + kDb + " " + newer);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("driver '9999.1'") && Catch::Contains("3614.0"));
  r = run_gemmtune("db merge " + dir + "/merged.json " + kDb + " " + newer);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains(newer) && Catch::Contains("driver '9999.1'"));
}

TEST_CASE("export to CLBlast says how to get an entry it can use", "[cli][export]") {
  const auto dir = temp_dir("export-hint");
  // What a default search writes: xgemm_fast entries only.
  const auto fast = test::db_copy(dir, "fast.json", [](nlohmann::json& j) {
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& e : j["entries"]) {
      if (e["key"]["kernel"] == "xgemm_fast") kept.push_back(e);
    }
    j["entries"] = kept;
  });
  for (const std::string& format : {"clblast-json", "clblast-override"}) {
    const auto r = run_gemmtune("-q export " + fast + " -f " + format);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK_THAT(r.err,
               Catch::Contains("--kernel clblast-xgemm") && Catch::Contains("--kernel xgemm"));
  }
}

TEST_CASE("numeric options and stored timings are range-checked", "[cli][compare][search]") {
  const auto dir = temp_dir("range-checks");
  for (const std::string& sigmas : {"nan", "inf", "-1", "11"}) {
    INFO(sigmas);
    const auto r = run_gemmtune("compare " + kDb + " " + kDb + " --noise-sigmas " + sigmas);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--noise-sigmas"));
  }
  const std::string replay = write_replay(dir);
  for (const std::string& threads : {"0", "-2", "1.5"}) {
    INFO(threads);
    const auto r = run_gemmtune("search-eval --replay " + replay + " --threads " + threads);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--threads"));
  }
  const auto huge_cv = test::db_copy(
      dir, "cv.json", [](nlohmann::json& j) { j["entries"][1]["time"]["cv"] = 1e300; });
  const auto r = run_gemmtune("compare " + kDb + " " + huge_cv);
  CHECK(r.exit_code == 2);
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("entries[1].time.cv"));
}

}  // namespace gemmtune_tests::tools_test_cli_resume_outputs
