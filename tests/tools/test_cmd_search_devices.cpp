// SPDX-License-Identifier: Apache-2.0
// `gemmtune search --device A,B` (and `all`): one search measured on several devices of one model
// at once, one worker per device, into one journal and one database. PoCL gives two identical CPU
// devices with POCL_DEVICES="pthread pthread"; here the point is correctness, not speed.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_devices {

using namespace gemmtune;
using test::line_count;
using test::run_gemmtune_in;

namespace {

// Two identical PoCL CPU devices (0:0 and 0:1).
const std::string kTwoDevices = "POCL_DEVICES='pthread pthread' POCL_MAX_PTHREAD_COUNT=1";
constexpr int kEvals = 6;

// Whether this machine's OpenCL shows two devices under kTwoDevices.
bool two_devices(const std::string& dir) {
  const auto r = run_gemmtune_in(dir, kTwoDevices, "devices --json");
  return r.exit_code == 0 && nlohmann::json::parse(r.out).size() >= 2;
}

std::string search_args(const std::string& dir, const std::string& name) {
  return "search --kernel xgemm_direct --space ci --strategy random --max-evals " +
         std::to_string(kEvals) + " -s 24x24x24 --seed 4 --fresh --compile-threads 1 --cache-dir " +
         dir + "/cache --db " + dir + "/" + name + "-db.json -o " + dir + "/" + name + ".json ";
}

}  // namespace

TEST_CASE("a search over two devices measures each configuration once, on both devices",
          "[search][cli][devices][device]") {
  const std::string dir = test::temp_dir("search-devices");
  if (!two_devices(dir)) return test::unavailable("PoCL does not give two CPU devices here");
  for (const std::string mode : {"", "--in-process "}) {
    INFO("mode: " << mode);
    const std::string name = mode.empty() ? "workers" : "in-process";
    const auto r =
        run_gemmtune_in(dir, kTwoDevices, search_args(dir, name) + mode + "--device 0:0,0:1 -v");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("measuring on 2 devices at once: 0:0, 0:1"));
    const Journal j = read_journal(dir + "/" + name + ".journal.jsonl");
    CHECK(j.header(0).value()["devices"] == nlohmann::json::array({"0:0", "0:1"}));
    // Every configuration once: the searcher hands each to one device only.
    std::set<std::string> configs;
    for (const auto& e : j.entries) configs.insert(to_string(e.result.config));
    CHECK(j.entries.size() == size_t(kEvals));
    CHECK(configs.size() == j.entries.size());
    // One database, with the fastest verified result of the journal.
    const Database db = Database::load(dir + "/" + name + "-db.json");
    REQUIRE(db.entries().size() == 1);
    const auto out = read_json_file(dir + "/" + name + ".json");
    CHECK(out["results"][0]["evaluations"] == kEvals);
    CHECK(out["metadata"]["devices"] == nlohmann::json::array({"0:0", "0:1"}));
    CHECK(out["results"][0]["best"]["status"] == "ok");
    CHECK(to_string(db.entries()[0].parameters) ==
          to_string(out["results"][0]["best"]["config"].get<Configuration>()));
  }
}

TEST_CASE("device all takes every device of the default device's type",
          "[search][cli][devices][device]") {
  const std::string dir = test::temp_dir("search-devices-all");
  if (!two_devices(dir)) return test::unavailable("PoCL does not give two CPU devices here");
  const auto r = run_gemmtune_in(dir, kTwoDevices, search_args(dir, "all") + "--device all -v");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("measuring on 2 devices at once"));
  CHECK(read_journal(dir + "/all.journal.jsonl").entries.size() == size_t(kEvals));
}

TEST_CASE("a device named twice, or one that is not there, is refused in one line",
          "[search][cli][devices][device]") {
  const std::string dir = test::temp_dir("search-devices-bad");
  if (!two_devices(dir)) return test::unavailable("PoCL does not give two CPU devices here");
  auto r = run_gemmtune_in(dir, kTwoDevices, search_args(dir, "twice") + "--device 0:0,0:0");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("names device 0:0 twice"));
  CHECK(line_count(r.err) == 1);
  r = run_gemmtune_in(dir, kTwoDevices, search_args(dir, "missing") + "--device 0:0,0:7");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("0:7"));
  r = run_gemmtune_in(dir, kTwoDevices, search_args(dir, "empty") + "--device 0:0,");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("empty item"));
  // Nothing was measured or written by a refused search.
  CHECK_FALSE(std::filesystem::exists(dir + "/twice.json"));
  CHECK_FALSE(std::filesystem::exists(dir + "/twice-db.json"));
}

}  // namespace gemmtune_tests::tools_test_cmd_search_devices
