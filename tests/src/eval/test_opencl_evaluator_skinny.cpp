// SPDX-License-Identifier: Apache-2.0
// xgemm_skinny on the OpenCL device (PoCL in CI): results against Eigen (through the evaluator)
// for a small side of 1 to 40 rows with odd N and K, every layout, both storage orders and both
// SIDEs (so that the kernel view's small side is M or N), beta 0 with NaN in C, double and
// 16acc32 precision; and batches and epilogues, which it does not declare, refused as results.
#include <catch2/catch.hpp>

#include <vector>

#include "src/eval/opencl_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_skinny {

using namespace gemmtune;
using test::describe;

namespace {

constexpr const char* kKernel = "xgemm_skinny";
// Sizes of the small side: 1, around the register block (MB 4) and the defaults' 16, up to 40.
const std::vector<int64_t> kSmallSides{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 40};
constexpr double kAlpha = -1.5;
constexpr double kBeta = 0.75;

std::unique_ptr<test::TemplateEvaluators> make_evaluator() {
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.templates_dir = test::source_path("kernel_templates");
  o.cache_dir = test::test_device().cache_dir;
  return test::make_test_evaluator(o);
}

test::KernelCase problem(Shape shape, Order order, const std::string& layout, double alpha,
                         double beta) {
  test::KernelCase p = test::problem_of(kKernel, shape, order, layout);
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

// Odd N and K that vary with the small side, so that vectors of 4 and 8 cross the ends of N and
// K in different places.
Shape skinny_shape(int64_t m) {
  return Shape{m, 23 + 2 * (m % 5), 41 + 2 * (m % 7)};
}

void check_ok(test::TemplateEvaluators& ev, const test::KernelCase& p, const Configuration& c) {
  const Result r = ev.evaluate(p, c);
  INFO(describe(p, r));
  CHECK(r.status == Status::kOk);
  CHECK(r.max_error <= r.tolerance);
}

}  // namespace

TEST_CASE("xgemm_skinny agrees with Eigen for 1 to 40 rows in every layout and order on both sides",
          "[device][skinny]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const KernelSpec& spec = ev->spec(kKernel);
  for (int64_t side : {0, 1}) {
    // Small work-groups (16 work-items) keep PoCL quick; vectors of 4 and a row block of 4.
    const Configuration config = spec.complete(
        {{"SIDE", side}, {"WGJ", 4}, {"WGK", 4}, {"NWI", 4}, {"VW", 4}, {"MB", 4}, {"KU", 2}});
    for (int64_t m : kSmallSides) {
      for (auto order : {Order::kRowMajor, Order::kColMajor}) {
        for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
          check_ok(*ev, problem(skinny_shape(m), order, layout, kAlpha, kBeta), config);
        }
      }
    }
    // beta == 0: C starts as NaN on the device and must not be read.
    for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
      for (auto order : {Order::kRowMajor, Order::kColMajor}) {
        check_ok(*ev, problem(Shape{3, 45, 37}, order, layout, 2.0, 0.0), config);
      }
    }
  }
}

TEST_CASE("xgemm_skinny's ci space agrees with Eigen on a skinny shape",
          "[device][skinny][optimized]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const ParamSpace space(ev->spec(kKernel), "ci",
                         device_limits(test::test_device().device->info, nullptr),
                         Context{{"ELEM_BYTES", 4}});
  const auto configs = space.enumerate();
  REQUIRE(configs.size() >= 8);
  // Eight configurations spread over the space, the orders in turn (each is another build): the
  // small side is the kernel view's M in one, N in the other. Odd sizes take the element-aligned
  // vector loads, multiples of the vector width (dense, offset 0) the aligned ones.
  for (size_t i = 0; i < 8; ++i) {
    const Configuration& c = configs[i * (configs.size() - 1) / 7];
    const Order order = i % 2 == 0 ? Order::kRowMajor : Order::kColMajor;
    for (const Shape& shape : {Shape{5, 67, 61}, Shape{8, 64, 96}}) {
      check_ok(*ev, problem(shape, order, "TN", kAlpha, kBeta), c);
    }
  }
}

TEST_CASE("xgemm_skinny computes in double and 16acc32 precision", "[device][skinny]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const KernelSpec& spec = ev->spec(kKernel);
  std::vector<Precision> precisions{Precision::kFP16Acc32};
  if (test::test_device().device->info.has_fp64) precisions.push_back(Precision::kFP64);
  for (Precision precision : precisions) {
    for (int64_t side : {0, 1}) {
      const Configuration config = spec.complete({{"SIDE", side}, {"VW", 8}, {"NWI", 8}});
      for (const std::string layout : {"NT", "TN"}) {
        test::KernelCase p = problem(Shape{6, 33, 51}, Order::kRowMajor, layout, kAlpha, kBeta);
        p.precision = precision;
        check_ok(*ev, p, config);
      }
    }
  }
}

TEST_CASE("xgemm_skinny refuses batches and epilogues as unsupported results", "[device][skinny]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const Configuration config = ev->spec(kKernel).defaults();
  test::KernelCase batched = problem(Shape{4, 32, 32}, Order::kRowMajor, "NN", 1.0, 0.0);
  batched.batch = 3;
  Result r = ev->evaluate(batched, config);
  CHECK(r.status == Status::kUnsupported);
  CHECK_THAT(r.message, Catch::Contains("does not support batched problems"));
  test::KernelCase with_bias = problem(Shape{4, 32, 32}, Order::kRowMajor, "NN", 1.0, 0.0);
  with_bias.epilogue = parse_epilogue("bias");
  r = ev->evaluate(with_bias, config);
  CHECK(r.status == Status::kUnsupported);
  CHECK_THAT(r.message, Catch::Contains("no fused epilogue"));
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_skinny
