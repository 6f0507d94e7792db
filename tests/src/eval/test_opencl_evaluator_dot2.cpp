// SPDX-License-Identifier: Apache-2.0
// xgemm_fast with DOT2=1 (half pairs along K accumulated into float, for AMD's dot2
// instructions) on the OpenCL device (PoCL in CI): 16acc32 agrees with Eigen over awkward shapes
// (K odd, K not a multiple of KWG, 1x1x1) in every layout and order, with beta, split-K and the
// local-memory variants; precision 32 is refused by the template's constraint with its reason;
// pure FP16 is refused without cl_khr_fp16 like any FP16 problem.
//
// xgemm_fast has no test hook to inject a wrong pairing, so the shapes carry the failing case:
// K = 1, 7, 9 and 65 end on an unpaired k (a pairing that dropped or doubled the odd tail, or
// read k+1 from the wrong row, would be off by a whole term, far beyond the 16acc32 tolerance,
// which test_precision shows a single dropped term exceeds).
#include <catch2/catch.hpp>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/verify/reference.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_dot2 {

using namespace gemmtune;

using test::describe;

namespace {

std::unique_ptr<test::TemplateEvaluators> make_evaluator() {
  return test::make_test_evaluator(test::quick_evaluator_options());
}

// Tiles that the awkward shapes cross at every edge; KWG 8 so that K = 9 and 65 leave a one-k
// tail tile.
Configuration dot2_config(test::TemplateEvaluators& ev) {
  Configuration c = test::small_config(ev, "xgemm_fast");
  c["DOT2"] = 1;
  return c;
}

test::KernelCase problem(const Shape& shape, Order order, const std::string& layout,
                         Precision precision) {
  test::KernelCase p = test::problem_of("xgemm_fast", shape, order, layout);
  p.precision = precision;
  p.alpha = -1.5;
  p.beta = 0.0;
  return p;
}

}  // namespace

TEST_CASE("xgemm_fast DOT2 in 16acc32 over awkward shapes, layouts and orders",
          "[device][precision][dot2]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const Configuration config = dot2_config(*ev);
  const std::vector<Shape> shapes{{1, 1, 1}, {17, 33, 65}, {33, 17, 7}, {65, 3, 9}};
  for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
    for (auto order : {Order::kRowMajor, Order::kColMajor}) {
      for (const auto& shape : shapes) {
        test::KernelCase p = problem(shape, order, layout, Precision::kFP16Acc32);
        if (layout == "NT" && order == Order::kColMajor && shape.k == 65) p.beta = 0.75;
        const Result r = ev->evaluate(p, config);
        INFO(describe(p, r));
        CHECK(r.status == Status::kOk);
      }
    }
  }
}

TEST_CASE("xgemm_fast DOT2 in 16acc32 with split-K, beta and the local-memory variants",
          "[device][precision][dot2]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  Configuration split = dot2_config(*ev);
  split["SPLITK"] = 2;
  // One buffer without prefetch, swizzled, scalar A pairs and 8-wide B pairs, no unroll.
  Configuration single = dot2_config(*ev);
  single["STAGES"] = 1;
  single["PREFETCH"] = 0;
  single["SWZ"] = 1;
  single["VWM"] = 1;
  single["NWG"] = 64;
  single["VWN"] = 8;
  single["KWI"] = 1;
  // Padded rows and a wider K tile.
  Configuration padded = dot2_config(*ev);
  padded["PADA"] = 2;
  padded["PADB"] = 4;
  padded["KWG"] = 16;
  for (const auto& c : {split, single, padded}) {
    test::KernelCase p = problem(Shape{33, 65, 17}, Order::kColMajor, "TN", Precision::kFP16Acc32);
    p.alpha = 1.25;
    p.beta = -0.5;
    const Result r = ev->evaluate(p, c);
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
  }
}

TEST_CASE("xgemm_fast DOT2 is refused for float and double storage with its reason",
          "[kernel_spec][dot2]") {
  const KernelSpec spec = KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
  Configuration c = spec.defaults();
  CHECK(c.at("DOT2") == 0);
  c["DOT2"] = 1;
  for (int bytes : {4, 8}) {
    const auto why = spec.check(c, DeviceLimits{}, Context{{"ELEM_BYTES", bytes}});
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("needs half storage (precision 16 or 16acc32)"));
  }
  CHECK_FALSE(spec.check(c, DeviceLimits{}, Context{{"ELEM_BYTES", 2}}));
  c["LDS"] = 0;
  c["STAGES"] = 1;
  c["PREFETCH"] = 0;
  const auto no_lds = spec.check(c, DeviceLimits{}, Context{{"ELEM_BYTES", 2}});
  REQUIRE(no_lds);
  CHECK_THAT(*no_lds, Catch::Contains("local memory"));
}

TEST_CASE("xgemm_fast DOT2 in pure FP16 is refused clearly without cl_khr_fp16",
          "[device][precision][dot2]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  if (test::test_device().device->info.has_fp16) {
    WARN(
        "the device has cl_khr_fp16, so FP16 is not refused here: the DOT2 FP16 path is "
        "checked by the 16acc32-shaped run below instead");
    test::KernelCase p = problem(Shape{17, 33, 65}, Order::kColMajor, "NT", Precision::kFP16);
    const Result r = ev->evaluate(p, dot2_config(*ev));
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
    return;
  }
  test::KernelCase p = problem(Shape{7, 13, 5}, Order::kColMajor, "NN", Precision::kFP16);
  const Result r = ev->evaluate(p, dot2_config(*ev));
  INFO(describe(p, r));
  CHECK(r.status == Status::kUnsupported);
  CHECK_THAT(r.message,
             Catch::Contains("not supported by this device") && Catch::Contains("cl_khr_fp16"));
  CHECK(r.compile_ms == 0);
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_dot2
