// SPDX-License-Identifier: Apache-2.0
// scripts/slurm-shards.sh end to end, with a stand-in for sbatch that runs each job at once on
// this machine (array tasks one after the other, SLURM_ARRAY_TASK_ID set as Slurm sets it): the
// shards measure the whole recorded space once, the merge job writes the tuned database, and a
// second submission continues the shards' journals instead of measuring again.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "search/tuning/tuner.hpp"
#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "tests/search/strategies/synthetic_space.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_slurm_shards {

using namespace gemmtune;

namespace {

// A fake sbatch: logs its arguments, runs the job script with the given arguments (an array
// once per index), sends the jobs' output to a file and prints a job id, as --parsable does.
const char* kFakeSbatch = R"(#!/usr/bin/env bash
set -euo pipefail
echo "$*" >> "$FAKE_SBATCH_DIR/calls.txt"
array=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --array=*) array="${1#--array=}"; shift ;;
    -*) shift ;;
    *) break ;;
  esac
done
script="$1"; shift
if [[ -n "$array" ]]; then
  for ((i = ${array%-*}; i <= ${array#*-}; ++i)); do
    SLURM_ARRAY_TASK_ID=$i bash "$script" "$@" >> "$FAKE_SBATCH_DIR/jobs.log" 2>&1
  done
else
  bash "$script" "$@" >> "$FAKE_SBATCH_DIR/jobs.log" 2>&1
fi
echo 4242
)";

struct Run {
  int exit_code;
  std::string out;
};

Run run_script(const std::string& dir, const std::string& args) {
  const std::string out = dir + "/script.out";
  const std::string cmd = "PATH=" + dir + "/bin:$PATH FAKE_SBATCH_DIR=" + dir + " " +
                          test::source_path("scripts/slurm-shards.sh") + " " + args + " >" + out +
                          " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out);
  return {WEXITSTATUS(status), std::string(std::istreambuf_iterator<char>(in), {})};
}

}  // namespace

TEST_CASE("slurm-shards.sh runs one shard per array task and merges them", "[scripts][shard]") {
  const std::string dir = test::temp_dir("slurm-shards");
  std::filesystem::create_directories(dir + "/bin");
  {
    std::ofstream fake(dir + "/bin/sbatch");
    fake << kFakeSbatch;
  }
  ::chmod((dir + "/bin/sbatch").c_str(), 0755);
  const std::string replay =
      test::write_xgemm_cpu_replay(dir + "/replay.jsonl", {Shape{256, 256, 256}}, 11);
  const std::string args = "--shards 3 --out " + dir + "/out --gemmtune " GEMMTUNE_BINARY +
                           " -- --replay " + replay + " --strategy exhaustive";

  auto r = run_script(dir, args);
  INFO(r.out << read_text_file(dir + "/jobs.log"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("job array 4242") != std::string::npos);
  const std::string calls = read_text_file(dir + "/calls.txt");
  CHECK(calls.find("--array=0-2") != std::string::npos);
  CHECK(calls.find("--gres=gpu:1") != std::string::npos);
  CHECK(calls.find("--dependency=afterok:4242") != std::string::npos);

  // Each recorded configuration measured by exactly one shard.
  std::multiset<std::string> measured;
  for (int i = 0; i < 3; ++i) {
    const std::string journal =
        dir + "/out/search-shard-" + std::to_string(i) + "of3.journal.jsonl";
    for (const auto& e : read_journal(journal).entries) {
      measured.insert(to_string(e.result.config));
    }
  }
  const auto recorded = read_journal(replay).entries;
  std::multiset<std::string> whole;
  for (const auto& e : recorded) whole.insert(to_string(e.result.config));
  CHECK(measured == whole);

  // The merged database holds the recording's fastest configuration.
  REQUIRE(std::filesystem::exists(dir + "/out/tuned.json"));
  CHECK(std::filesystem::exists(dir + "/out/tuned-report.md"));
  const auto tuned = Database::load(dir + "/out/tuned.json");
  REQUIRE(tuned.entries().size() == 1);
  std::optional<Result> best;
  for (const auto& e : recorded) {
    if (better_result(e.result, best, e.problem.flops())) best = e.result;
  }
  REQUIRE(best);
  CHECK(tuned.entries().front().parameters == best->config);

  // Submitted again (a requeue, or after one shard failed): the shards continue their journals,
  // measuring nothing twice.
  r = run_script(dir, args);
  REQUIRE(r.exit_code == 0);
  size_t again = 0;
  for (int i = 0; i < 3; ++i) {
    again += read_journal(dir + "/out/search-shard-" + std::to_string(i) + "of3.journal.jsonl")
                 .entries.size();
  }
  CHECK(again == whole.size());

  // --dry-run submits nothing and prints both commands.
  const auto before = read_text_file(dir + "/calls.txt");
  r = run_script(dir, "--dry-run " + args);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("--array=0-2") != std::string::npos);
  CHECK(r.out.find("--dependency=afterok:ARRAY_JOB_ID") != std::string::npos);
  CHECK(read_text_file(dir + "/calls.txt") == before);
}

TEST_CASE("slurm-shards.sh refuses bad input before submitting", "[scripts][shard]") {
  const std::string dir = test::temp_dir("slurm-shards");
  for (const std::string bad :
       {"--shards 0 -- --kernel xgemm", "--shards x -- --kernel xgemm", "--shards 2",
        "--shards 2 -- --shard 1/2", "--shards 2 -- -o x.json", "--shards 2 --bogus"}) {
    INFO(bad);
    const auto r = run_script(dir, bad + " --gemmtune " GEMMTUNE_BINARY);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("slurm-shards: ") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir + "/calls.txt"));
  }
}

}  // namespace gemmtune_tests::scripts_test_slurm_shards
