// SPDX-License-Identifier: Apache-2.0
// Split-K's in-kernel reduction (KREDUCE=1, kernel_templates/splitk_last.cl) takes its fences from
// the device: where a profile declares ptx_fence_gpu (NVIDIA sm_70+), PTX's fence.acq_rel.gpu,
// because NVIDIA compiles OpenCL's mem_fence to a fence of the work-group's scope only. PoCL has
// no PTX, so here the define's reach is what is tested: it changes the one-launch kernels of
// xgemm_fast and xgemm_skinny (which no CPU compiler then builds) and nothing else, and the H200
// profile forced onto this device does not hand it over.
#include <catch2/catch.hpp>

#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_splitk_fences {

using namespace gemmtune;

using test::describe;

namespace {

std::unique_ptr<test::TemplateEvaluators> make_evaluator(const DeviceProfile* profile) {
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.cache_dir = test::test_device().cache_dir;
  return test::make_test_evaluator(o, profile);
}

// xgemm_fast on 32x16 tiles, K split in 3 parts added as `kreduce` says.
Configuration fast_split(test::TemplateEvaluators& ev, int64_t kreduce) {
  return ev.spec("xgemm_fast")
      .complete({{"MWG", 32},
                 {"NWG", 16},
                 {"MDIMC", 8},
                 {"NDIMC", 4},
                 {"KWG", 16},
                 {"SPLITK", 3},
                 {"KREDUCE", kreduce}});
}

// xgemm_skinny for one row of C, K split in 4 parts added as `kreduce` says.
Configuration skinny_split(test::TemplateEvaluators& ev, int64_t kreduce) {
  return ev.spec("xgemm_skinny").complete({{"SPLITK", 4}, {"KREDUCE", kreduce}});
}

}  // namespace

TEST_CASE("only the define from a device capability gives split-K's one launch PTX fences",
          "[device][split_k]") {
  const auto& d = test::test_device();
  if (!d.device) return test::unavailable("no OpenCL device");
  const test::KernelCase fast =
      test::problem_of("xgemm_fast", Shape{37, 29, 100}, Order::kRowMajor, "NN");
  const test::KernelCase skinny =
      test::problem_of("xgemm_skinny", Shape{1, 45, 300}, Order::kRowMajor, "NN");
  {
    // The H100/H200 profile forced onto this device: its capability needs an NVIDIA sm_70+
    // device, so the builds take no define and the one-launch forms run and verify.
    const DeviceProfile* sm90 = d.profiles.find("sm_90");
    REQUIRE(sm90);
    auto ev = make_evaluator(sm90);
    for (const auto& [p, c] :
         {std::pair{fast, fast_split(*ev, 1)}, {skinny, skinny_split(*ev, 1)}}) {
      const Result r = ev->evaluate(p, c);
      INFO(describe(p, r));
      CHECK(r.status == Status::kOk);
    }
  }
  {
    // The define itself (as free-form build options) puts PTX into the one-launch forms, which no
    // CPU compiler builds; the two-launch forms hold no fence and ignore it.
    DeviceProfile forced = *d.profiles.find(d.device->info.profile);
    forced.build_options += " -DPTX_FENCES=1";
    auto ev = make_evaluator(&forced);
    for (const auto& [p, one, two] : {std::tuple{fast, fast_split(*ev, 1), fast_split(*ev, 0)},
                                      {skinny, skinny_split(*ev, 1), skinny_split(*ev, 0)}}) {
      const Result r = ev->evaluate(p, one);
      INFO(describe(p, r));
      CHECK(r.status == Status::kCompileFailed);
      const Result plain = ev->evaluate(p, two);
      INFO(describe(p, plain));
      CHECK(plain.status == Status::kOk);
    }
  }
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_splitk_fences
