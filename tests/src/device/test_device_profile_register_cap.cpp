// SPDX-License-Identifier: Apache-2.0
// How a device profile declares that register caps are applied ("register_cap": a build option
// on NVIDIA, a source attribute on AMD), how malformed declarations are refused, and what the
// method opens: the register-cap values of a space are searched wherever a method is declared.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_device_profile_register_cap {

using namespace gemmtune;

namespace {

const char* const kAmdProfiles[] = {"gfx803", "gfx906", "gfx1010", "gfx1012", "gfx1030", "gfx1100"};
const Context kFp32{{"ELEM_BYTES", 4}};
constexpr int64_t kCap = 128;

nlohmann::json amd_profile() {
  return read_json_file(test::source_path("devices/gfx906.json"));
}

KernelSpec xgemm_fast() {
  return KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
}

bool any_capped(const ParamSpace& space) {
  bool found = false;
  space.for_each([&](const Configuration& c) {
    found = c.at("REGCAP") != 0;
    return !found;
  });
  return found;
}

}  // namespace

TEST_CASE("profiles declare how a register cap is applied", "[profile][regcap]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  const DeviceProfile* nv = set.find("sm_90");
  REQUIRE(nv);
  CHECK(nv->register_cap_method == RegisterCapMethod::kBuildOption);
  CHECK(nv->register_cap_option == "-cl-nv-maxrregcount=");
  CHECK_FALSE(nv->register_cap_source.empty());
  // A model's variant applies caps as its architecture does.
  CHECK(set.find("sm_90", "NVIDIA H100 80GB HBM3")->register_cap_method ==
        RegisterCapMethod::kBuildOption);
  for (const char* name : kAmdProfiles) {
    INFO(name);
    const DeviceProfile* amd = set.find(name);
    REQUIRE(amd);
    CHECK(amd->register_cap_method == RegisterCapMethod::kAttribute);
    CHECK(amd->register_cap_option.empty());
    CHECK_FALSE(amd->register_cap_source.empty());
  }
  REQUIRE(set.find("cpu-generic"));
  CHECK(set.find("cpu-generic")->register_cap_method == RegisterCapMethod::kNone);

  const DeviceInfo info;
  const DeviceLimits nv_limits = device_limits(info, nv);
  CHECK(nv_limits.register_cap_option == "-cl-nv-maxrregcount=");
  CHECK_FALSE(nv_limits.register_cap_attribute);
  const DeviceLimits amd_limits = device_limits(info, set.find("gfx906"));
  CHECK(amd_limits.register_cap_known);
  CHECK(amd_limits.register_cap_attribute);
  CHECK(amd_limits.register_cap_option.empty());
  const DeviceLimits cpu_limits = device_limits(info, set.find("cpu-generic"));
  CHECK(cpu_limits.register_cap_known);
  CHECK_FALSE(cpu_limits.register_cap_attribute);
  CHECK(cpu_limits.register_cap_option.empty());
}

TEST_CASE("a malformed register_cap is refused naming the file and the field",
          "[profile][regcap]") {
  struct Case {
    const char* what;
    nlohmann::json register_cap;
    const char* field;
  };
  const Case cases[] = {
      {"not an object", "-cl-nv-maxrregcount=", "'register_cap'"},
      {"no method", {{"source", "s"}}, "register_cap.method"},
      {"an unknown method", {{"method", "pragma"}, {"source", "s"}}, "register_cap.method"},
      {"a method that is no string", {{"method", 1}, {"source", "s"}}, "register_cap.method"},
      {"a build option without the option",
       {{"method", "build_option"}, {"source", "s"}},
       "register_cap.option"},
      {"an option that is no option",
       {{"method", "build_option"}, {"option", "maxrregcount="}, {"source", "s"}},
       "register_cap.option"},
      {"an option beside the attribute",
       {{"method", "attribute"}, {"option", "-x="}, {"source", "s"}},
       "register_cap.option"},
      {"no source", {{"method", "attribute"}}, "register_cap.source"},
      {"an empty source", {{"method", "attribute"}, {"source", ""}}, "register_cap.source"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto j = amd_profile();
    j["register_cap"] = c.register_cap;
    const std::string err = test::profile_load_error(j);
    CHECK_THAT(err, Catch::Contains("bad.json") && Catch::Contains(c.field));
    CHECK(err.find('\n') == std::string::npos);
  }
  // The older field and the new one together: one of them must go.
  auto both = amd_profile();
  both["register_cap_option"] = "-cl-nv-maxrregcount=";
  CHECK_THAT(test::profile_load_error(both),
             Catch::Contains("bad.json") && Catch::Contains("'register_cap_option'"));
  // The well-formed profile itself loads.
  CHECK(test::profile_load_error(amd_profile()).empty());
}

TEST_CASE("the older register_cap_option reads as the build-option method", "[profile][regcap]") {
  auto j = amd_profile();
  j.erase("register_cap");
  j["register_cap_option"] = "-cl-nv-maxrregcount=";
  const std::string path = test::temp_dir("regcap-legacy") + "/legacy.json";
  write_json_atomic(path, j);
  const DeviceProfile p = load_profile(path);
  CHECK(p.register_cap_method == RegisterCapMethod::kBuildOption);
  CHECK(p.register_cap_option == "-cl-nv-maxrregcount=");
  CHECK(device_limits(DeviceInfo{}, &p).register_cap_option == "-cl-nv-maxrregcount=");
  j["register_cap_option"] = "maxrregcount=";
  CHECK_THAT(test::profile_load_error(j),
             Catch::Contains("bad.json") && Catch::Contains("register_cap_option"));
}

TEST_CASE("AMD profiles search register caps as attributes", "[profile][regcap]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  const KernelSpec spec = xgemm_fast();
  Configuration capped = spec.defaults();
  capped["REGCAP"] = kCap;
  Problem problem;
  problem.shape = {256, 256, 256};
  const DeviceLimits cpu = device_limits(DeviceInfo{}, set.find("cpu-generic"));
  const ParamSpace uncapped_only(spec, "skinny", cpu, kFp32);
  CHECK_FALSE(any_capped(uncapped_only));
  for (const char* name : kAmdProfiles) {
    INFO(name);
    const DeviceLimits amd = device_limits(DeviceInfo{}, set.find(name));
    CHECK_FALSE(spec.check(capped, amd, kFp32).has_value());
    const ParamSpace space(spec, "skinny", amd, kFp32);
    CHECK(any_capped(space));
    CHECK(space.count() > uncapped_only.count());
    // The cap reaches the build as the attribute's define, after the profile's options.
    const std::string options = kernel_build_options(spec, problem, capped, amd, "-cl-mad-enable");
    CHECK_THAT(options, Catch::Contains("-DREGCAP=128 ") &&
                            Catch::EndsWith("-cl-mad-enable -DREGCAP_ATTRIBUTE=1"));
  }
}

TEST_CASE("gemmtune refuses a malformed register_cap in one line", "[profile][regcap][cli]") {
  // A user's profile folder (--devices) with one AMD profile whose method is misspelt.
  const std::string dir = test::temp_dir("regcap-cli");
  auto j = amd_profile();
  j["register_cap"]["method"] = "attributes";
  write_json_atomic(dir + "/gfx906.json", j);
  const auto r = test::run_gemmtune("devices --devices " + dir);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("gfx906.json") && Catch::Contains("register_cap.method"));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace gemmtune_tests::src_device_test_device_profile_register_cap
