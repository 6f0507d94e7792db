// SPDX-License-Identifier: Apache-2.0
// The benchmark suite: the cuBLAS merge, the report formats, and a tiny suite run on the OpenCL
// device (PoCL in CI) whose gemmtune columns both run the library's choice.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "src/bench/bench_suite.hpp"
#include "src/core/error.hpp"
#include "src/device/device_profile.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_bench_test_bench_suite {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

// Two clocks of one call agree within this factor on a loaded CPU device.
constexpr double kSameOrderOfMagnitude = 0.1;

// The cells of each line ("| a | b |") of the first Markdown table of a document.
std::vector<std::vector<std::string>> markdown_table(const std::string& md) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(md);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '|') {
      if (!rows.empty()) break;  // the end of the first table
      continue;
    }
    std::vector<std::string> cells;
    std::string cell;
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cell += '|';
        ++i;
      } else if (line[i] == '|') {
        cells.push_back(cell.substr(1, cell.size() - 2));  // the padding spaces
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

SideResult ok_side(double gflops) {
  SideResult s;
  s.available = true;
  s.status = "ok";
  s.verified = true;
  s.checked = "all 64 outputs";
  s.gflops = gflops;
  s.gpu_gflops = gflops * 1.1;
  s.wall.median_ms = 1.0;
  s.wall.runs = 3;
  return s;
}

SuiteReport synthetic_report() {
  SuiteReport r;
  r.device.name = "Test GPU";
  r.device.platform_name = "Test platform";
  r.device.driver_version = "1.2.3";
  r.date = "2026-01-31T12:00:00Z";
  r.command = "gemmtune bench-suite --db a.json --shapes 64x64x64,33x17x65";
  r.gemmtune_version = "0.1.0";
  r.databases = {"a.json"};
  r.clblast = false;
  r.clblast_note = "CLBlast is not linked into this build";
  r.reps = 3;
  r.warmup = 1;
  SuiteRow a;
  a.shape = {64, 64, 64};
  Candidate c;
  c.kernel = "xgemm";
  c.parameters = {{"MWG", 32}, {"NWG", 32}};
  c.origin = "exact";
  c.tuned_shape = a.shape;
  c.database = "a.json";
  c.recorded_gflops = 10;
  a.chosen = c;
  a.gemmtune = ok_side(8.0);
  a.library = ok_side(7.5);
  LibraryChoice lc;
  lc.kernel = "xgemm_fast";
  lc.parameters = "MWG=64,NWG=64";
  lc.source = "user database";
  lc.database = "a.json";
  lc.entry = "xgemm_fast fp32 row NN b1 64x64x64";
  lc.exact = true;
  a.library_choice = lc;
  r.rows.push_back(a);
  SuiteRow b = a;
  b.library = SideResult{};  // n/a
  b.library.message = "not run here";
  b.library_choice.reset();
  b.shape = {33, 17, 65};
  b.chosen->origin = "nearest";
  b.chosen->tuned_shape = {64, 64, 64};
  CandidateTrial t;
  t.candidate = *b.chosen;
  t.status = "ok";
  t.gflops = 3.0;
  b.trials = {t, t};
  b.trials[1].status = "failed";
  b.trials[1].message = "does not build | really";
  b.gemmtune = ok_side(3.0);
  r.rows.push_back(b);
  return r;
}

}  // namespace

TEST_CASE("the default suite is the ten FP32 shapes of the issue", "[bench_suite]") {
  const auto shapes = default_suite_shapes();
  REQUIRE(shapes.size() == 10);
  CHECK(shapes.front() == Shape{256, 256, 256});
  CHECK(std::count(shapes.begin(), shapes.end(), Shape{4097, 4097, 4097}) == 1);
  CHECK(std::count(shapes.begin(), shapes.end(), Shape{8192, 64, 8192}) == 1);
  CHECK(std::count(shapes.begin(), shapes.end(), Shape{128, 4096, 1024}) == 1);
  CHECK(default_suite_kernels() == std::vector<std::string>{"xgemm", "xgemm_direct", "xgemm_fast"});
}

TEST_CASE("the report round-trips through JSON and renders a regular Markdown table",
          "[bench_suite]") {
  const SuiteReport r = synthetic_report();
  const nlohmann::json j = r;
  CHECK(j.at("format") == kBenchSuiteFormat);
  const SuiteReport back = j.get<SuiteReport>();
  CHECK(nlohmann::json(back) == j);
  CHECK(back.rows.size() == 2);
  CHECK(back.rows[1].trials[1].message == "does not build | really");
  CHECK_FALSE(back.rows[0].ratio.has_value());
  REQUIRE(back.rows[0].library_choice);
  CHECK(back.rows[0].library_choice->exact);
  CHECK_FALSE(back.rows[1].library.available);
  // A report from before the library column reads with the library n/a.
  nlohmann::json old = j;
  for (auto& row : old["rows"]) {
    for (const char* key : {"library", "library_choice", "library_ratio"}) row.erase(key);
  }
  const SuiteReport old_back = old.get<SuiteReport>();
  CHECK_FALSE(old_back.rows[0].library.available);
  CHECK_FALSE(old_back.rows[0].library_choice);
  CHECK(old_back.all_ok());

  const std::string md = suite_markdown(r);
  CHECK_THAT(md,
             Catch::Contains("Test GPU") && Catch::Contains("Driver: 1.2.3") &&
                 Catch::Contains("Date: 2026-01-31T12:00:00Z") &&
                 Catch::Contains("`gemmtune bench-suite --db a.json --shapes 64x64x64,33x17x65`"));
  const auto table = markdown_table(md);
  REQUIRE(table.size() == 4);  // header, separator, two rows
  for (const auto& row : table) CHECK(row.size() == table[0].size());
  const auto col = [&](const std::string& name) {
    return std::find(table[0].begin(), table[0].end(), name) - table[0].begin();
  };
  const auto clblast = col("CLBlast GFLOPS");
  const auto ratio = col("gemmtune / CLBlast");
  REQUIRE(clblast < static_cast<long>(table[0].size()));
  REQUIRE(ratio < static_cast<long>(table[0].size()));
  CHECK(table[2][clblast] == "n/a");
  CHECK(table[2][ratio] == "n/a");
  CHECK(table[2][col("gemmtune GFLOPS")] == "8.0");
  CHECK(table[2][col("library GFLOPS")] == "7.5");
  CHECK(table[3][col("library GFLOPS")] == "n/a");
  // A measured rate below 0.05 GFLOPS keeps two significant digits instead of reading 0.0.
  SuiteReport slow = r;
  slow.rows[0].library = ok_side(0.0342);
  CHECK(markdown_table(suite_markdown(slow))[2][col("library GFLOPS")] == "0.034");
  CHECK(table[2][col("Verified (gemmtune / library / CLBlast)")] == "ok / ok / n/a");
  CHECK_THAT(md, Catch::Contains("- library: xgemm_fast `MWG=64,NWG=64` (user database a.json, "
                                 "entry xgemm_fast fp32 row NN b1 64x64x64)") &&
                     Catch::Contains("33x17x65 fp32 library n/a: not run here"));
  CHECK_THAT(table[3][col("Configuration from")],
             Catch::Contains("nearest 64x64x64") && Catch::Contains("best of 2"));
  CHECK_THAT(md, Catch::Contains("does not build \\| really"));
  // A row served by the chooser's measured step says so (it once read "template defaults").
  SuiteReport measured = r;
  measured.rows[1].chosen->origin = "measured";
  CHECK_THAT(markdown_table(suite_markdown(measured))[3][col("Configuration from")],
             Catch::StartsWith("measured: nearest 64x64x64"));
  CHECK_THAT(suite_text(r), Catch::Contains("33x17x65") && Catch::Contains("n/a"));

  // A NaN output's infinite error survives as null in JSON.
  SuiteReport wrong = r;
  wrong.rows[0].gemmtune.status = "wrong_result";
  wrong.rows[0].gemmtune.max_error = std::numeric_limits<double>::infinity();
  const nlohmann::json wj = wrong;
  CHECK(wj["rows"][0]["gemmtune"]["max_error"].is_null());
  CHECK(std::isinf(wj.get<SuiteReport>().rows[0].gemmtune.max_error));
  CHECK_FALSE(wrong.all_ok());
  CHECK(r.all_ok());
  CHECK_THAT(suite_markdown(wrong), Catch::Contains("WRONG") && Catch::Contains("## Failures"));
}

TEST_CASE("a cuBLAS file adds a column matched by shape and epilogue", "[bench_suite]") {
  SuiteReport r = synthetic_report();
  nlohmann::json cublas = {
      {"format", kCublasBenchFormat},
      {"device", "NVIDIA H200"},
      {"torch", "2.5.0"},
      {"cuda", "12.4"},
      {"results",
       {{{"m", 64},
         {"n", 64},
         {"k", 64},
         {"epilogue", false},
         {"gflops", 20.0},
         {"wall_gflops", 16.0}},
        {{"m", 64}, {"n", 64}, {"k", 64}, {"epilogue", true}, {"gflops", 99.0}},
        {{"m", 512}, {"n", 512}, {"k", 512}, {"gflops", 1.0}}}}};
  merge_cublas(r, read_cublas_results(cublas, "cublas.json"));
  // Whole call against whole call, device time against device time: never one against the other.
  REQUIRE(r.rows[0].cublas_gflops);
  CHECK(*r.rows[0].cublas_gflops == 16.0);
  CHECK(*r.rows[0].cublas_ratio == Approx(r.rows[0].gemmtune.gflops / 16.0));
  REQUIRE(r.rows[0].cublas_device_gflops);
  CHECK(*r.rows[0].cublas_device_ratio == Approx(r.rows[0].gemmtune.gpu_gflops / 20.0));
  CHECK_FALSE(r.rows[1].cublas_gflops);
  CHECK_FALSE(r.rows[1].cublas_device_gflops);
  const nlohmann::json saved = r;
  const SuiteReport loaded = saved.get<SuiteReport>();
  CHECK(loaded.rows[0].cublas_gflops == r.rows[0].cublas_gflops);
  CHECK(loaded.rows[0].cublas_device_ratio == r.rows[0].cublas_device_ratio);
  CHECK(saved["summary"]["cublas_device"]["rows"] == 1);
  CHECK_THAT(r.cublas_source, Catch::Contains("NVIDIA H200"));
  const auto table = markdown_table(suite_markdown(r));
  for (const auto& row : table) CHECK(row.size() == table[0].size());
  CHECK(std::find(table[0].begin(), table[0].end(), "cuBLAS GFLOPS") != table[0].end());

  auto error_of = [&](const nlohmann::json& j) {
    try {
      read_cublas_results(j, "x.json");
    } catch (const Error& e) {
      CHECK(e.code() == ErrorCode::kInvalidFile);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of(nlohmann::json::object()),
             Catch::Contains("x.json") && Catch::Contains("format"));
  CHECK_THAT(error_of({{"format", kCublasBenchFormat}}), Catch::Contains("results"));
  CHECK_THAT(error_of({{"format", kCublasBenchFormat},
                       {"results", {{{"m", 64}, {"n", -1}, {"k", 64}, {"gflops", 1.0}}}}}),
             Catch::Contains("results[0]") && Catch::Contains("'n'"));
  CHECK_THAT(
      error_of({{"format", kCublasBenchFormat}, {"results", {{{"m", 64}, {"n", 64}, {"k", 64}}}}}),
      Catch::Contains("gflops"));
}

// Slow only the first time on a machine: CLBlast's first Gemm call builds its whole GEMM program
// (about a minute on a busy 2-core PoCL machine); PoCL caches it for every later process.
TEST_CASE("the suite runs tiny shapes on the OpenCL device, both sides verified",
          "[bench_suite][opencl][slow]") {
  const auto profiles = ProfileSet::load_dir(source_path("devices"));
  const Device device = select_device("", &profiles);
  // The fixture as if tuned on this device: the library's chooser, which both gemmtune columns
  // run, applies a database to its own device only.
  std::vector<NamedDatabase> dbs;
  dbs.push_back({"fixture", Database::load(source_path("tests/data/bench_suite_db.json"))});
  dbs.back().db.device.name = device.info.name;
  BenchSuiteOptions o;
  o.shapes = {{64, 64, 64}, {33, 17, 65}};
  o.epilogue = true;
  o.reps = 3;
  o.warmup = 1;
  o.templates_dir = source_path("kernel_templates");
  o.cache_dir = gemmtune::test::temp_dir("bench-suite-cache");
  // A tiny limit forces the sampled verification on the 64^3 shape.
  o.full_check_limit = 40000;
  o.sample_band = 8;
  o.command = "test";
  const SuiteReport r = run_bench_suite(device, profiles.find(device.info.profile), dbs, o);

  REQUIRE(r.rows.size() == 4);
  CHECK(r.clblast == clblast_linked());
  CHECK(r.library_database == "fixture");
  for (const auto& row : r.rows) {
    INFO(row.shape.to_string() << (row.epilogue ? " epilogue" : "") << ": " << row.gemmtune.message
                               << " / " << row.clblast.message);
    CHECK(row.gemmtune.ok());
    CHECK(row.gemmtune.verified);
    CHECK(row.gemmtune.wall.runs == 3);
    CHECK(row.gemmtune.gflops > 0);
    // The GPU clock times other calls than the whole-call clock: on a loaded CPU device the two
    // can differ severalfold, so only the order of magnitude is checked.
    CHECK(row.gemmtune.gpu_gflops >= row.gemmtune.gflops * kSameOrderOfMagnitude);
    CHECK(row.gemmtune.tolerance > 0);
    CHECK(row.gemmtune.max_error <= row.gemmtune.tolerance);
    CHECK(row.library.ok());
    CHECK(row.library.wall.runs == 3);
    REQUIRE(row.chosen);
    // One chooser: the direct column runs what the library runs.
    REQUIRE(row.library_choice);
    CHECK(row.library_choice->kernel == row.chosen->kernel);
    CHECK(row.library_choice->parameters == to_string(row.chosen->parameters));
    if (clblast_linked()) {
      CHECK(row.clblast.ok());
      CHECK(row.clblast.verified);
      CHECK(row.clblast.wall.runs == 3);
      REQUIRE(row.ratio);
      CHECK(*row.ratio == Approx(row.gemmtune.gflops / row.clblast.gflops));
    } else {
      CHECK_FALSE(row.clblast.available);
      CHECK_FALSE(row.ratio);
    }
  }
  // 64^3: the fixture's fastest exact entry; verified on a sample of rows.
  CHECK(r.rows[0].chosen->kernel == "xgemm_direct");
  CHECK(r.rows[0].chosen->origin == "exact");
  CHECK(r.rows[0].trials.empty());
  // The first and last two rows and one of every band of 8: 8 to 12 rows of 64.
  CHECK_THAT(r.rows[0].gemmtune.checked, Catch::EndsWith(" of 64 rows (all 64 columns)"));
  CHECK(std::stoi(r.rows[0].gemmtune.checked) >= 8);
  CHECK(std::stoi(r.rows[0].gemmtune.checked) <= 12);
  // The fused epilogue runs on xgemm_fast, tuned only for 32^3.
  CHECK(r.rows[1].epilogue);
  CHECK(r.rows[1].chosen->kernel == "xgemm_fast");
  CHECK(r.rows[1].chosen->origin == "model");
  // 33x17x65 has no entry: the selection model chooses among the three kernels' entries, as the
  // library does (its chooser); nothing is measured to choose.
  CHECK(r.rows[2].chosen->origin == "model");
  CHECK(r.rows[2].chosen->predicted_gflops > 0);
  CHECK_FALSE(r.rows[2].chosen->reason.empty());
  CHECK(r.rows[2].trials.empty());
  CHECK(r.rows[2].gemmtune.checked == "all 561 outputs");
  CHECK(r.all_ok());

  const nlohmann::json j = r;
  CHECK(nlohmann::json(j.get<SuiteReport>()) == j);
}

TEST_CASE("a row is memory-bound below the profile's ridge point", "[bench_suite][memory]") {
  const DeviceProfile h100 = load_profile(source_path("devices/sm_90.json"));
  DeviceInfo device;
  device.name = "NVIDIA H100 80GB HBM3";
  device.compute_units = 132;
  device.max_clock_mhz = 1980;
  Problem gemv;
  gemv.shape = {1, 4096, 4096};
  const auto m = memory_bound(gemv, &h100, device);
  REQUIRE(m);
  CHECK(m->bytes == 4.0 * (4096 + 4096 * 4096 + 4096));
  CHECK(m->profile_gbs > 0);
  CHECK_THAT(m->rule, Catch::Contains("flops per byte"));
  Problem square;
  square.shape = {4096, 4096, 4096};
  CHECK_FALSE(memory_bound(square, &h100, device));
  // beta != 0 reads C as well.
  gemv.beta = 1;
  CHECK(memory_bound(gemv, &h100, device)->bytes == 4.0 * (4096 + 4096 * 4096 + 2 * 4096));
  // Without a profile: M or N of at most 16.
  Problem few;
  few.shape = {16, 4096, 4096};
  CHECK(memory_bound(few, nullptr, device));
  few.shape = {17, 4096, 4096};
  CHECK_FALSE(memory_bound(few, nullptr, device));
}

}  // namespace gemmtune_tests::src_bench_test_bench_suite
