// SPDX-License-Identifier: Apache-2.0
// The GEMM templates on the OpenCL device (PoCL on a CPU in CI): every result is checked against
// Eigen by the evaluator; these tests check that correct kernels pass in every shape, layout and
// order, and that wrong ones, broken ones and invalid configurations are reported as such.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "src/core/json_util.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator {

using namespace gemmtune;
namespace fs = std::filesystem;

using test::describe;

namespace {

// Two readings of one device clock agree to its resolution: a little slack for rounding.
constexpr double kEventRounding = 1.01;

const test::TestDevice& bench() {
  return test::test_device();
}

test::EvaluatorSettings quick_options(const std::string& templates) {
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.templates_dir = templates;
  o.cache_dir = bench().cache_dir;
  return o;
}

std::unique_ptr<test::TemplateEvaluators> make_evaluator(const std::string& templates = "") {
  return test::make_test_evaluator(
      quick_options(templates.empty() ? test::source_path("kernel_templates") : templates));
}

test::KernelCase problem(const std::string& kernel, Shape shape, Order order,
                         const std::string& layout, double alpha, double beta) {
  test::KernelCase p = test::problem_of(kernel, shape, order, layout);
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// A copy of the templates folder whose xgemm and xgemm_direct store their outputs through the
// test-only wrapper tests/data/gemm_tile_store_perturbed.cl, with a TEST_PERTURB parameter that
// picks its fault; the shipped templates have no test hooks.
std::string perturbable_templates() {
  const std::string dir = test::temp_dir("perturb");
  for (const auto& f : fs::directory_iterator(test::source_path("kernel_templates"))) {
    fs::copy_file(f.path(), fs::path(dir) / f.path().filename());
  }
  fs::rename(dir + "/gemm_tile_store.cl", dir + "/gemm_tile_store_exact.cl");
  fs::copy_file(test::source_path("tests/data/gemm_tile_store_perturbed.cl"),
                dir + "/gemm_tile_store.cl");
  for (const std::string name : {"xgemm", "xgemm_direct"}) {
    auto j = read_json_file(dir + "/" + name + ".json");
    j["parameters"].push_back(
        {{"name", "TEST_PERTURB"}, {"values", {0, 1, 2, 3}}, {"default", 0}, {"help", "test"}});
    write_json_atomic(dir + "/" + name + ".json", j);
  }
  return dir;
}

}  // namespace

TEST_CASE("a sample of each ci space agrees with Eigen on an awkward shape",
          "[device][xgemm][optimized]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const auto& b = bench();
  for (const std::string kernel : {"xgemm", "xgemm_direct"}) {
    const KernelSpec& spec = ev->spec(kernel);
    const ParamSpace space(spec, "ci", device_limits(b.device->info, nullptr),
                           Context{{"ELEM_BYTES", 4}});
    const auto configs = space.enumerate();
    REQUIRE(configs.size() >= 4);
    // Four configurations spread evenly over the space, compiled ahead through prepare().
    std::vector<Configuration> sample;
    for (size_t i = 0; i < 4; ++i) sample.push_back(configs[i * (configs.size() - 1) / 3]);
    const test::KernelCase p = problem(kernel, Shape{67, 45, 33}, Order::kRowMajor, "NN", 1.0, 0.0);
    ev->prepare(p, sample);
    for (const auto& c : sample) {
      const Result r = ev->evaluate(p, c);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
      CHECK(r.gflops > 0);
      CHECK(r.max_error <= r.tolerance);
      CHECK(r.time.runs >= 1);
      CHECK(r.usage.local_mem_bytes.has_value());
      CHECK(r.helper_kernels == (kernel == "xgemm"));  // 67x45x33 fits no xgemm tile
    }
  }
}

TEST_CASE("awkward shapes in every layout and order agree with Eigen",
          "[device][xgemm][optimized]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const std::vector<Shape> shapes{{1, 1, 1}, {17, 33, 65}, {1, 4096, 7}, {257, 255, 1}};
  for (const std::string kernel : {"xgemm", "xgemm_direct"}) {
    // Small tiles keep the padded work small; vectors of 2 exercise the vector paths.
    const Configuration config = kernel == "xgemm" ? ev->spec(kernel).complete({{"MWG", 16},
                                                                                {"NWG", 16},
                                                                                {"KWG", 16},
                                                                                {"MDIMC", 8},
                                                                                {"NDIMC", 8},
                                                                                {"MDIMA", 8},
                                                                                {"NDIMB", 8}})
                                                   : ev->spec(kernel).defaults();
    for (const auto& shape : shapes) {
      for (auto order : {Order::kRowMajor, Order::kColMajor}) {
        for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
          const test::KernelCase p = problem(kernel, shape, order, layout, -1.5, 0.75);
          const Result r = ev->evaluate(p, config);
          INFO(describe(p, r));
          CHECK(r.status == Status::kOk);
        }
      }
    }
    // beta == 0: C starts as NaN on the device and must not be read.
    for (const std::string layout : {"NN", "TT"}) {
      const test::KernelCase p =
          problem(kernel, Shape{17, 33, 65}, Order::kRowMajor, layout, 2.0, 0.0);
      const Result r = ev->evaluate(p, config);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
    }
  }
}

TEST_CASE("double precision agrees with Eigen", "[device][xgemm]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  if (!bench().device->info.has_fp64) return test::unavailable("the device has no cl_khr_fp64");
  for (const std::string kernel : {"xgemm", "xgemm_direct"}) {
    test::KernelCase p = problem(kernel, Shape{33, 17, 40}, Order::kColMajor, "NT", 0.5, -1.0);
    p.precision = Precision::kFP64;
    const Result r = ev->evaluate(p, ev->spec(kernel).defaults());
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
    CHECK(r.tolerance < 1e-12);
  }
}

TEST_CASE("verification catches wrong kernels", "[device][xgemm]") {
  const std::string templates = perturbable_templates();
  auto ev = make_evaluator(templates);
  if (!ev) return test::unavailable("no OpenCL device");
  for (const std::string kernel : {"xgemm", "xgemm_direct"}) {
    Configuration c = ev->spec(kernel).defaults();
    const test::KernelCase with_c =
        problem(kernel, Shape{40, 24, 48}, Order::kRowMajor, "NN", 1.0, 1.0);
    const test::KernelCase no_c =
        problem(kernel, Shape{40, 24, 48}, Order::kRowMajor, "NN", 1.0, 0.0);
    if (kernel == "xgemm_direct") {
      // Its edge path (40 x 24 crosses tiles) must not read C when beta == 0 either.
      c["TEST_PERTURB"] = 3;
      const Result r = ev->evaluate(no_c, c);
      CHECK(r.status == Status::kWrongResult);
      CHECK_THAT(r.message, Catch::Contains("NaN"));
      continue;
    }
    c["TEST_PERTURB"] = 0;
    CHECK(ev->evaluate(with_c, c).status == Status::kOk);
    c["TEST_PERTURB"] = 1;  // one output vector 1% off
    Result r = ev->evaluate(with_c, c);
    CHECK(r.status == Status::kWrongResult);
    CHECK(r.max_error > r.tolerance);
    CHECK_THAT(r.message, Catch::Contains("exceeds tolerance"));
    c["TEST_PERTURB"] = 2;  // NaN in one output
    r = ev->evaluate(with_c, c);
    CHECK(r.status == Status::kWrongResult);
    CHECK_THAT(r.message, Catch::Contains("NaN"));
    c["TEST_PERTURB"] = 3;  // reads C although beta == 0: right with beta != 0 ...
    CHECK(ev->evaluate(with_c, c).status == Status::kOk);
    r = ev->evaluate(no_c, c);  // ... and caught by the NaN-filled C otherwise
    CHECK(r.status == Status::kWrongResult);
    CHECK_THAT(r.message, Catch::Contains("NaN"));
  }
}

TEST_CASE("every check starts from C as the problem gives it and not as the last call left it",
          "[device][xgemm]") {
  auto ev = make_evaluator(perturbable_templates());
  if (!ev) return test::unavailable("no OpenCL device");
  // xgemm_direct writes C in place (xgemm would pad it into scratch, NaN-filled at each bind).
  Configuration c = ev->spec("xgemm_direct").defaults();
  const test::KernelCase no_c =
      problem("xgemm_direct", Shape{40, 24, 48}, Order::kRowMajor, "NN", 1.0, 0.0);
  // A right kernel leaves the right C behind, which a kernel reading C although beta == 0 would
  // pass unnoticed were C not set to NaN again before its check.
  c["TEST_PERTURB"] = 0;
  REQUIRE(ev->evaluate(no_c, c).status == Status::kOk);
  c["TEST_PERTURB"] = 3;
  const Result r = ev->evaluate(no_c, c);
  CHECK(r.status == Status::kWrongResult);
  CHECK_THAT(r.message, Catch::Contains("NaN"));
  c["TEST_PERTURB"] = 0;
  CHECK(ev->evaluate(no_c, c).status == Status::kOk);
}

TEST_CASE("a result says where the evaluating process spent its time", "[device][xgemm]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const test::KernelCase p = problem("xgemm", Shape{64, 64, 64}, Order::kRowMajor, "NN", 1.0, 0.0);
  const Result r = ev->evaluate(p, ev->spec("xgemm").defaults());
  INFO(describe(p, r));
  REQUIRE(r.status == Status::kOk);
  CHECK(r.steps.program_ms > 0);
  CHECK(r.steps.verify_ms > 0);
  // Every queued call of every sample is in the timing step, which the per-call figures do not
  // show: at least the timed calls at their fastest.
  CHECK(r.steps.timing_ms >= 0.9 * r.time.runs * std::max(1, r.time.calls) * r.time.min_ms);
  CHECK(nlohmann::json(r)["steps_ms"]["timing"].get<double>() == r.steps.timing_ms);
  // A configuration that does not build took its time in the program step alone.
  Configuration broken = ev->spec("xgemm").defaults();
  broken["MWG"] = 24;
  const Result bad = ev->evaluate(p, broken);
  CHECK(bad.status != Status::kOk);
  CHECK(bad.steps.verify_ms == 0);
  CHECK(bad.steps.timing_ms == 0);
}

TEST_CASE("invalid configurations, build failures and unsupported problems are results",
          "[device][xgemm]") {
  const std::string templates = test::temp_dir("broken");
  for (const auto& f : fs::directory_iterator(test::source_path("kernel_templates"))) {
    fs::copy_file(f.path(), fs::path(templates) / f.path().filename());
  }
  {
    auto j = read_json_file(templates + "/xgemm.json");
    j["kernel"] = "broken";
    j["source"] = "broken.cl";
    write_json_atomic(templates + "/broken.json", j);
    std::ofstream(templates + "/broken.cl")
        << "#include \"xgemm.cl\"\n__kernel void extra() { undeclared_thing = 1; }\n";
  }
  auto ev = make_evaluator(templates);
  if (!ev) return test::unavailable("no OpenCL device");
  const test::KernelCase p = problem("xgemm", Shape{8, 8, 8}, Order::kRowMajor, "NN", 1.0, 0.0);
  Configuration c = ev->spec("xgemm").defaults();
  c["KWI"] = 8;
  c["KWG"] = 8;
  Result r = ev->evaluate(p, c);
  CHECK(r.status == Status::kInvalid);
  CHECK_THAT(r.message, Catch::Contains("KWG % ((MDIMC * NDIMC) / MDIMA) == 0"));
  c = ev->spec("xgemm").defaults();
  c.erase("SA");
  CHECK(ev->evaluate(p, c).status == Status::kInvalid);

  test::KernelCase bp = p;
  bp.kernel = "broken";
  r = ev->evaluate(bp, ev->spec("broken").defaults());
  CHECK(r.status == Status::kCompileFailed);
  CHECK_THAT(r.message, Catch::Contains("undeclared_thing"));

  // An unknown kernel has no evaluator at all (make_evaluator refuses it, naming the known).
  REQUIRE_THROWS_WITH(ev->spec("no_such_kernel"), Catch::Contains("known: "));

  test::KernelCase batched = p;
  batched.batch = 4;
  CHECK(ev->evaluate(batched, ev->spec("xgemm").defaults()).status == Status::kUnsupported);
}

TEST_CASE("a second evaluation of a configuration loads the cached binary", "[device][xgemm]") {
  auto& b = bench();
  if (!b.device) return test::unavailable("no OpenCL device");
  auto options = quick_options(test::source_path("kernel_templates"));
  options.cache_dir = test::temp_dir("fresh-cache");
  const test::KernelCase p =
      problem("xgemm_direct", Shape{16, 16, 16}, Order::kColMajor, "NN", 1.0, 0.0);
  Configuration c;
  {
    test::TemplateEvaluators first(*b.device, nullptr, options);
    c = first.spec("xgemm_direct").complete({{"KWID", 8}, {"PADB", 0}});
    const Result r = first.evaluate(p, c);
    CHECK(r.status == Status::kOk);
    CHECK_FALSE(r.binary_cached);
  }
  test::TemplateEvaluators second(*b.device, nullptr, options);
  const Result r = second.evaluate(p, c);
  CHECK(r.status == Status::kOk);
  CHECK(r.binary_cached);
  // A different device options string is another binary.
  options.cache_dir = "none";
  test::TemplateEvaluators uncached(*b.device, nullptr, options);
  CHECK_FALSE(uncached.evaluate(p, c).binary_cached);
}

TEST_CASE("timing repeats until both the count and the time are reached", "[device][xgemm]") {
  auto& b = bench();
  if (!b.device) return test::unavailable("no OpenCL device");
  auto options = quick_options(test::source_path("kernel_templates"));
  options.min_runs = 4;
  options.min_time_ms = 0;
  options.max_runs = 10;
  test::TemplateEvaluators ev(*b.device, nullptr, options);
  const test::KernelCase p = problem("xgemm", Shape{64, 64, 64}, Order::kRowMajor, "NN", 1.0, 0.0);
  Result r = ev.evaluate(p, ev.spec("xgemm").defaults());
  REQUIRE(r.status == Status::kOk);
  CHECK(r.time.runs == 4);
  CHECK_FALSE(r.helper_kernels);  // 64^3 fits the default 64x64x32 tiles
  CHECK(r.time.min_ms <= r.time.median_ms);
  CHECK(r.time.median_ms <= r.time.max_ms);
  // One launch a call: the kernel's own event lies within the call's share of the queued span
  // (the span also holds the gaps between launches).
  CHECK(r.time.kernel_median_ms > 0);
  CHECK(r.time.kernel_median_ms <= r.time.median_ms * kEventRounding);
  CHECK(r.time.clock == TimingClock::kQueued);
  CHECK(r.gflops == Approx(p.flops() / (r.time.median_ms * 1e6)));
  options.min_runs = 1;
  options.min_time_ms = 1e9;  // unreachable: max_runs stops it
  test::TemplateEvaluators capped(*b.device, nullptr, options);
  r = capped.evaluate(p, capped.spec("xgemm").defaults());
  CHECK(r.time.runs == 10);
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator
