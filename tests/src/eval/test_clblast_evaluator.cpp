// SPDX-License-Identifier: Apache-2.0
// Exports checked against the real CLBlast, and the evaluator that tunes CLBlast's kernels. Each
// CLBlast program takes tens of seconds to compile on PoCL, so these tests share one parameter
// set (the driver's kernel cache then serves the repeats).
#include <catch2/catch.hpp>

#include "src/eval/clblast_evaluator.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "tests/test_support.hpp"

#ifdef GEMMTUNE_HAVE_CLBLAST

#include <random>
#include <unordered_map>

#include <clblast.h>
#include <Eigen/Dense>

#include "src/db/database.hpp"
#include "src/db/export.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_clblast_evaluator {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

ProfileSet& profiles() {
  static ProfileSet set = ProfileSet::load_dir(source_path("devices"));
  return set;
}

Device test_device() {
  return select_device("", &profiles());
}

// A gemmtune xgemm entry with small tiles, so that the CLBlast program compiles quickly.
DatabaseEntry small_xgemm_entry() {
  DatabaseEntry e;
  e.key.kernel = "xgemm";
  e.key.shape = Shape{70, 50, 40};
  e.parameters = {{"MWG", 16},  {"NWG", 16}, {"KWG", 16}, {"MDIMC", 8}, {"NDIMC", 8}, {"MDIMA", 8},
                  {"NDIMB", 8}, {"KWI", 2},  {"VWM", 1},  {"VWN", 1},   {"STRM", 0},  {"STRN", 0},
                  {"SA", 0},    {"SB", 0},   {"PADA", 0}, {"PADB", 0}};
  e.gflops = 1;
  return e;
}

std::unordered_map<std::string, size_t> as_override(const ClblastParameters& p) {
  std::unordered_map<std::string, size_t> out;
  for (const auto& [name, value] : p.parameters) out[name] = static_cast<size_t>(value);
  return out;
}

}  // namespace

TEST_CASE("exported parameter names are exactly those CLBlast requires", "[clblast][export]") {
  const auto device = test_device();
  const auto db = Database::load(source_path("tests/data/db_gfx1012.json"));
  int checked = 0;
  for (const auto& e : db.entries()) {
    std::string why;
    const auto p = to_clblast(e, &why);
    if (!p) continue;
    INFO(e.key.to_string());
    const auto params = as_override(*p);
    // CLBlast accepts the full set, and refuses it when any single name is missing: so every
    // exported name is one CLBlast needs, and none it needs is absent.
    CHECK(clblast::OverrideParameters(device.device(), p->kernel, clblast::Precision::kSingle,
                                      params) == clblast::StatusCode::kSuccess);
    for (const auto& [name, value] : params) {
      auto fewer = params;
      fewer.erase(name);
      INFO("without " << name);
      CHECK(clblast::OverrideParameters(device.device(), p->kernel, clblast::Precision::kSingle,
                                        fewer) == clblast::StatusCode::kMissingOverrideParameter);
    }
    ++checked;
  }
  CHECK(checked == 3);
}

TEST_CASE("an exported override keeps clblast::Gemm correct against Eigen",
          "[clblast][export][pocl]") {
  const auto device = test_device();
  std::string why;
  const auto entry = small_xgemm_entry();
  const auto p = to_clblast(entry, &why);
  REQUIRE(p);
  REQUIRE(clblast::OverrideParameters(device.device(), p->kernel, clblast::Precision::kSingle,
                                      as_override(*p)) == clblast::StatusCode::kSuccess);
  // Force the indirect kernel, the one the override configures.
  REQUIRE(clblast::OverrideParameters(device.device(), "GemmRoutine", clblast::Precision::kSingle,
                                      {{"XGEMM_MIN_INDIRECT_SIZE", 0}}) ==
          clblast::StatusCode::kSuccess);

  const size_t m = entry.key.shape.m, n = entry.key.shape.n, k = entry.key.shape.k;
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  RowMatrix a(m, k), b(k, n), c(m, n);
  for (auto* mat : {&a, &b, &c}) {
    for (Eigen::Index i = 0; i < mat->size(); ++i) mat->data()[i] = dist(rng);
  }
  const float alpha = 1.5f, beta = 0.5f;
  const RowMatrix expected = alpha * (a.cast<double>() * b.cast<double>()).cast<float>() + beta * c;

  cl::Context context(device.device);
  cl::CommandQueue queue(context, device.device);
  auto buffer = [&](RowMatrix& mat) {
    return cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(float) * mat.size(),
                      mat.data());
  };
  cl::Buffer da = buffer(a), db_ = buffer(b), dc = buffer(c);
  cl_command_queue q = queue();
  const auto status = clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                           clblast::Transpose::kNo, m, n, k, alpha, da(), 0, k,
                                           db_(), 0, n, beta, dc(), 0, n, &q, nullptr);
  REQUIRE(status == clblast::StatusCode::kSuccess);
  RowMatrix got(m, n);
  queue.enqueueReadBuffer(dc, CL_TRUE, 0, sizeof(float) * got.size(), got.data());
  const double err = (got - expected).cwiseAbs().maxCoeff();
  CHECK(err < 1e-4);

  // The indirect kernel ran: for a shape that is not a multiple of the 16x16 tile it needs a
  // temporary buffer for padded copies (the direct kernel needs none).
  size_t temp = 0;
  REQUIRE(clblast::GemmTempBufferSize<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                             clblast::Transpose::kNo, m, n, k, 0, k, 0, n, 0, n, &q,
                                             temp) == clblast::StatusCode::kSuccess);
  CHECK(temp > 0);
}

TEST_CASE("the clblast evaluator measures and verifies CLBlast's Xgemm", "[clblast][pocl]") {
  REQUIRE(clblast_available());
  const auto device = test_device();
  EvaluatorOptions options;
  options.templates_dir = source_path("kernel_templates");
  options.measure.min_runs = 2;
  options.measure.min_time_ms = 1;
  auto evaluator =
      make_evaluator("clblast-xgemm", device, profiles().find(device.info.profile), options);
  CHECK(evaluator->spec().backend() == Backend::kClblast);
  CHECK(evaluator->spec().clblast_kernel() == "Xgemm");
  Problem problem;
  problem.shape = Shape{70, 50, 40};
  problem.alpha = 1.5;
  problem.beta = 0.5;
  // The same parameters as the export test: CLBlast's program comes from the kernel cache.
  Configuration config = small_xgemm_entry().parameters;
  config.erase("PADA");
  config.erase("PADB");
  const Result r = evaluator->evaluate(problem, config);
  INFO(r.message);
  REQUIRE(r.status == Status::kOk);
  CHECK(r.gflops > 0);
  CHECK(r.time.runs >= 2);
  CHECK(r.max_error <= r.tolerance);
  CHECK(r.config.at("GEMMK") == 0);

  // Configurations the spec rules out never reach CLBlast.
  auto bad = config;
  bad["KWI"] = 3;
  CHECK(evaluator->evaluate(problem, bad).status == Status::kInvalid);
  bad = config;
  bad["MWG"] = 32;
  bad["VWM"] = 8;  // 32 % (8 * 8) != 0
  CHECK(evaluator->evaluate(problem, bad).status == Status::kInvalid);
  bad = config;
  bad["NOPE"] = 1;
  CHECK(evaluator->evaluate(problem, bad).status == Status::kInvalid);
  Problem batched = problem;
  batched.batch = 2;
  CHECK(evaluator->evaluate(batched, config).status == Status::kUnsupported);
}

TEST_CASE("the clblast evaluator runs XgemmDirect when asked", "[clblast][pocl][slow]") {
  const auto device = test_device();
  EvaluatorOptions options;
  options.templates_dir = source_path("kernel_templates");
  options.measure.min_runs = 1;
  options.measure.min_time_ms = 1;
  auto evaluator =
      make_evaluator("clblast-xgemm-direct", device, profiles().find(device.info.profile), options);
  Problem problem;
  // Large enough that CLBlast would pick the indirect kernel by default.
  problem.shape = Shape{520, 33, 17};
  problem.trans_b = true;
  // The evaluator checks with GemmTempBufferSize that CLBlast chose the direct kernel.
  Configuration config = {{"WGD", 8},  {"MDIMCD", 8}, {"NDIMCD", 8}, {"MDIMAD", 8}, {"NDIMBD", 8},
                          {"KWID", 2}, {"VWMD", 1},   {"VWND", 1},   {"PADA", 0},   {"PADB", 0}};
  const Result r = evaluator->evaluate(problem, config);
  INFO(r.message);
  REQUIRE(r.status == Status::kOk);
  CHECK(r.max_error <= r.tolerance);
}

}  // namespace gemmtune_tests::src_eval_test_clblast_evaluator

#else

TEST_CASE("without CLBlast the clblast evaluator is refused", "[clblast]") {
  using namespace gemmtune;
  CHECK_FALSE(clblast_available());
  EvaluatorOptions options;
  options.templates_dir = test::source_path("kernel_templates");
  const auto devices = list_devices(nullptr);
  REQUIRE_FALSE(devices.empty());
  CHECK_THROWS_WITH(make_evaluator("clblast-xgemm", devices.front(), nullptr, options),
                    Catch::Contains("without CLBlast"));
}

#endif
