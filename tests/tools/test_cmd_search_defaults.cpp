// SPDX-License-Identifier: Apache-2.0
// A plain `gemmtune search` as a newcomer runs it: the template comes from the device profile (or
// every template shares the budget), the files go to one new folder under gemmtune-results/, and a
// second search in the same folder runs and takes what the first measured from the evaluation
// cache.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "src/core/json_util.hpp"
#include "src/db/database.hpp"
#include "src/db/journal.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_search_defaults {

using namespace gemmtune;
using test::run_gemmtune_in;

namespace {

namespace fs = std::filesystem;

// A user's environment: the evaluation cache in its default place under XDG_CACHE_HOME.
std::string user_env(const std::string& dir) {
  return "-u GEMMTUNE_EVALUATION_CACHE XDG_CACHE_HOME=" + dir + "/cache";
}

// The results files the searches started in `dir` wrote, in the order of their folders' names.
std::vector<fs::path> results_files(const std::string& dir) {
  std::vector<fs::path> files;
  const fs::path root = fs::path(dir) / "gemmtune-results" / "searches";
  if (!fs::exists(root)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto name = e.path().filename().string();
    if (name.rfind("search-", 0) == 0 && e.path().extension() == ".json" &&
        name.find(".journal") == std::string::npos)
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json shape_result(const fs::path& file) {
  return read_json_file(file.string())["results"].at(0);
}

}  // namespace

TEST_CASE("a plain search names its template and reuses earlier results without --resume",
          "[search][cli][cache]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("plain-search");
  const std::string env = user_env(dir);
  const std::string common = " --strategy random --seed 3 --max-evals 4 --no-db";

  auto r = run_gemmtune_in(dir, env, "search -s 48x40x32" + common);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The first line says which template and space, and why (the matched profile's default).
  CHECK_THAT(r.err, Catch::Matches("(?:.|\\n)*template \\S+, space \\S+: the default of the \\S+ "
                                   "profile \\((?:.|\\n)*"));
  auto files = results_files(dir);
  REQUIRE(files.size() == 1);
  const auto first = shape_result(files[0]);
  CHECK(first["measured"] == 4);
  CHECK(first["cached"] == 0);
  // Nothing loose in the working folder: gemmtune-results/ and the cache only.
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    CHECK((name == "gemmtune-results" || name == "cache"));
  }

  // Another shape in the same folder runs (no journal to refuse), into its own folder.
  r = run_gemmtune_in(dir, env, "search -s 24x24x24" + common);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(results_files(dir).size() == 2);

  // The first search again measures nothing: its four results come from the cache, same best.
  r = run_gemmtune_in(dir, env, "search -s 48x40x32" + common);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  files = results_files(dir);
  REQUIRE(files.size() == 3);
  const auto again = shape_result(files[2]);
  CHECK(again["measured"] == 0);
  CHECK(again["cached"] == 4);
  CHECK(again["best"]["config"] == first["best"]["config"]);
  // Its journal still records all four (a journal stays the whole record of its search).
  CHECK(test::count_journal_results(
            (files[2].parent_path() / (files[2].stem().string() + ".journal.jsonl")).string()) ==
        4);

  // --fresh measures them again; a larger budget measures only what is new.
  r = run_gemmtune_in(dir, env, "search -s 48x40x32 --fresh" + common);
  REQUIRE(r.exit_code == 0);
  CHECK(shape_result(results_files(dir).back())["measured"] == 4);
  r = run_gemmtune_in(dir, env,
                      "search -s 48x40x32 --strategy random --seed 3 --max-evals 6 --no-db");
  REQUIRE(r.exit_code == 0);
  const auto more = shape_result(results_files(dir).back());
  CHECK(more["cached"] == 4);
  CHECK(more["measured"] == 2);

  // A named --out folder holds the files; used again it is refused before anything is measured.
  r = run_gemmtune_in(dir, env, "search -s 24x24x24 --out named" + common);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(fs::path(dir) / "named"));
  r = run_gemmtune_in(dir, env, "search -s 24x24x24 --out named" + common);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("already exists"));
}

TEST_CASE("strided and offsets batches of one shape do not share evaluation-cache results",
          "[search][cli][cache]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("batch-layout-cache");
  const std::string env = user_env(dir);
  const std::string common =
      " -s 24x16x16 --batch 2 --kernel xgemm_direct --space ci --in-process --compile-threads 1 "
      "--strategy random --seed 5 --max-evals 2 --no-db --batch-layout ";

  auto r = run_gemmtune_in(dir, env, "search" + common + "strided");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(shape_result(results_files(dir).back())["measured"] == 2);

  // The same shape with its matrices placed by offsets is another problem: measured, not taken.
  r = run_gemmtune_in(dir, env, "search" + common + "offsets");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto offsets = shape_result(results_files(dir).back());
  CHECK(offsets["measured"] == 2);
  CHECK(offsets["cached"] == 0);

  // Each layout finds its own results again.
  for (const char* layout : {"strided", "offsets"}) {
    r = run_gemmtune_in(dir, env, "search" + common + layout);
    INFO(layout << "\n" << r.err);
    REQUIRE(r.exit_code == 0);
    const auto again = shape_result(results_files(dir).back());
    CHECK(again["measured"] == 0);
    CHECK(again["cached"] == 2);
  }
}

TEST_CASE("search --kernel auto shares the budget over the templates and names the fastest",
          "[search][cli][auto]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("auto-search");
  // A profile set whose CPU profile names no default template: a plain search tries them all.
  const fs::path devices = fs::path(dir) / "devices";
  fs::create_directories(devices);
  for (const auto& e : fs::directory_iterator(test::source_path("devices"))) {
    auto j = read_json_file(e.path().string());
    j.erase("default_kernel");
    std::ofstream(devices / e.path().filename()) << j.dump(2);
  }
  auto r = run_gemmtune_in(dir, "",
                           "search --devices " + devices.string() +
                               " -s 32x32x32 --strategy random --max-evals 4 --no-db"
                               " --out out");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("names no default template"));
  CHECK_THAT(r.out, Catch::Contains("32x32x32: fastest template"));
  // One results file per template of gemmtune's own (CLBlast's kernels are not among them), each
  // with its share of the budget.
  for (const std::string k : {"xgemm", "xgemm_direct", "xgemm_fast", "xgemm_skinny"}) {
    const fs::path f = fs::path(dir) / "out" / ("search-" + k + ".json");
    REQUIRE(fs::exists(f));
    CHECK(shape_result(f)["evaluations"] == 1);
  }
  CHECK_FALSE(fs::exists(fs::path(dir) / "out" / "search-clblast-xgemm.json"));

  // A batched problem goes only to the templates that declare batches (xgemm and xgemm_skinny
  // do not).
  r = run_gemmtune_in(dir, "",
                      "search --devices " + devices.string() +
                          " -s 16x16x16 --batch 3 --strategy random --max-evals 2 --no-db"
                          " --out batched");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(fs::path(dir) / "batched" / "search-xgemm_fast.json"));
  CHECK_FALSE(fs::exists(fs::path(dir) / "batched" / "search-xgemm_skinny.json"));
  CHECK_FALSE(fs::exists(fs::path(dir) / "batched" / "search-xgemm.json"));

  // What --kernel auto cannot do is refused before anything is measured.
  r = run_gemmtune_in(dir, "", "search --kernel auto -s 32x32x32 -o x.json");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--out DIR"));
  r = run_gemmtune_in(dir, "", "search --kernel auto --resume out/search-xgemm.journal.jsonl");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("does not resume"));
}

TEST_CASE("a profile's default template must name a template and why", "[search][cli][profile]") {
  const std::string dir = test::temp_dir("bad-default");
  const fs::path devices = fs::path(dir) / "devices";
  fs::create_directories(devices);
  auto j = read_json_file(test::source_path("devices/cpu-generic.json"));
  j["default_kernel"] = "xgemm_fast";  // the value alone, without its source
  std::ofstream(devices / "cpu-generic.json") << j.dump(2);
  const auto r = run_gemmtune_in(dir, "", "search --devices " + devices.string() + " -s 8x8x8");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("default_kernel"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("search --workload spreads one budget by weight and warm-starts each shape",
          "[search][cli][workload]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("workload");
  {
    std::ofstream w(dir + "/layers.txt");
    // 32x32x32 twice: a log of calls adds up to its weight.
    w << "# shape weight\n64x64x64 3\n32x32x32\n48x48x48 1\n32x32x32 1\n";
  }
  auto r = run_gemmtune_in(dir, "",
                           "search --kernel xgemm --workload layers.txt --max-evals 6 "
                           "--strategy random --seed 5 --no-db --out out -v");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // The space is enumerated once for the workload's three shapes (one precision), not per shape.
  const std::string built = "space of ";
  size_t builds = 0;
  for (size_t at = r.err.find(built); at != std::string::npos; at = r.err.find(built, at + 1)) {
    ++builds;
  }
  CHECK(builds == 1);
  const auto results = read_json_file(dir + "/out/search-xgemm.json")["results"];
  REQUIRE(results.size() == 3);
  // Heaviest first; 6 evaluations shared 3:2:1.
  CHECK(results[0]["shape"] == "64x64x64");
  CHECK(results[0]["evaluations"] == 3);
  CHECK(results[1]["shape"] == "32x32x32");
  CHECK(results[1]["evaluations"] == 2);
  CHECK(results[2]["shape"] == "48x48x48");
  CHECK(results[2]["evaluations"] == 1);
  CHECK(results[0]["warm_started"] == 0);
  CHECK(results[2]["warm_started"] >= 1);
  // The second shape measured the first shape's best before anything the strategy proposed.
  const auto journal = read_journal(dir + "/out/search-xgemm.journal.jsonl");
  std::vector<Configuration> second;
  for (const auto& e : journal.entries) {
    if (e.problem.shape.to_string() == "32x32x32") second.push_back(e.result.config);
  }
  REQUIRE_FALSE(second.empty());
  CHECK(configuration_to_json(second.front()) == results[0]["best"]["config"]);

  // Bad input is one line naming what is wrong.
  { std::ofstream(dir + "/bad.txt") << "64x64x64 3\n32x32 2\n"; }
  r = run_gemmtune_in(dir, "", "search --kernel xgemm --workload bad.txt --no-db --out b1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("line 2"));
  { std::ofstream(dir + "/neg.txt") << "64x64x64 -1\n"; }
  r = run_gemmtune_in(dir, "", "search --kernel xgemm --workload neg.txt --no-db --out b2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("not a positive number"));
  r = run_gemmtune_in(dir, "",
                      "search --kernel xgemm --workload layers.txt -s 8x8x8 --no-db --out b3");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("not with -s"));
}

TEST_CASE("a database's configurations measured at a grid serve the shapes between",
          "[search][cli][workload][database]") {
  if (!test::cli_has_device()) return test::unavailable("no OpenCL device");
  const std::string dir = test::temp_dir("space-from");
  // A database of eight configurations of the ci space (their shapes and figures made up: only
  // the configurations matter to --space-from).
  auto r = run_gemmtune_in(dir, "", "space --kernel xgemm --space ci --list");
  REQUIRE(r.exit_code == 0);
  Database base;
  base.device.name = "a device the configurations came from";
  std::istringstream listed(r.out);
  std::set<std::string> configs;
  for (std::string line; configs.size() < 8 && std::getline(listed, line);) {
    DatabaseEntry e;
    e.key.kernel = "xgemm";
    e.key.shape = {int64_t(32 + configs.size()), 32, 32};
    e.parameters = parse_configuration(line);
    e.gflops = 1;
    base.put(e, true);
    configs.insert(nlohmann::json(configuration_to_json(e.parameters)).dump());
  }
  REQUIRE(configs.size() == 8);
  base.save(dir + "/base.json");
  { std::ofstream(dir + "/grid.txt") << "32x32x32 1\n64x48x16 1\n"; }
  r = run_gemmtune_in(dir, "",
                      "search --kernel xgemm --workload grid.txt --space-from base.json "
                      "--strategy exhaustive --max-evals 40 --db cross.json --out x");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Every shape measured exactly the database's configurations, and its best became an entry.
  std::map<std::string, std::set<std::string>> measured;
  for (const auto& e : read_journal(dir + "/x/search-xgemm.journal.jsonl").entries) {
    measured[e.problem.shape.to_string()].insert(configuration_to_json(e.result.config).dump());
  }
  REQUIRE(measured.size() == 2);
  for (const auto& [shape, seen] : measured) {
    INFO(shape);
    CHECK(seen == configs);
  }
  const auto cross = read_json_file(dir + "/cross.json")["entries"];
  REQUIRE(cross.size() == 2);
  for (const auto& e : cross) {
    CHECK(configs.count(e["parameters"].dump()) == 1);
    CHECK(e["found"]["space"] == "configurations of base.json");
  }
  // The journal's figures go into the database; a shape between the grid's is then served by
  // what ran fastest at the measured shapes nearest it.
  r = run_gemmtune_in(dir, "", "db add-measurements cross.json x/search-xgemm.journal.jsonl");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("figures of 8 configurations at 2 shapes"));
  CHECK(read_json_file(dir + "/cross.json")["measurements"].size() == 8);
  // Added again, the figures stay one per configuration; with --replace, a journal whose shapes
  // measured too few configurations leaves none.
  r = run_gemmtune_in(dir, "", "db add-measurements cross.json x/search-xgemm.journal.jsonl");
  REQUIRE(r.exit_code == 0);
  CHECK(read_json_file(dir + "/cross.json")["measurements"].size() == 8);
  r = run_gemmtune_in(dir, "",
                      "db add-measurements --replace --min-configs 9 cross.json "
                      "x/search-xgemm.journal.jsonl -o replaced.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto replaced = read_json_file(dir + "/replaced.json");
  CHECK((!replaced.contains("measurements") || replaced["measurements"].empty()));
  CHECK(replaced["entries"].size() == 2);
  r = run_gemmtune_in(dir, "", "db lookup cross.json -m 40 -n 40 -k 24 --kernel xgemm --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto pick = nlohmann::json::parse(r.out);
  CHECK(pick["match"] == "measured");
  CHECK(configs.count(pick["parameters"].dump()) == 1);
  CHECK_THAT(pick["reason"].get<std::string>(), Catch::Contains("2 measured shapes nearest"));
  // The library chooses alike (bench-suite's library column, through the public API).
  r = run_gemmtune_in(dir, "",
                      "bench-suite --db cross.json --shapes 40x40x24 --kernels xgemm --reps 1 "
                      "--warmup 0 -o suite.md --save-json suite.json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto row = read_json_file(dir + "/suite.json")["rows"][0];
  CHECK(row["chosen"]["origin"] == "measured");
  CHECK(row["library_choice"]["parameters"] ==
        to_string(configuration_from_json(pick["parameters"])));

  // A database without entries of the kernel, a missing one, or with a replay: one line.
  r = run_gemmtune_in(dir, "",
                      "-q search --kernel xgemm_direct --workload grid.txt --space-from base.json "
                      "--strategy exhaustive --no-db --out y1");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--space-from") && Catch::Contains("no entry of kernel"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  r = run_gemmtune_in(
      dir, "", "-q search --kernel xgemm -s 32x32x32 --space-from none.json --no-db --out y2");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("none.json"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  // Journals of another device than the database's: one line.
  r = run_gemmtune_in(dir, "", "db add-measurements base.json x/search-xgemm.journal.jsonl");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("the journals were measured on"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace gemmtune_tests::tools_test_cmd_search_defaults
