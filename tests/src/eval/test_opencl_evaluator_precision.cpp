// SPDX-License-Identifier: Apache-2.0
// Precisions other than FP32 on the OpenCL device (PoCL in CI): FP64 and 16acc32 (half storage,
// float arithmetic) agree with Eigen over awkward shapes in every layout and order for each
// template; pure FP16 runs where cl_khr_fp16 exists and is refused with a clear message
// elsewhere. Also the tolerance rule for half storage.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/verify/reference.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_precision {

using namespace gemmtune;

using test::describe;

namespace {

// The largest max_error / tolerance a correct 16acc32 kernel shows on these small shapes is far
// below 1; a result that needs the whole tolerance would point at a wrong rounding.
constexpr double kHalfStorageErrorShare = 0.75;

const test::TestDevice& bench() {
  return test::test_device();
}

// Binaries go to the default cache ($XDG_CACHE_HOME/gemmtune under ctest), so that the test
// processes share each compiled configuration.
std::unique_ptr<test::TemplateEvaluators> make_evaluator() {
  return test::make_test_evaluator(test::quick_evaluator_options());
}

const std::vector<Shape>& awkward_shapes() {
  static const std::vector<Shape> shapes{{1, 1, 1}, {7, 13, 5}, {33, 65, 17}, {100, 1, 300}};
  return shapes;
}

// Every awkward shape in every layout and order with alpha and beta set, then beta == 0 (C is
// NaN on the device and must not be read) on one shape per layout. Row- and column-major
// problems of one layout share a kernel build (the row-major mapping swaps the transposes), so
// each template compiles four variants per precision.
void check_all_layouts(const std::string& kernel, Precision precision) {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const Configuration config = test::small_config(*ev, kernel);
  for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
    for (auto order : {Order::kRowMajor, Order::kColMajor}) {
      for (const auto& shape : awkward_shapes()) {
        test::KernelCase p = test::problem_of(kernel, shape, order, layout);
        p.precision = precision;
        p.alpha = -1.5;
        p.beta = 0.75;
        const Result r = ev->evaluate(p, config);
        INFO(describe(p, r));
        CHECK(r.status == Status::kOk);
        CHECK(r.tolerance == Approx(relative_tolerance(precision, shape.k)));
      }
      test::KernelCase p = test::problem_of(kernel, Shape{33, 65, 17}, order, layout);
      p.precision = precision;
      p.alpha = 2.0;
      p.beta = 0.0;
      const Result r = ev->evaluate(p, config);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
      if (precision == Precision::kFP16Acc32) {
        CHECK(r.max_error <= kHalfStorageErrorShare * r.tolerance);
      }
    }
  }
}

bool has_fp64() {
  if (!bench().device) {
    test::unavailable("no OpenCL device");
    return false;
  }
  if (!bench().device->info.has_fp64) {
    test::unavailable("the device has no cl_khr_fp64");
    return false;
  }
  return true;
}

}  // namespace

TEST_CASE("16acc32 tolerance: float accumulation plus one rounding to half", "[reference]") {
  const double u_half = std::ldexp(1.0, -11);
  const double u_float = std::ldexp(1.0, -24);
  CHECK(unit_roundoff(Precision::kFP16Acc32) == u_half);
  CHECK(accumulation_roundoff(Precision::kFP16Acc32) == u_float);
  CHECK(relative_tolerance(Precision::kFP16Acc32, 400) ==
        Approx(kToleranceFactor * u_float * 20 + kStorageRoundingFactor * u_half));
  // Far tighter than half accumulation over a long K, and never below one half rounding.
  CHECK(relative_tolerance(Precision::kFP16Acc32, 4096) <
        relative_tolerance(Precision::kFP16, 4096) / 10);
  CHECK(relative_tolerance(Precision::kFP16Acc32, 1) > u_half);
  // The other precisions keep the accumulation-only rule.
  CHECK(relative_tolerance(Precision::kFP32, 400) == Approx(kToleranceFactor * u_float * 20));
  CHECK(relative_tolerance(Precision::kFP16, 1) == Approx(kToleranceFactor * u_half));
}

TEST_CASE("16acc32 results rounded to half pass, a dropped term does not", "[reference]") {
  Problem p;
  p.shape = Shape{3, 2, 64};  // short enough that one term outweighs half's rounding
  p.order = Order::kColMajor;
  p.precision = Precision::kFP16Acc32;
  p.alpha = 0.5;
  p.beta = -1.0;
  const auto in = make_inputs(p, 11);
  for (double v : in.a) CHECK(v == round_to_precision(v, Precision::kFP16));
  const Reference ref(p, in);
  // What a 16acc32 kernel computes: float sums in order, one rounding to half at the end.
  std::vector<double> c(6);
  for (int j = 0; j < 2; ++j) {
    for (int i = 0; i < 3; ++i) {
      float sum = 0;
      for (int k = 0; k < 64; ++k) {
        sum += static_cast<float>(in.a[i + 3 * k]) * static_cast<float>(in.b[k + 64 * j]);
      }
      const float out = 0.5f * sum - static_cast<float>(in.c[i + 3 * j]);
      c[i + 3 * j] = round_to_precision(out, Precision::kFP16Acc32);
    }
  }
  const auto ok = ref.check(c);
  CHECK(ok.ok);
  CHECK(ok.max_error <= ok.tolerance);
  c[4] -= 0.5 * in.a[1 + 3 * 63] * in.b[63 + 64 * 1];  // drop the last term of C(1,1)
  CHECK_FALSE(ref.check(c).ok);
}

TEST_CASE("16acc32 builds as PRECISION=1632", "[kernel_spec]") {
  CHECK(precision_define(Precision::kFP16Acc32) == 1632);
  CHECK(precision_define(Precision::kFP16) == 16);
  const std::string opts = build_options({{"WGD", 8}}, Precision::kFP16Acc32, false, true, "");
  CHECK(opts == "-DWGD=8 -DPRECISION=1632 -DTRANSA=0 -DTRANSB=1");
  CHECK(compute_bytes(Precision::kFP16Acc32) == 4);
  CHECK(element_bytes(Precision::kFP16Acc32) == 2);
}

TEST_CASE("xgemm_direct in FP64 over awkward shapes, layouts and orders", "[device][precision]") {
  if (has_fp64()) check_all_layouts("xgemm_direct", Precision::kFP64);
}

TEST_CASE("xgemm_direct in 16acc32 over awkward shapes, layouts and orders",
          "[device][precision]") {
  check_all_layouts("xgemm_direct", Precision::kFP16Acc32);
}

TEST_CASE("xgemm in FP64 over awkward shapes, layouts and orders", "[device][precision]") {
  if (has_fp64()) check_all_layouts("xgemm", Precision::kFP64);
}

TEST_CASE("xgemm in 16acc32 over awkward shapes, layouts and orders", "[device][precision]") {
  check_all_layouts("xgemm", Precision::kFP16Acc32);
}

TEST_CASE("xgemm_fast in FP64 over awkward shapes, layouts and orders", "[device][precision]") {
  if (has_fp64()) check_all_layouts("xgemm_fast", Precision::kFP64);
}

TEST_CASE("xgemm_fast in 16acc32 over awkward shapes, layouts and orders",
          "[device][precision][optimized]") {
  check_all_layouts("xgemm_fast", Precision::kFP16Acc32);
}

TEST_CASE("xgemm_fast 16acc32 with split-K in two launches or one and without local memory",
          "[device][precision]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  test::KernelCase p;
  p.kernel = "xgemm_fast";
  p.shape = Shape{33, 65, 17};
  p.order = Order::kColMajor;
  p.precision = Precision::kFP16Acc32;
  p.alpha = 1.25;
  p.beta = -0.5;
  Configuration split = test::small_config(*ev, "xgemm_fast");
  split["SPLITK"] = 3;
  // The float parts of half storage added in the main kernel.
  Configuration one_launch = split;
  one_launch["KREDUCE"] = 1;
  Configuration direct = test::small_config(*ev, "xgemm_fast");
  direct["LDS"] = 0;
  direct["STAGES"] = 1;
  direct["PREFETCH"] = 0;
  for (const auto& c : {split, one_launch, direct}) {
    const Result r = ev->evaluate(p, c);
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
  }
}

TEST_CASE("pure FP16 runs with cl_khr_fp16 and is refused clearly without it",
          "[device][precision]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const bool fp16 = bench().device->info.has_fp16;
  for (const std::string kernel : {"xgemm_direct", "xgemm", "xgemm_fast"}) {
    test::KernelCase p;
    p.kernel = kernel;
    p.shape = Shape{7, 13, 5};
    p.precision = Precision::kFP16;
    p.alpha = 1.5;
    p.beta = 0.5;
    const Result r = ev->evaluate(p, test::small_config(*ev, kernel));
    INFO(describe(p, r));
    if (fp16) {
      CHECK(r.status == Status::kOk);
    } else {
      // Said before any build: a line naming the extension, never a build log.
      CHECK(r.status == Status::kUnsupported);
      CHECK_THAT(r.message,
                 Catch::Contains("not supported by this device") && Catch::Contains("cl_khr_fp16"));
      CHECK(r.compile_ms == 0);
    }
  }
  if (!fp16) WARN("the device has no cl_khr_fp16: checked the refusal only");
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_precision
