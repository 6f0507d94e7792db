// SPDX-License-Identifier: Apache-2.0
// The register cap: a template parameter handed to the compiler the way the device profile says
// (its build option, or a source attribute), refused where the profile declares no way, and
// xgemm_fast's capped variants (without reqd_work_group_size for the option, with it for the
// attribute) verified on the test device over awkward shapes in every layout.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/opencl_evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_eval_test_opencl_evaluator_register_cap {

using namespace gemmtune;

namespace {

const Context kFp32{{"ELEM_BYTES", 4}};
constexpr int64_t kCap = 128;

KernelSpec xgemm_fast() {
  return KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
}

DeviceLimits with_option(const std::string& option) {
  DeviceLimits limits;
  limits.register_cap_known = true;
  limits.register_cap_option = option;
  return limits;
}

// A declaration with one tunable and a register cap; `cap` is spliced in as the REGCAP entry.
nlohmann::json tiny_spec(const nlohmann::json& cap) {
  return {{"kernel", "tiny"},
          {"source", "tiny.cl"},
          {"entry", "Tiny"},
          {"parameters",
           {{{"name", "WG"}, {"values", {8, 16}}, {"default", 8}},
            {{"name", "REGCAP"}, {"values", cap["values"]}, {"default", cap["default"]}}}},
          {"launch", {{"local", {"WG"}}, {"global", {"WG"}}}},
          {"register_cap", cap["name"]}};
}

// An evaluator on the test device whose profile applies register caps by `method` (with
// `option` for the build option); null where OpenCL lists no device.
std::unique_ptr<test::TemplateEvaluators> evaluator_with_cap(RegisterCapMethod method,
                                                             const std::string& option = "") {
  const test::TestDevice& d = test::test_device();
  if (!d.device) return nullptr;
  DeviceProfile profile;
  if (const DeviceProfile* found = d.profiles.find(d.device->info.profile)) profile = *found;
  profile.register_cap_method = method;
  profile.register_cap_option = option;
  test::EvaluatorSettings o = test::quick_evaluator_options();
  o.cache_dir = d.cache_dir;
  return test::make_test_evaluator(o, &profile);
}

std::unique_ptr<test::TemplateEvaluators> evaluator_with_cap_option(const std::string& option) {
  return evaluator_with_cap(RegisterCapMethod::kBuildOption, option);
}

// A small xgemm_fast configuration with a register cap, and its split-K variant.
std::vector<Configuration> capped_configs(const KernelSpec& spec) {
  const Configuration capped = spec.complete({{"MWG", 16},
                                              {"NWG", 32},
                                              {"KWG", 8},
                                              {"MDIMC", 4},
                                              {"NDIMC", 8},
                                              {"VWM", 2},
                                              {"VWN", 2},
                                              {"REGCAP", kCap}});
  Configuration split = capped;
  split["SPLITK"] = 3;
  return {capped, split};
}

}  // namespace

TEST_CASE("a register cap becomes the profile's option with the value appended", "[regcap]") {
  const KernelSpec spec = xgemm_fast();
  REQUIRE(spec.register_cap_parameter() == "REGCAP");
  Configuration capped = spec.defaults();
  capped["REGCAP"] = kCap;
  const DeviceLimits nvidia = with_option("-cl-nv-maxrregcount=");
  CHECK(spec.register_cap_option(capped, nvidia) == "-cl-nv-maxrregcount=128");
  CHECK(spec.register_cap_option(spec.defaults(), nvidia).empty());
  CHECK_FALSE(spec.check(capped, nvidia, kFp32).has_value());
  // Nothing known of the device (no profile lookup at all): nothing refused, nothing passed.
  CHECK_FALSE(spec.check(capped, DeviceLimits{}, kFp32).has_value());
  CHECK(spec.register_cap_option(capped, DeviceLimits{}).empty());
}

TEST_CASE("a register cap is a device limit where the profile names no option", "[regcap]") {
  const KernelSpec spec = xgemm_fast();
  Configuration capped = spec.defaults();
  capped["REGCAP"] = kCap;
  const DeviceLimits none = with_option("");
  const auto why = spec.check(capped, none, kFp32);
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("REGCAP=128") && Catch::Contains("register-cap"));
  CHECK_FALSE(spec.check(spec.defaults(), none, kFp32).has_value());

  // Enumeration prunes the same way: without an option only REGCAP=0 remains.
  const ParamSpace pruned(spec, "skinny", none, kFp32);
  const ParamSpace open(spec, "skinny", with_option("-cl-nv-maxrregcount="), kFp32);
  CHECK(pruned.count() > 0);
  CHECK(open.count() > pruned.count());
  bool any_capped = false;
  pruned.for_each([&](const Configuration& c) {
    any_capped = any_capped || c.at("REGCAP") != 0;
    return !any_capped;
  });
  CHECK_FALSE(any_capped);
  open.for_each([&](const Configuration& c) {
    any_capped = any_capped || c.at("REGCAP") != 0;
    return !any_capped;
  });
  CHECK(any_capped);
}

TEST_CASE("a cap below the accumulators is refused with the constraint's reason", "[regcap]") {
  const KernelSpec spec = xgemm_fast();
  // 128x128 tiles on 8x8 threads: 256 accumulators per work-item, more than a 168 cap.
  Configuration big =
      spec.complete({{"MWG", 128}, {"NWG", 128}, {"MDIMC", 8}, {"NDIMC", 8}, {"REGCAP", 168}});
  const auto why = spec.check(big, DeviceLimits{}, kFp32);
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("accumulators"));
  big["MDIMC"] = 16;
  big["NDIMC"] = 16;  // 64 accumulators
  CHECK_FALSE(spec.check(big, DeviceLimits{}, kFp32).has_value());
}

TEST_CASE("a register cap declaration must name a parameter with default 0", "[regcap]") {
  CHECK_NOTHROW(KernelSpec::from_json(
      tiny_spec({{"name", "REGCAP"}, {"values", {0, 64}}, {"default", 0}}), "tiny.json"));
  CHECK_THROWS_WITH(
      KernelSpec::from_json(tiny_spec({{"name", "REGS"}, {"values", {0, 64}}, {"default", 0}}),
                            "tiny.json"),
      Catch::Contains("unknown parameter REGS"));
  CHECK_THROWS_WITH(
      KernelSpec::from_json(tiny_spec({{"name", "REGCAP"}, {"values", {0, 64}}, {"default", 64}}),
                            "tiny.json"),
      Catch::Contains("default 0"));
  CHECK_THROWS_WITH(
      KernelSpec::from_json(tiny_spec({{"name", "REGCAP"}, {"values", {-1, 0}}, {"default", 0}}),
                            "tiny.json"),
      Catch::Contains("values >= 0"));
}

TEST_CASE("profiles name their register-cap option, or none", "[regcap][profile]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  REQUIRE(set.find("sm_90"));
  CHECK(set.find("sm_90")->register_cap_option == "-cl-nv-maxrregcount=");
  REQUIRE(set.find("cpu-generic"));
  CHECK(set.find("cpu-generic")->register_cap_option.empty());
  DeviceInfo info;
  const DeviceLimits nv = device_limits(info, set.find("sm_90"));
  CHECK(nv.register_cap_known);
  CHECK(nv.register_cap_option == "-cl-nv-maxrregcount=");
  const DeviceLimits bare = device_limits(info, nullptr);
  CHECK(bare.register_cap_known);
  CHECK(bare.register_cap_option.empty());

  nlohmann::json j = nlohmann::json::parse(R"({
    "name": "x", "match": {"type": "gpu"},
    "wavefront_sizes": {"value": [32], "source": "s"}, "figures": {}})");
  for (const auto& key : DeviceProfile::required_figures()) {
    j["figures"][key] = {{"value", 1}, {"source", "s"}};
  }
  j["register_cap_option"] = "maxrregcount=";
  CHECK_THROWS_WITH(profile_from_json(j, "x.json"), Catch::Contains("register_cap_option"));
  j["register_cap_option"] = "-cl-nv-maxrregcount=";
  CHECK(profile_from_json(j, "x.json").register_cap_option == "-cl-nv-maxrregcount=");
}

TEST_CASE("xgemm_fast with a register cap is verified in every order and layout",
          "[regcap][device]") {
  // The test device's compiler has no register cap; a define in the option's place builds the
  // capped variant (no reqd_work_group_size) and proves the value reaches the compiler.
  auto ev = evaluator_with_cap_option("-DGT_REGCAP_PROBE=");
  if (!ev) return test::unavailable("no OpenCL device");
  const KernelSpec spec = xgemm_fast();
  for (Order order : {Order::kRowMajor, Order::kColMajor}) {
    for (const std::string layout : {"NN", "NT", "TN", "TT"}) {
      for (Shape shape : {Shape{33, 17, 65}, Shape{1, 1, 1}, Shape{65, 3, 7}}) {
        for (const Configuration& config : capped_configs(spec)) {
          test::KernelCase p = test::problem_of("xgemm_fast", shape, order, layout);
          p.beta = 0.5;
          const Result r = ev->evaluate(p, config);
          INFO(test::describe(p, r));
          CHECK(r.status == Status::kOk);
        }
      }
    }
  }
}

TEST_CASE("the evaluator passes the cap to the compiler", "[regcap][device]") {
  // An option the compiler refuses shows that the cap reached the build, and only with REGCAP>0.
  auto ev = evaluator_with_cap_option("-cl-gemmtune-no-such-option=");
  if (!ev) return test::unavailable("no OpenCL device");
  const KernelSpec spec = xgemm_fast();
  const test::KernelCase p = test::problem_of("xgemm_fast", {17, 9, 5}, Order::kRowMajor, "NN");
  const Configuration small = spec.complete(
      {{"MWG", 16}, {"NWG", 16}, {"KWG", 8}, {"MDIMC", 4}, {"NDIMC", 8}, {"VWM", 2}, {"VWN", 2}});
  Configuration capped = small;
  capped["REGCAP"] = kCap;
  const Result plain = ev->evaluate(p, small);
  INFO(test::describe(p, plain));
  CHECK(plain.status == Status::kOk);
  const Result refused = ev->evaluate(p, capped);
  INFO(test::describe(p, refused));
  CHECK(refused.status == Status::kCompileFailed);
}

TEST_CASE("xgemm_fast with an attribute cap keeps its work-group size and is verified",
          "[regcap][device]") {
  // The AMD method: -DREGCAP_ATTRIBUTE=1 makes the kernel declare the cap as amdgpu_num_vgpr
  // beside reqd_work_group_size. Other compilers ignore that attribute, so the test device builds
  // and runs this variant as it is.
  auto ev = evaluator_with_cap(RegisterCapMethod::kAttribute);
  if (!ev) return test::unavailable("no OpenCL device");
  const KernelSpec spec = xgemm_fast();
  for (Order order : {Order::kRowMajor, Order::kColMajor}) {
    for (const std::string layout : {"NN", "TT"}) {
      for (Shape shape : {Shape{33, 17, 65}, Shape{1, 1, 1}}) {
        for (const Configuration& config : capped_configs(spec)) {
          test::KernelCase p = test::problem_of("xgemm_fast", shape, order, layout);
          p.beta = 0.5;
          const Result r = ev->evaluate(p, config);
          INFO(test::describe(p, r));
          CHECK(r.status == Status::kOk);
        }
      }
    }
  }
}

TEST_CASE("gemmtune run applies a register cap by the profile's method", "[regcap][device][cli]") {
  if (!test::test_device().device) return test::unavailable("no OpenCL device");
  namespace fs = std::filesystem;
  // Two copies of the profiles: every profile declaring the attribute method, and none declaring
  // any method. The test device matches one of them whichever it is.
  const std::string dir = test::temp_dir("regcap-run");
  const fs::path attribute = fs::path(dir) / "attribute", none = fs::path(dir) / "none";
  fs::create_directories(attribute);
  fs::create_directories(none);
  for (const auto& e : fs::directory_iterator(test::source_path("devices"))) {
    auto j = read_json_file(e.path().string());
    j.erase("register_cap");
    j.erase("register_cap_option");
    std::ofstream(none / e.path().filename()) << j.dump(2);
    j["register_cap"] = {{"method", "attribute"}, {"source", "test"}};
    std::ofstream(attribute / e.path().filename()) << j.dump(2);
  }
  const std::string run =
      " run --kernel xgemm_fast --params MWG=16,NWG=32,KWG=8,MDIMC=4,NDIMC=8,VWM=2,VWN=2,REGCAP=" +
      std::to_string(kCap) + " -m 33 -n 17 -k 65 --cache-dir none";
  auto r = test::run_gemmtune("--devices " + attribute.string() + run);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  r = test::run_gemmtune("--devices " + none.string() + run);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("REGCAP=128") && Catch::Contains("register_cap"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace gemmtune_tests::src_eval_test_opencl_evaluator_register_cap
