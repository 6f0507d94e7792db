// SPDX-License-Identifier: Apache-2.0
// The factory: every declaration of kernel_templates/ gets an evaluator of its backend that
// measures and verifies a configuration on the test device, so that no template is orphaned.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "src/core/error.hpp"
#include "src/eval/clblast_evaluator.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_evaluator_factory {

using namespace gemmtune;
using gemmtune::test::source_path;

namespace {

EvaluatorOptions quick_options() {
  EvaluatorOptions o;
  o.templates_dir = source_path("kernel_templates");
  o.cache_dir = test::test_device().cache_dir;
  o.compile_threads = 1;
  o.measure.warmup_runs = 0;
  o.measure.min_runs = 1;
  o.measure.min_time_ms = 0;
  return o;
}

std::vector<std::string> declared_kernels() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path("kernel_templates"))) {
    if (e.path().extension() == ".json") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The configuration a template is checked with: its defaults when they lie in its `ci` space
// and suit the device, else the first configuration of that space that does; the declaration's
// defaults when it has no `ci` space.
Configuration ci_default(const KernelSpec& spec, const DeviceLimits& limits) {
  const Context ctx{{"ELEM_BYTES", 4}};
  if (!spec.spaces().count("ci")) return spec.defaults();
  const ParamSpace ci(spec, "ci", limits, ctx);
  const Configuration defaults = spec.defaults();
  std::optional<Configuration> first;
  bool has_defaults = false;
  ci.for_each([&](const Configuration& c) {
    if (!first) first = c;
    has_defaults = c == defaults;
    return !has_defaults;
  });
  if (has_defaults) return defaults;
  REQUIRE(first);
  return *first;
}

}  // namespace

TEST_CASE("every kernel declaration measures and verifies through make_evaluator",
          "[factory][pocl][slow]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);  // a device test never passes without a device
  const DeviceProfile* profile = d.profiles.find(d.device->info.profile);
  const std::vector<std::string> kernels = declared_kernels();
  REQUIRE(kernels.size() >= 5);
  for (const auto& kernel : kernels) {
    INFO(kernel);
    if (!clblast_available()) {
      const KernelSpec spec = KernelSpec::load(source_path("kernel_templates/" + kernel + ".json"));
      if (spec.backend() == Backend::kClblast) {
        CHECK_THROWS_WITH(make_evaluator(kernel, *d.device, profile, quick_options()),
                          Catch::Contains("without CLBlast"));
        continue;
      }
    }
    auto evaluator = make_evaluator(kernel, *d.device, profile, quick_options());
    REQUIRE(evaluator);
    CHECK(evaluator->spec().name() == kernel);
    const Configuration config =
        ci_default(evaluator->spec(), device_limits(d.device->info, profile));
    // An awkward shape: every edge of every tile is crossed.
    const test::KernelCase problem =
        test::problem_of(kernel, Shape{70, 50, 40}, Order::kRowMajor, "NT");
    const Result r = evaluator->evaluate(problem, config);
    INFO(test::describe(problem, r));
    CHECK(r.status == Status::kOk);
    CHECK(r.tolerance > 0);
    CHECK(r.max_error <= r.tolerance);
    CHECK(r.time.runs >= 1);
    CHECK(r.gflops > 0);
  }
}

TEST_CASE("make_evaluator refuses unknown kernels and problems of another kernel",
          "[factory][pocl]") {
  const auto& d = test::test_device();
  REQUIRE(d.device);
  CHECK_THROWS_WITH(
      make_evaluator("xgemm_nope", *d.device, nullptr, quick_options()),
      Catch::Contains("unknown kernel 'xgemm_nope'") && Catch::Contains("xgemm_direct"));
  CHECK_THROWS_WITH(make_evaluator("../xgemm", *d.device, nullptr, quick_options()),
                    Catch::Contains("not a template name"));
  auto evaluator = make_evaluator("xgemm_direct", *d.device, nullptr, quick_options());
  CHECK(evaluator->spec().backend() == Backend::kOpenCl);
  // compile() counts what it built and what the device or the constraints rule out.
  test::KernelCase p = test::problem_of("xgemm_direct", Shape{64, 64, 64}, Order::kRowMajor, "NN");
  Configuration bad = evaluator->spec().defaults();
  bad["WGD"] = 3;
  const auto summary = evaluator->compile(p, {evaluator->spec().defaults(), bad});
  CHECK(summary.invalid == 1);
  CHECK(summary.built + summary.cached == 1);
  CHECK(summary.failed == 0);
}

}  // namespace gemmtune_tests::src_eval_test_evaluator_factory
