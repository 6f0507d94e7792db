// SPDX-License-Identifier: Apache-2.0
// gemmtune bench-suite end to end on the OpenCL device (PoCL in CI): tiny shapes, the fixture
// database, JSON and Markdown outputs, the n/a column, a wrong kernel caught, and bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "src/bench/bench_suite.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tests/test_support.hpp"
#include "tests/tools/cli_helpers.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::tools_test_cmd_bench_suite {

using gemmtune::test::line_count;
using gemmtune::test::run_gemmtune;
using gemmtune::test::source_path;

namespace fs = std::filesystem;

namespace {

const std::string& cache_dir() {
  static const std::string dir = gemmtune::test::temp_dir("bench-suite-cli-cache");
  return dir;
}

std::string fixture() {
  return source_path("tests/data/bench_suite_db.json");
}

std::string base_args() {
  return "bench-suite --db " + fixture() + " --reps 2 --warmup 1 --cache-dir " + cache_dir();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of the first Markdown table of `md` (the suite's), split into trimmed cells.
std::vector<std::vector<std::string>> table_of(const std::string& md) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(md);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|' || line.back() != '|') {
      if (!rows.empty()) break;  // the end of the first table
      continue;
    }
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
        cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("bench-suite compares tiny shapes and writes JSON and Markdown", "[cli][bench_suite]") {
  const std::string dir = gemmtune::test::temp_dir("bench-suite-cli");
  const std::string md_path = dir + "/suite.md", json_path = dir + "/suite.json";
  auto r = run_gemmtune(base_args() + " --shapes 64x64x64,33x17x65 --epilogue --json -o " +
                        md_path + " --save-json " + json_path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);

  const auto j = nlohmann::json::parse(r.out);
  CHECK(j == nlohmann::json::parse(slurp(json_path)));
  const auto report = j.get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 4);
  CHECK_THAT(report.command, Catch::Contains("--shapes 64x64x64,33x17x65") &&
                                 Catch::Contains("--epilogue") && Catch::Contains("--db"));
  for (const auto& row : report.rows) {
    CHECK(row.gemmtune.ok());
    CHECK(row.gemmtune.verified);
    CHECK(row.gemmtune.gflops > 0);
    // The library runs too, but the fixture was tuned on another device: an application's
    // library would not use it, and neither do the library column and the direct column (which
    // runs the library's choice).
    CHECK(row.library.ok());
    REQUIRE(row.library_choice);
    CHECK(row.library_choice->source != "user database");
    REQUIRE(row.chosen);
    CHECK(row.chosen->database != fixture());
    CHECK(row.chosen->kernel == row.library_choice->kernel);
    if (gemmtune::clblast_linked()) {
      CHECK(row.clblast.ok());
      CHECK(row.clblast.verified);
      REQUIRE(row.ratio);
      CHECK(*row.ratio == Approx(row.gemmtune.gflops / row.clblast.gflops));
    } else {
      CHECK(row.clblast.status == "n/a");
    }
  }
  CHECK(report.rows[1].epilogue);

  const std::string md = slurp(md_path);
  CHECK_THAT(md, Catch::Contains(report.device.name) && Catch::Contains("Driver:") &&
                     Catch::Contains("Date:") && Catch::Contains("Command: `gemmtune"));
  const auto table = table_of(md);
  REQUIRE(table.size() == 6);  // header, separator, four rows
  for (const auto& row : table) CHECK(row.size() == table[0].size());
  const auto ratio_col =
      std::find(table[0].begin(), table[0].end(), "gemmtune / CLBlast") - table[0].begin();
  REQUIRE(ratio_col < static_cast<long>(table[0].size()));
  CHECK(table[2][0] == "64x64x64");
  CHECK(table[5][0] == "33x17x65");
  const auto epilogue_col =
      std::find(table[0].begin(), table[0].end(), "Epilogue") - table[0].begin();
  REQUIRE(epilogue_col < static_cast<long>(table[0].size()));
  CHECK(table[5][epilogue_col] == "bias+ReLU");
  for (size_t i = 2; i < table.size(); ++i) {
    if (gemmtune::clblast_linked()) {
      CHECK(std::stod(table[i][ratio_col]) > 0);
    } else {
      CHECK(table[i][ratio_col] == "n/a");
    }
  }
}

TEST_CASE("bench-suite times the library call with the --db database as its user database",
          "[cli][bench_suite][library]") {
  const auto& test_device = gemmtune::test::test_device();
  if (!test_device.device) return gemmtune::test::unavailable("no OpenCL device");
  // The fixture as if tuned on this device: the library applies a database to its own device.
  const std::string dir = gemmtune::test::temp_dir("bench-suite-library");
  auto db = nlohmann::json::parse(slurp(fixture()));
  db["device"]["name"] = test_device.device->info.name;
  const std::string db_path = dir + "/this-device.json", md_path = dir + "/suite.md";
  std::ofstream(db_path) << db.dump(2);
  auto r = run_gemmtune("bench-suite --db " + db_path + " --reps 3 --warmup 1 --cache-dir " +
                        cache_dir() + " --shapes 64x64x64,33x17x65 --json -o " + md_path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out).get<gemmtune::SuiteReport>();
  CHECK(report.library_database == db_path);
  CHECK(report.stale_entries.empty());
  REQUIRE(report.rows.size() == 2);
  for (const auto& row : report.rows) {
    INFO(row.label() << ": " << row.library.message);
    CHECK(row.library.ok());
    CHECK(row.library.verified);
    CHECK(row.library.wall.runs == 3);
    CHECK(row.library.gflops > 0);
    CHECK(row.library.gpu_gflops > 0);  // the GPU clock times every side
    REQUIRE(row.library_choice);
    CHECK(row.library_choice->source == "user database");
    CHECK(row.library_choice->database == db_path);
    CHECK_FALSE(row.library_choice->entry.empty());
    if (gemmtune::clblast_linked()) {
      REQUIRE(row.library_ratio);
      CHECK(*row.library_ratio == Approx(row.library.gflops / row.clblast.gflops));
    }
  }
  // 64^3 is tuned exactly: the library runs the entry the suite chose for the direct column.
  REQUIRE(report.rows[0].chosen);
  CHECK(report.rows[0].chosen->origin == "exact");
  CHECK(report.rows[0].library_choice->exact);
  CHECK(report.rows[0].library_choice->kernel == report.rows[0].chosen->kernel);
  for (const auto& [name, value] : report.rows[0].chosen->parameters) {
    CHECK_THAT(report.rows[0].library_choice->parameters,
               Catch::Contains(name + "=" + std::to_string(value)));
  }

  const std::string md = slurp(md_path);
  CHECK_THAT(md, Catch::Contains("- library: " + report.rows[0].chosen->kernel) &&
                     Catch::Contains("(user database " + db_path));
  const auto table = table_of(md);
  REQUIRE(table.size() == 4);
  const auto col = [&](const std::string& name) {
    const auto at = std::find(table[0].begin(), table[0].end(), name) - table[0].begin();
    REQUIRE(at < static_cast<long>(table[0].size()));
    return at;
  };
  const auto library = col("library GFLOPS"),
             verified = col("Verified (gemmtune / library / CLBlast)");
  for (size_t i = 2; i < table.size(); ++i) {
    CHECK(std::stod(table[i][library]) > 0);
    CHECK_THAT(table[i][verified], Catch::StartsWith("ok / ok / "));
  }
}

TEST_CASE("bench-suite names the database entries that its templates no longer accept",
          "[cli][bench_suite]") {
  if (!gemmtune::test::test_device().device) {
    return gemmtune::test::unavailable("no OpenCL device");
  }
  // An entry tuned with a value this build's template does not declare: the chooser passes it
  // over, so the run measures less than the database holds, and the report says so up front.
  const std::string dir = gemmtune::test::temp_dir("bench-suite-stale");
  auto db = nlohmann::json::parse(slurp(fixture()));
  for (auto& e : db["entries"]) {
    if (e["key"]["kernel"] == "xgemm_fast") e["parameters"]["KWI"] = 3;
  }
  const std::string db_path = dir + "/stale.json", md_path = dir + "/suite.md";
  std::ofstream(db_path) << db.dump(2);
  const auto r = run_gemmtune("bench-suite --db " + db_path + " --reps 2 --warmup 1 --cache-dir " +
                              cache_dir() + " --shapes 32x32x32 --json -o " + md_path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out).get<gemmtune::SuiteReport>();
  REQUIRE(report.stale_entries.size() == 1);
  CHECK_THAT(report.stale_entries[0], Catch::StartsWith(db_path + ": 1 of 3 entries") &&
                                          Catch::Contains("KWI=3 is not a declared value"));
  CHECK_THAT(r.err, Catch::Contains("stale database entries, passed over"));
  CHECK_THAT(slurp(md_path), Catch::Contains("- **Stale entries, passed over**") &&
                                 Catch::Contains(report.stale_entries[0]));
  // The row is still measured, with another configuration than the stale entry's.
  REQUIRE(report.rows.size() == 1);
  REQUIRE(report.rows[0].chosen);
  const auto& chosen = report.rows[0].chosen->parameters;
  CHECK((chosen.count("KWI") == 0 || chosen.at("KWI") != 3));
}

TEST_CASE("bench-suite's gemmtune column runs the library's choice on every row",
          "[cli][bench_suite][library]") {
  const auto& test_device = gemmtune::test::test_device();
  if (!test_device.device) return gemmtune::test::unavailable("no OpenCL device");
  // The fixture as if tuned on this device, plus the fastest entry of a skinny shape from
  // xgemm_skinny: every kernel competes in the one chooser, skinny included.
  const std::string dir = gemmtune::test::temp_dir("bench-suite-one-chooser");
  auto db = nlohmann::json::parse(slurp(fixture()));
  db["device"]["name"] = test_device.device->info.name;
  auto skinny = db["entries"][0];
  skinny["key"]["kernel"] = "xgemm_skinny";
  skinny["key"]["m"] = 8;
  skinny["parameters"] = gemmtune::configuration_to_json(
      gemmtune::KernelSpec::load_named(source_path("kernel_templates"), "xgemm_skinny").defaults());
  skinny["gflops"] = 1000.0;  // beats every other entry of the shape
  db["entries"].push_back(skinny);
  auto slower = db["entries"][0];
  slower["key"]["m"] = 8;
  db["entries"].push_back(slower);
  const std::string db_path = dir + "/this-device.json";
  std::ofstream(db_path) << db.dump(2);

  // Exact entries, the model's pick (33x17x65), fused epilogues and FP64 (no entry: defaults).
  auto r = run_gemmtune("bench-suite --db " + db_path + " --reps 1 --warmup 0 --no-clblast " +
                        "--cache-dir " + cache_dir() +
                        " --shapes 64x64x64,33x17x65,8x64x64 --epilogue --precision 32,64 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(r.out).get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 9);
  int compared = 0;
  for (const auto& row : report.rows) {
    INFO(row.label() << ": " << row.gemmtune.message << " / " << row.library.message);
    if (!row.gemmtune.available) continue;  // a precision the device lacks
    CHECK(row.gemmtune.ok());
    CHECK(row.library.ok());
    REQUIRE(row.chosen);
    REQUIRE(row.library_choice);
    CHECK(row.chosen->kernel == row.library_choice->kernel);
    CHECK(gemmtune::to_string(row.chosen->parameters) == row.library_choice->parameters);
    ++compared;
  }
  CHECK(compared >= 6);  // the FP32 rows at least
  const auto row_of = [&](const std::string& label) {
    auto it = std::find_if(report.rows.begin(), report.rows.end(),
                           [&](const auto& row) { return row.label() == label; });
    REQUIRE(it != report.rows.end());
    return *it;
  };
  const auto skinny_row = row_of("8x64x64 fp32");
  CHECK(skinny_row.chosen->kernel == "xgemm_skinny");
  CHECK(skinny_row.chosen->origin == "exact");
  CHECK(row_of("64x64x64 fp32").chosen->origin == "exact");
  CHECK(row_of("33x17x65 fp32").chosen->origin == "model");
}

TEST_CASE("bench-suite without CLBlast says n/a and merges a cuBLAS column", "[cli][bench_suite]") {
  const std::string dir = gemmtune::test::temp_dir("bench-suite-cublas");
  const std::string cublas = dir + "/cublas.json";
  std::ofstream(cublas) << nlohmann::json{{"format", gemmtune::kCublasBenchFormat},
                                          {"device", "Some CUDA GPU"},
                                          {"results",
                                           {{{"m", 64},
                                             {"n", 64},
                                             {"k", 64},
                                             {"gflops", 50.0},
                                             {"wall_gflops", 0.5}}}}}
                               .dump();
  auto r = run_gemmtune(base_args() + " --shapes 64 --no-clblast --cublas " + cublas + " -o " +
                        dir + "/suite.md");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("64x64x64") && Catch::Contains("n/a") &&
                        Catch::Contains("0.5") && Catch::Contains("cuBLAS"));
  const auto table = table_of(slurp(dir + "/suite.md"));
  REQUIRE(table.size() == 3);
  const auto col = [&](const std::string& name) {
    return std::find(table[0].begin(), table[0].end(), name) - table[0].begin();
  };
  CHECK(table[2][col("CLBlast GFLOPS")] == "n/a");
  CHECK(table[2][col("gemmtune / CLBlast")] == "n/a");
  // The whole call against cuBLAS's whole call, the device time against its CUDA events.
  CHECK(table[2][col("cuBLAS GFLOPS")] == "0.5");
  CHECK(table[2][col("cuBLAS device GFLOPS")] == "50.0");
  // A slow reference so that the ratio is well above the table's rounding even on a busy CPU.
  const double call = std::stod(table[2][col("gemmtune / cuBLAS")]);
  const double device = std::stod(table[2][col("gemmtune / cuBLAS, device")]);
  CHECK(call > 0);
  CHECK(device > 0);
  // gemmtune's device time is within its whole call, and cuBLAS's device rate here is 100 times
  // its call rate: the device ratio is the lower unless one was divided by the other's kind.
  CHECK(device < call);
}

TEST_CASE("bench-suite reports a kernel that computes wrong results and exits 1",
          "[cli][bench_suite]") {
  // A copy of the templates whose shared tile code scales every product by 1.01.
  const std::string dir = gemmtune::test::temp_dir("bench-suite-broken");
  fs::copy(source_path("kernel_templates"), dir + "/kernel_templates");
  const std::string tile = dir + "/kernel_templates/gemm_tile.cl";
  std::string text = slurp(tile);
  const std::string line = "const real a = (real)alpha;";
  const auto at = text.find(line);
  REQUIRE(at != std::string::npos);
  text.replace(at, line.size(), "const real a = (real)alpha * (real)1.01;");
  std::ofstream(tile) << text;

  // The fixture as if tuned on this device, so that its exact 64^3 entry (xgemm_direct, which
  // includes the tile code) is the library's choice and so the direct column's.
  const auto& test_device = gemmtune::test::test_device();
  if (!test_device.device) return gemmtune::test::unavailable("no OpenCL device");
  auto db = nlohmann::json::parse(slurp(fixture()));
  db["device"]["name"] = test_device.device->info.name;
  const std::string db_path = dir + "/this-device.json";
  std::ofstream(db_path) << db.dump(2);
  auto r = run_gemmtune("--templates " + dir + "/kernel_templates bench-suite --db " + db_path +
                        " --reps 2 --warmup 1 --cache-dir " + cache_dir() +
                        " --shapes 64x64x64 --no-clblast --json");
  CHECK(r.exit_code == 1);
  const auto report = nlohmann::json::parse(r.out).get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 1);
  CHECK(report.rows[0].gemmtune.status == "wrong_result");
  CHECK_FALSE(report.rows[0].gemmtune.verified);
  CHECK_THAT(report.rows[0].gemmtune.message, Catch::Contains("wrong"));
  CHECK(report.rows[0].gemmtune.gflops == 0);  // a wrong kernel is not timed
  REQUIRE(report.rows[0].chosen);
  CHECK(report.rows[0].chosen->kernel == "xgemm_direct");
}

TEST_CASE("bench-suite refuses bad input with one line and exit 2", "[cli][bench_suite]") {
  SECTION("missing database") {
    auto r = run_gemmtune("bench-suite --db /nonexistent-gemmtune/db.json --shapes 64");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("/nonexistent-gemmtune/db.json"));
    CHECK(line_count(r.err) == 1);
  }
  SECTION("bad shape") {
    auto r = run_gemmtune(base_args() + " --shapes 64x0x64");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("64x0x64"));
    CHECK(line_count(r.err) == 1);
  }
  SECTION("unknown kernel") {
    auto r = run_gemmtune(base_args() + " --shapes 64 --kernels xgemm,nosuchkernel");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("nosuchkernel"));
    CHECK(line_count(r.err) == 1);
  }
  SECTION("no repetitions") {
    auto r = run_gemmtune(base_args() + " --shapes 64 --reps 0");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--reps"));
  }
  SECTION("a cuBLAS file of another kind") {
    auto r = run_gemmtune(base_args() + " --shapes 64 --cublas " + fixture());
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("bench_suite_db.json") && Catch::Contains("bench-cublas"));
    CHECK(line_count(r.err) == 1);
  }
}

TEST_CASE("bench-suite runs FP64 and 16acc32 rows, and FP16 only where the device has it",
          "[cli][bench_suite][precision]") {
  // The fixture holds FP32 entries only, so these rows run the template defaults (untuned).
  auto r = run_gemmtune(base_args() + " --shapes 33x17x65 --precision 64,16acc32,16 --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto report = j.get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 3);
  CHECK(j["rows"][0]["precision"] == "64");
  CHECK(j["rows"][1]["precision"] == "16acc32");
  CHECK(j["rows"][2]["precision"] == "16");

  const auto& fp64 = report.rows[0];
  if (report.device.has_fp64) {
    CHECK(fp64.gemmtune.ok());
    CHECK(fp64.gemmtune.verified);
    REQUIRE(fp64.chosen);
    CHECK(fp64.chosen->origin == "defaults");
    CHECK(fp64.library.ok());
    if (gemmtune::clblast_linked()) CHECK(fp64.clblast.ok());
  } else {
    CHECK(fp64.gemmtune.status == "n/a");
    CHECK_THAT(fp64.gemmtune.message, Catch::Contains("cl_khr_fp64"));
  }

  const auto& mixed = report.rows[1];
  CHECK(mixed.gemmtune.ok());  // half storage needs no extension
  CHECK(mixed.gemmtune.verified);
  CHECK(mixed.gemmtune.tolerance > 0);
  CHECK(mixed.clblast.status == "n/a");  // CLBlast has no half-storage, float-accumulate GEMM
  CHECK_FALSE(mixed.ratio);
  CHECK(mixed.library.ok());  // gemmtune::Gemm<gemmtune::half>
  CHECK(mixed.library.verified);

  const auto& half = report.rows[2];
  // The library's half GEMM is 16acc32: half arithmetic is n/a there, not a failure.
  CHECK(half.library.status == "n/a");
  CHECK_THAT(half.library.message, Catch::Contains("16acc32"));
  if (report.device.has_fp16) {
    CHECK(half.gemmtune.ok());
  } else {
    // Refused with the reason, not a build log; not a failure of the run.
    CHECK(half.gemmtune.status == "n/a");
    CHECK_THAT(half.gemmtune.message, Catch::Contains("cl_khr_fp16"));
    CHECK(half.gemmtune.message.find('\n') == std::string::npos);
  }
}

TEST_CASE("bench-suite runs awkward batches in both layouts against CLBlast's batched routines",
          "[cli][bench_suite][batched]") {
  const std::string dir = gemmtune::test::temp_dir("bench-suite-batched");
  // One awkward shape: every row builds CLBlast's batched programs, slowly on PoCL (the batched
  // kernels' edge cases, 1x1x1 among them, are the evaluator's tests).
  auto r = run_gemmtune(base_args() + " --shapes 17x9x33 --batch 5 --batch-layout " +
                        "strided,offsets --json -o " + dir + "/suite.md");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto report = j.get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 2);
  const std::vector<std::string> layouts = {"strided", "offsets"};
  for (size_t i = 0; i < report.rows.size(); ++i) {
    const auto& row = report.rows[i];
    INFO(row.label());
    CHECK(j["rows"][i]["batch"] == 5);
    CHECK(j["rows"][i]["batch_layout"] == layouts[i]);
    CHECK(row.gemmtune.ok());
    CHECK(row.gemmtune.verified);
    CHECK(row.library.ok());  // GemmStridedBatched or GemmBatched
    CHECK(row.library.verified);
    if (gemmtune::clblast_linked()) {
      CHECK(row.clblast.ok());
      CHECK(row.clblast.verified);
    }
  }
  const std::string md = slurp(dir + "/suite.md");
  CHECK_THAT(md, Catch::Contains("offsets") && Catch::Contains("GemmStridedBatched"));
}

TEST_CASE("the batched suite is 1024 GEMMs of 32^3 and 64 of 256^3", "[bench_suite][batched]") {
  const auto cases = gemmtune::named_suite("batched");
  REQUIRE(cases.size() == 2);
  CHECK(cases[0].shape == gemmtune::Shape{32, 32, 32});
  CHECK(cases[0].batch == 1024);
  CHECK(cases[1].shape == gemmtune::Shape{256, 256, 256});
  CHECK(cases[1].batch == 64);
  CHECK(gemmtune::named_suite("standard").size() == gemmtune::default_suite_shapes().size());
}

TEST_CASE("bench-suite refuses bad precision and batch options with one line and exit 2",
          "[cli][bench_suite]") {
  struct Case {
    std::string args, names;
  };
  const std::vector<Case> cases = {
      {"--shapes 64 --precision 8", "--precision"},
      {"--shapes 64 --precision ,", "--precision"},
      {"--shapes 64 --batch 0", "--batch"},
      {"--shapes 64 --batch-layout offsets", "--batch-layout"},
      {"--shapes 64 --batch 4 --batch-layout pointers", "pointers"},
      {"--suite nosuch", "nosuch"},
      {"--suite batched --shapes 64", "--suite"},
      {"--suite batched --batch 4", "--batch"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = run_gemmtune(base_args() + " " + c.args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(c.names));
    CHECK(line_count(r.err) == 1);
  }
}

TEST_CASE("bench-suite --clblast-params runs CLBlast with an exported configuration",
          "[cli][bench_suite][clblast]") {
  if (!gemmtune::clblast_linked()) {
    const auto r = run_gemmtune(base_args() + " --shapes 64x64x64 --clblast-params " +
                                source_path("tests/data/clblast_tuner_xgemm_reference.json"));
    CHECK(r.exit_code != 0);
    return;
  }
  // CLBlast's own tuner format, which `gemmtune export -f clblast-json` writes too.
  auto r = run_gemmtune(base_args() + " --shapes 96x96x96 --json --clblast-params " +
                        source_path("tests/data/clblast_tuner_xgemm_reference.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("CLBlast tuned column: Xgemm, FP32:") &&
                        Catch::Contains("MWG=64") && Catch::Contains("VWN=4"));
  const auto report = nlohmann::json::parse(r.out).get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 1);
  // Stock and tuned CLBlast side by side, each verified.
  CHECK(report.rows[0].clblast.ok());
  CHECK(report.rows[0].clblast.verified);
  CHECK(report.rows[0].clblast_tuned.ok());
  CHECK(report.rows[0].clblast_tuned.verified);
  CHECK(report.rows[0].clblast_tuned_gain.has_value());
  CHECK_THAT(report.clblast_tuned, Catch::Contains("MWG=64"));
  CHECK_THAT(report.command, Catch::Contains("--clblast-params"));
  const std::string markdown = gemmtune::suite_markdown(report);
  CHECK_THAT(markdown, Catch::Contains("CLBlast tuned / CLBlast"));
  // A precision the export is not for: the tuned column is n/a there, the stock one runs.
  r = run_gemmtune(base_args() + " --shapes 64x64x64 --precision 64 --json --clblast-params " +
                   source_path("tests/data/clblast_tuner_xgemm_reference.json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto fp64 = nlohmann::json::parse(r.out).get<gemmtune::SuiteReport>();
  REQUIRE(fp64.rows.size() == 1);
  CHECK(!fp64.rows[0].clblast_tuned.available);
  CHECK_THAT(fp64.rows[0].clblast_tuned.message, Catch::Contains("FP32"));

  // A file that is not an export, and parameters CLBlast refuses: one line, exit 2.
  const std::string dir = gemmtune::test::temp_dir("bench-suite-clblast-params");
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << R"({"best_kernel": "Xgemm"})";
  r = run_gemmtune(base_args() + " --shapes 64x64x64 --clblast-params " + bad);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("not a clblast-json export"));
  auto j =
      nlohmann::json::parse(slurp(source_path("tests/data/clblast_tuner_xgemm_reference.json")));
  j["results"][0]["parameters"].erase("MWG");  // CLBlast refuses an incomplete set
  std::ofstream(bad) << j.dump();
  r = run_gemmtune(base_args() + " --shapes 64x64x64 --clblast-params " + bad);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("OverrideParameters"));
}

TEST_CASE("bench-suite --random-shapes lists the same shapes for a seed and summarizes a run",
          "[cli][bench_suite][random]") {
  // The list for scripts/bench-cublas.py --shapes; nothing is measured (no --db needed).
  const std::string list = "bench-suite --random-shapes 6 --seed 7 --list-shapes";
  auto r = run_gemmtune(list);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out ==
        "2098x6185x61,4499x70x43,3236x4724x133,1714x2114x872,289x177x3230,172x7980x7909\n");
  CHECK(run_gemmtune(list).out == r.out);
  CHECK(run_gemmtune("bench-suite --random-shapes 6 --seed 8 --list-shapes").out != r.out);
  CHECK(run_gemmtune("bench-suite --random-shapes 2 --min-dim 64 --max-dim 64 --list-shapes").out ==
        "64x64x64,64x64x64\n");
  CHECK(run_gemmtune("bench-suite --shapes 8x9x10,11 --list-shapes").out == "8x9x10,11x11x11\n");

  // A run over random shapes: the rows are the listed shapes, the summary compares the sides.
  const std::string shapes = "--random-shapes 3 --seed 5 --min-dim 8 --max-dim 48";
  const auto listed = run_gemmtune("bench-suite " + shapes + " --list-shapes").out;
  r = run_gemmtune(base_args() + " " + shapes + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto report = j.get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 3);
  std::string ran;
  for (const auto& row : report.rows) ran += (ran.empty() ? "" : ",") + row.shape.to_string();
  CHECK(ran + "\n" == listed);
  CHECK_THAT(report.command, Catch::Contains("--random-shapes 3 --min-dim 8 --max-dim 48") &&
                                 Catch::Contains("--seed 5"));
  if (gemmtune::clblast_linked()) {
    const auto s = gemmtune::summarize_ratios(report, gemmtune::Peer::kCLBlast);
    REQUIRE(s.rows == 3);
    CHECK(j["summary"]["clblast"]["geomean"].get<double>() == Approx(s.geomean));
    CHECK(j["summary"]["clblast"]["worst"].get<double>() == s.worst);
    double worst = 1e300, logs = 0;
    for (const auto& row : report.rows) {
      worst = std::min(worst, *row.ratio);
      logs += std::log(*row.ratio);
    }
    CHECK(s.worst == worst);
    CHECK(s.geomean == Approx(std::exp(logs / 3)));
    const auto text = run_gemmtune(base_args() + " " + shapes);
    CHECK_THAT(text.out, Catch::Contains("gemmtune / CLBlast: geometric mean"));
  }
}

TEST_CASE("bench-suite refuses bad random-shape options with one line and exit 2",
          "[cli][bench_suite][random]") {
  for (const std::string args :
       {"--random-shapes 0 --list-shapes", "--random-shapes 3 --shapes 64 --list-shapes",
        "--random-shapes 3 --suite batched --list-shapes", "--min-dim 64 --list-shapes",
        "--random-shapes 3 --max-dim 50000 --list-shapes",
        "--random-shapes 3 --min-dim 20 --max-dim 10 --list-shapes",
        "--random-shapes 3 --min-dim 0 --list-shapes", "--random-shapes x --list-shapes"}) {
    const auto r = run_gemmtune("bench-suite " + args);
    INFO(args << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.out.empty());
  }
}

TEST_CASE("bench-suite rates memory-bound rows in bytes per second against a copy",
          "[cli][bench_suite][memory]") {
  const std::string dir = gemmtune::test::temp_dir("bench-suite-memory");
  const std::string md_path = dir + "/suite.md";
  // A vector times a matrix and a matrix times a vector: about half a flop per byte, below any
  // device's ridge point, and M or N of 1 where the profile states no figures.
  auto r =
      run_gemmtune(base_args() + " --shapes 1x256x320,320x1x256 --no-clblast --json -o " + md_path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto report = j.get<gemmtune::SuiteReport>();
  REQUIRE(report.rows.size() == 2);
  constexpr double kFloat = 4;
  for (const auto& row : report.rows) {
    REQUIRE(row.memory);
    const auto& s = row.shape;
    // A (M x K) and B (K x N) read once, C written once (beta is 0).
    CHECK(row.memory->bytes == kFloat * (s.m * s.k + s.k * s.n + s.m * s.n));
    CHECK(row.memory->copy_ms > 0);
    CHECK_FALSE(row.memory->rule.empty());
    REQUIRE(row.library.ok());
    CHECK(row.memory->gbs(row.library.wall.median_ms) > 0);
  }
  const auto& m = j.at("rows").at(0).at("memory");
  CHECK(m.at("copy_gbs").get<double>() > 0);
  CHECK(m.at("library_gbs").get<double>() > 0);
  const std::string md = slurp(md_path);
  CHECK_THAT(md, Catch::Contains("## Memory-bound rows") && Catch::Contains("copy GB/s"));
}

TEST_CASE("the memory suite lists matrix-vector shapes both ways round",
          "[cli][bench_suite][memory]") {
  auto r = run_gemmtune("bench-suite --suite memory --list-shapes");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("1x4096x4096") && Catch::Contains("4096x1x4096") &&
                        Catch::Contains("16x8192x8192") && Catch::Contains("8192x16x8192"));
}

}  // namespace gemmtune_tests::tools_test_cmd_bench_suite
