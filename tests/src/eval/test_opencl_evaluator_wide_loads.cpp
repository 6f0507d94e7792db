// SPDX-License-Identifier: Apache-2.0
// xgemm_fast with GLV > 1 (wide global loads of the A and B tiles) on the OpenCL device (PoCL in
// CI). A slot is loaded wide only when it lies inside the matrix and its leading dimension and
// offset are multiples of GLV; the shapes below take both branches: 64x32x16 and 48x40x24 give
// aligned leading dimensions in every layout (the wide path everywhere but the last tiles),
// 33x17x65 and 65x3x7 misaligned ones (the element path), 1x1x1 a single element. A wide load
// that put its elements in the wrong order, or read past an edge, would be off by whole terms.
#include <catch2/catch.hpp>

#include <vector>

#include "src/eval/opencl_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_wide_loads {

using namespace gemmtune;

using test::describe;

namespace {

const std::vector<Shape> kShapes = {
    {64, 32, 16}, {48, 40, 24}, {33, 17, 65}, {65, 3, 7}, {1, 1, 1}};

std::unique_ptr<test::TemplateEvaluators> make_evaluator() {
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.cache_dir = test::test_device().cache_dir;
  return test::make_test_evaluator(o);
}

// 16x32 tiles on 4x8 threads, K tile 8: 4 elements of A and 8 of B per thread and tile, so GLV
// 4 gives one A slot and two B slots; `extra` changes or adds parameters.
Configuration wide_config(test::TemplateEvaluators& ev, int64_t glv,
                          const Configuration& extra = {}) {
  Configuration c{{"MWG", 16},  {"NWG", 32}, {"KWG", 8}, {"MDIMC", 4},
                  {"NDIMC", 8}, {"VWM", 2},  {"VWN", 2}, {"GLV", glv}};
  for (const auto& [name, value] : extra) c[name] = value;
  return ev.spec("xgemm_fast").complete(c);
}

test::KernelCase problem(const Shape& shape, Order order, const std::string& layout) {
  test::KernelCase p = test::problem_of("xgemm_fast", shape, order, layout);
  p.alpha = 1.25;
  p.beta = -0.5;
  return p;
}

// Calls `check(problem)` for every shape of kShapes in every storage order and layout.
template <typename Check>
void every_problem(Check check) {
  for (Order order : {Order::kRowMajor, Order::kColMajor}) {
    for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
      for (const Shape& shape : kShapes) check(problem(shape, order, layout));
    }
  }
}

}  // namespace

TEST_CASE("xgemm_fast with wide global loads over awkward shapes, layouts and orders",
          "[device][glv][optimized]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  for (int64_t glv : {2, 4}) {
    const Configuration config = wide_config(*ev, glv);
    every_problem([&](const test::KernelCase& p) {
      const Result r = ev->evaluate(p, config);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
    });
  }
}

TEST_CASE("ALDCOPY copies misaligned operands so that wide loads apply", "[device][glv]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  // 33x17x65 and 65x3x7 have odd leading dimensions in every layout: both operands are copied
  // (helper kernels run); 64x32x16 has aligned ones: nothing is copied.
  for (int64_t glv : {2, 4}) {
    const Configuration config = wide_config(*ev, glv, {{"ALDCOPY", 1}});
    every_problem([&](const test::KernelCase& p) {
      const Result r = ev->evaluate(p, config);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
      if (p.shape.m == 33 || p.shape.m == 65) CHECK(r.helper_kernels);
      if (p.shape.m == 64 || p.shape.m == 48) CHECK_FALSE(r.helper_kernels);
    });
  }
  // Without wide loads the copy would serve nothing: refused.
  const Result r = ev->evaluate(problem(Shape{33, 17, 65}, Order::kRowMajor, "NN"),
                                wide_config(*ev, 1, {{"ALDCOPY", 1}}));
  CHECK(r.status == Status::kInvalid);
  CHECK_THAT(r.message, Catch::Contains("ALDCOPY"));
}

TEST_CASE("wide global loads with staging, swizzle, split-K, half storage and batches",
          "[device][glv]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const std::vector<Configuration> variants = {
      wide_config(*ev, 4, {{"STAGES", 1}, {"PREFETCH", 0}}),
      wide_config(*ev, 4, {{"STAGES", 2}, {"PREFETCH", 1}, {"SWZ", 1}}),
      wide_config(*ev, 4, {{"SPLITK", 3}, {"PADA", 2}, {"PADB", 2}}),
      wide_config(*ev, 2, {{"KWG", 16}, {"KWI", 8}, {"GROUPM", 4}})};
  // Each variant in one layout, NN and TT in turn: every variant meets both precisions, both
  // batch layouts and both kinds of shape, every layout two variants (each layout and precision
  // is another kernel build, and the builds are what takes the time on PoCL).
  for (size_t v = 0; v < variants.size(); ++v) {
    const Configuration& config = variants[v];
    const std::string layout = v % 2 == 0 ? "NN" : "TT";
    for (const Shape& shape : {Shape{64, 32, 16}, Shape{33, 17, 65}}) {
      for (Precision precision : {Precision::kFP32, Precision::kFP16Acc32}) {
        test::KernelCase p = problem(shape, Order::kRowMajor, layout);
        p.precision = precision;
        const Result r = ev->evaluate(p, config);
        INFO(describe(p, r));
        CHECK(r.status == Status::kOk);
      }
      // Batches: matrix offsets in the buffers differ per entry, so some entries take the
      // element path where others load wide.
      for (BatchLayout batch_layout : {BatchLayout::kStrided, BatchLayout::kOffsets}) {
        test::KernelCase p = problem(shape, Order::kColMajor, layout);
        p.batch = 3;
        p.batch_layout = batch_layout;
        const Result r = ev->evaluate(p, config);
        INFO(describe(p, r));
        CHECK(r.status == Status::kOk);
      }
    }
  }
}

TEST_CASE("wide global loads need local memory and whole vectors per thread", "[glv]") {
  const KernelSpec spec = KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
  const Context fp32{{"ELEM_BYTES", 4}};
  Configuration direct = spec.complete({{"GLV", 4}, {"LDS", 0}, {"STAGES", 1}, {"PREFETCH", 0}});
  auto why = spec.check(direct, DeviceLimits{}, fp32);
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("local-memory tiles"));
  // 16x16 tiles, K tile 16, 16x16 threads: one element of each tile per thread, no vector.
  Configuration thin = spec.complete({{"GLV", 2},
                                      {"MWG", 16},
                                      {"NWG", 16},
                                      {"KWG", 16},
                                      {"MDIMC", 16},
                                      {"NDIMC", 16},
                                      {"VWM", 1},
                                      {"VWN", 1}});
  why = spec.check(thin, DeviceLimits{}, fp32);
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("whole GLV-wide vectors"));
  thin["GLV"] = 1;
  CHECK_FALSE(spec.check(thin, DeviceLimits{}, fp32).has_value());
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_wide_loads
