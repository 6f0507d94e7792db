// SPDX-License-Identifier: Apache-2.0
// xgemm_fast with ASYNC=1 (multistage copies, STAGES 2, 3 or 4 local buffers filled STAGES-1
// tiles ahead) on the OpenCL device (PoCL in CI). PoCL has no cp.async, so these run the
// synchronous form of the stages, the one AMD compiles too; the PTX form differs only in how a
// copy is done (scripts/check-cp-async.sh runs it on an NVIDIA GPU). The shapes carry the failing
// cases: K = 65 and 100 take more K tiles than buffers (a buffer reused too early or a tile
// computed from the wrong buffer is off by whole terms), K = 7 fewer than STAGES-1 (the prologue
// issues only what exists), the odd sizes cross every edge of every tile (zeros outside the
// matrix), split-K gives each work-group a K range that ends inside a tile.
#include <catch2/catch.hpp>

#include <map>
#include <vector>

#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_async {

using namespace gemmtune;

using test::describe;

namespace {

const std::vector<Shape> kShapes = {
    {64, 32, 16}, {33, 17, 65}, {65, 3, 7}, {40, 24, 100}, {1, 1, 1}};

std::unique_ptr<test::TemplateEvaluators> make_evaluator(const DeviceProfile* profile = nullptr) {
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.cache_dir = test::test_device().cache_dir;
  return test::make_test_evaluator(o, profile);
}

// 16x32 tiles on 4x8 threads, K tile 8 (4 elements of A and 8 of B per thread and tile), ASYNC
// with `stages` buffers; `extra` changes or adds parameters.
Configuration async_config(test::TemplateEvaluators& ev, int64_t stages,
                           const Configuration& extra = {}) {
  Configuration c{{"MWG", 16}, {"NWG", 32}, {"KWG", 8}, {"MDIMC", 4}, {"NDIMC", 8},
                  {"VWM", 2},  {"VWN", 2},  {"KWI", 2}, {"ASYNC", 1}, {"STAGES", stages}};
  for (const auto& [name, value] : extra) c[name] = value;
  return ev.spec("xgemm_fast").complete(c);
}

test::KernelCase problem(const Shape& shape, Order order, const std::string& layout) {
  test::KernelCase p = test::problem_of("xgemm_fast", shape, order, layout);
  p.alpha = 1.25;
  p.beta = -0.5;
  return p;
}

}  // namespace

TEST_CASE("xgemm_fast ASYNC stages over awkward shapes, layouts and orders",
          "[device][async][optimized]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  // Each depth with another load width and prefetch: element, pair and four-wide slots, copies
  // issued before and after the FMAs.
  const std::vector<Configuration> configs = {async_config(*ev, 2, {{"GLV", 1}, {"PREFETCH", 1}}),
                                              async_config(*ev, 3, {{"GLV", 4}, {"PREFETCH", 0}}),
                                              async_config(*ev, 4, {{"GLV", 2}, {"PREFETCH", 1}})};
  for (const auto& config : configs) {
    for (Order order : {Order::kRowMajor, Order::kColMajor}) {
      for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
        for (const Shape& shape : kShapes) {
          const test::KernelCase p = problem(shape, order, layout);
          const Result r = ev->evaluate(p, config);
          INFO(describe(p, r));
          CHECK(r.status == Status::kOk);
        }
      }
    }
  }
}

TEST_CASE("xgemm_fast ASYNC with split-K, swizzle, padding, half storage, dot2 and batches",
          "[device][async]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  struct Variant {
    Configuration config;
    Precision precision;
    int batch;
  };
  const std::vector<Variant> variants = {
      // Split-K in one launch: the last work-group's flag shares A's buffers.
      {async_config(*ev, 3, {{"SPLITK", 3}, {"KREDUCE", 1}, {"PADA", 2}, {"PADB", 2}}),
       Precision::kFP32, 1},
      {async_config(*ev, 4, {{"SPLITK", 2}, {"SWZ", 1}, {"GLV", 4}, {"GROUPM", 4}}),
       Precision::kFP32, 1},
      {async_config(*ev, 3, {{"GLV", 4}, {"ALDCOPY", 1}}), Precision::kFP16Acc32, 1},
      {async_config(*ev, 4, {{"DOT2", 1}, {"KWG", 16}}), Precision::kFP16Acc32, 1},
      {async_config(*ev, 2, {{"SPLITK", 2}, {"KREDUCE", 1}, {"GLV", 2}}), Precision::kFP32, 3}};
  for (size_t v = 0; v < variants.size(); ++v) {
    const std::string layout = v % 2 == 0 ? "NN" : "TT";
    for (const Shape& shape : {Shape{33, 17, 65}, Shape{64, 32, 100}}) {
      test::KernelCase p = problem(shape, Order::kRowMajor, layout);
      p.precision = variants[v].precision;
      p.batch = variants[v].batch;
      const Result r = ev->evaluate(p, variants[v].config);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
    }
  }
  if (test::test_device().device->info.has_fp64) {
    for (const std::string layout : {"NT", "TN"}) {
      test::KernelCase p = problem(Shape{33, 17, 65}, Order::kColMajor, layout);
      p.precision = Precision::kFP64;
      const Result r = ev->evaluate(p, async_config(*ev, 3, {{"GLV", 4}}));
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
    }
  }
}

TEST_CASE("the ci space's ASYNC configurations agree with Eigen", "[device][async]") {
  auto ev = make_evaluator();
  if (!ev) return test::unavailable("no OpenCL device");
  const auto& d = test::test_device();
  const ParamSpace space(ev->spec("xgemm_fast"), "ci", device_limits(d.device->info, nullptr),
                         Context{{"ELEM_BYTES", 4}});
  // Two of each depth, the first and the last the space lists.
  std::map<int64_t, std::vector<Configuration>> by_stages;
  space.for_each([&](const Configuration& c) {
    if (c.at("ASYNC") == 1) by_stages[c.at("STAGES")].push_back(c);
    return true;
  });
  REQUIRE(by_stages.size() == 3);  // STAGES 2, 3 and 4
  std::vector<Configuration> sample;
  for (const auto& [stages, configs] : by_stages) {
    sample.push_back(configs.front());
    sample.push_back(configs.back());
  }
  const std::vector<test::KernelCase> problems = {
      problem(Shape{67, 45, 33}, Order::kRowMajor, "NN"),
      problem(Shape{45, 67, 70}, Order::kColMajor, "TN")};
  for (const auto& p : problems) {
    ev->prepare(p, sample);
    for (const auto& c : sample) {
      const Result r = ev->evaluate(p, c);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
    }
  }
}

TEST_CASE("only the define from a device capability switches ASYNC to cp.async",
          "[device][async]") {
  const auto& d = test::test_device();
  if (!d.device) return test::unavailable("no OpenCL device");
  const DeviceProfile* sm90 = d.profiles.find("sm_90");
  REQUIRE(sm90);
  const test::KernelCase p = problem(Shape{33, 17, 65}, Order::kRowMajor, "NT");
  {
    // The H100/H200 profile forced onto this device: its capability needs an NVIDIA sm_80+
    // device, so the build takes no define and the stages run through registers.
    auto ev = make_evaluator(sm90);
    const Result r = ev->evaluate(p, async_config(*ev, 3, {{"GLV", 4}}));
    INFO(describe(p, r));
    CHECK(r.status == Status::kOk);
  }
  {
    // The define itself (as free-form build options) selects the PTX copies, which no CPU
    // compiler builds: the template's own path choice follows the define and nothing else.
    DeviceProfile forced = *d.profiles.find(d.device->info.profile);
    forced.build_options += " -DCP_ASYNC_PTX=1";
    auto ev = make_evaluator(&forced);
    const Result r = ev->evaluate(p, async_config(*ev, 3, {{"GLV", 4}}));
    INFO(describe(p, r));
    CHECK(r.status == Status::kCompileFailed);
    // ASYNC=0 ignores it: the kernel is the one without stages.
    const Result plain = ev->evaluate(p, test::small_config(*ev, "xgemm_fast"));
    INFO(describe(p, plain));
    CHECK(plain.status == Status::kOk);
  }
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_async
