// SPDX-License-Identifier: Apache-2.0
// scripts/vs-peers-summary.py: a bench-vs-peers folder's suites summed up against the GPU-time
// targets, from bench-suite JSON plain or gzipped.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::scripts_test_vs_peers_summary {

using namespace gemmtune;

namespace {

// A bench-suite row: its ratios against cuBLAS and CLBlast, gemmtune's GPU and host time a call,
// and whether its configuration splits K with the reduce kernel.
nlohmann::json row(int64_t m, int64_t n, int64_t k, double vs_cublas, double call_vs_clblast,
                   double gpu_us, double host_us, bool split_k) {
  return {{"shape", {{"m", m}, {"n", n}, {"k", k}}},
          {"cublas_device_ratio", vs_cublas},
          {"library_cublas_device_ratio", vs_cublas},
          {"gpu_ratio", 2.0},
          {"ratio", call_vs_clblast},
          {"cublas_host_ms", 0.020},
          {"chosen", {{"parameters", {{"SPLITK", split_k ? 4 : 1}, {"KREDUCE", 0}}}}},
          {"gemmtune", {{"gpu", {{"median_ms", gpu_us / 1000}}}, {"host_ms", host_us / 1000}}}};
}

test::CommandResult summary(const std::string& dir) {
  return test::run_command_in(
      "", "", "python3 " + test::source_path("scripts/vs-peers-summary.py") + " " + dir);
}

}  // namespace

TEST_CASE("vs-peers-summary sums a folder's suites up against the targets", "[scripts]") {
  const std::string dir = test::temp_dir("vs-peers-summary");
  nlohmann::json standard = {{"rows",
                              {row(4096, 4096, 4096, 0.95, 1.5, 2800, 2800, false),
                               row(8192, 8192, 8192, 1.01, 1.4, 22000, 22000, false)}}};
  std::ofstream(dir + "/standard.json") << standard.dump();
  // Random rows: 1.2 and 1.0 (mean 1.095), one host-bound split-K row.
  nlohmann::json random = {
      {"rows",
       {row(100, 200, 300, 1.2, 2.0, 10, 8, false), row(50, 60, 70, 1.0, 1.2, 5, 16, true)}}};
  random["stale_entries"] = {"db.json: 1 of 9 entries (the first, ...)"};
  std::ofstream(dir + "/random-seed1.json") << random.dump();
  const auto r = summary(dir);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // A suite that passed entries over says so before the figures; the other says nothing.
  CHECK(r.out.rfind("**random-seed1 passed over stale database entries**", 0) == 0);
  CHECK(r.out.find("db.json: 1 of 9 entries (the first, ...)") != std::string::npos);
  CHECK(r.out.find("**standard passed over") == std::string::npos);
  CHECK(r.out.find("| standard (2) | 0.980 | 0.950, 4096x4096x4096 |") != std::string::npos);
  CHECK(r.out.find("| random-seed1 (2) | 1.095 | 1.000, 50x60x70 |") != std::string::npos);
  CHECK(r.out.find("one launch 8.0 µs (1 rows), split-K with the reduce kernel 16.0 µs") !=
        std::string::npos);
  CHECK(r.out.find("- random-seed1 mean >= 1.05: met (1.095)") != std::string::npos);
  CHECK(r.out.find("- 4096x4096x4096 >= 1.0: not met (0.950)") != std::string::npos);
  CHECK(r.out.find("- 8192x8192x8192 >= 1.0: met (1.010)") != std::string::npos);
  CHECK(r.out.find("- whole call worst >= 1.3: not met (1.20)") != std::string::npos);
  CHECK(r.out.find("- split-K host cost equal to one launch's: not met") != std::string::npos);
}

TEST_CASE("vs-peers-summary refuses a folder without suites", "[scripts]") {
  const auto r = summary(test::temp_dir("vs-peers-summary-empty"));
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("no suite's JSON in") != std::string::npos);
}

}  // namespace gemmtune_tests::scripts_test_vs_peers_summary
