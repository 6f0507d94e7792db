// SPDX-License-Identifier: Apache-2.0
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_report {

using gemmtune::read_text_file;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;
using gemmtune::test::temp_dir;

namespace {

const std::string kDb = source_path("tests/data/db_gfx1012.json");

// Debian's python3 carries python3-matplotlib; a python3 earlier on PATH may not.
std::string python_with_matplotlib() {
  for (const std::string py : {"/usr/bin/python3", "python3"}) {
    const std::string probe = py + " -c 'import matplotlib' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return py;
  }
  return "";
}

}  // namespace

TEST_CASE("report writes Markdown and JSON for a whole database", "[cli][report]") {
  const auto dir = temp_dir("report-cli");
  auto r = run_gemmtune("report " + kDb + " -o " + dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string md = read_text_file(dir + "/db_gfx1012-report.md");
  CHECK_THAT(md, Catch::Contains("# Bottleneck report: gfx1012"));
  CHECK_THAT(md, Catch::Contains("## xgemm_direct fp32 row NN b1 128x128x128"));
  CHECK_THAT(md, Catch::Contains("Occupancy"));
  const auto j = nlohmann::json::parse(read_text_file(dir + "/db_gfx1012-report.json"));
  CHECK(j["profile"] == "gfx1012");
  REQUIRE(j["entries"].size() == 4);
  // Every entry was analyzed with its template: the LDS estimate is there.
  for (const auto& e : j["entries"]) {
    CHECK(e["items"][0]["id"] == "lds");
    CHECK(e["items"][0]["value"].get<double>() > 0);
  }
  r = run_gemmtune("report " + kDb + " --json --profile gfx906");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["profile"] == "gfx906");
  r = run_gemmtune("report " + kDb);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| check | value | target | verdict | basis |"));
  CHECK(run_gemmtune("report " + kDb + " --profile nonesuch").exit_code == 2);
}

TEST_CASE("plot.py renders PNGs from fixtures", "[cli][plot]") {
  const std::string py = python_with_matplotlib();
  INFO("python3 with matplotlib is needed (scripts/install-deps.sh installs python3-matplotlib)");
  REQUIRE(!py.empty());
  const auto dir = temp_dir("plot");
  const std::string script = source_path("scripts/plot.py");
  const std::string cmd = py + " " + script + " all " +
                          source_path("tests/data/db_plot_journal.jsonl") + " " +
                          source_path("tests/data/db_plot_bars.json") + " -d " + dir +
                          " >/dev/null 2>" + dir + "/err.txt";
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
  for (const char* png : {"convergence.png", "heatmap-db_plot_journal-MWG-NWG.png", "bars.png"}) {
    INFO(png);
    const std::string path = dir + "/" + png;
    REQUIRE(std::filesystem::exists(path));
    CHECK(std::filesystem::file_size(path) > 1000);
    CHECK(read_text_file(path).substr(1, 3) == "PNG");
  }
  const std::string heat = py + " " + script + " heatmap " +
                           source_path("tests/data/db_plot_journal.jsonl") +
                           " --x MWG --y VWM -o " + dir + "/h.png >/dev/null 2>&1";
  CHECK(std::system(heat.c_str()) == 0);
  CHECK(std::filesystem::file_size(dir + "/h.png") > 1000);
  // A database has no evaluation history: a clear error, exit code 2.
  const std::string bad = py + " " + script + " convergence " + kDb + " -o " + dir +
                          "/c.png >/dev/null 2>&1";
  const int status = std::system(bad.c_str());
  CHECK(WEXITSTATUS(status) == 2);
}

TEST_CASE("report judges an H100 database by the H100's figures, not the H200's", "[cli][report]") {
  // sm_90 covers both; the database's device name picks the model (3.35 against 4.8 TB/s).
  auto r = run_gemmtune("report " + source_path("tests/data/db_h100_regcap.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("66908 GFLOPS / 3350 GB/s"));
  CHECK_THAT(r.out, !Catch::Contains("4800 GB/s"));
}

}  // namespace gemmtune_tests::tools_test_cmd_report
