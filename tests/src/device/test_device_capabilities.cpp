// SPDX-License-Identifier: Apache-2.0
// Device capabilities ("capabilities" of a device profile): which profiles declare them, the
// define each gives and only on the devices that have it (ptx_cp_async: NVIDIA, compute
// capability 8.0 or later; ptx_fence_gpu and ptx_named_barriers: 7.0 or later), and how malformed
// or misplaced declarations are refused. The builds themselves (the define switching xgemm_fast's
// ASYNC copies to cp.async, and never reaching another device) are tested in
// tests/src/eval/test_opencl_evaluator_async.cpp.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/device.hpp"
#include "src/device/device_capabilities.hpp"
#include "src/device/device_profile.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_device_capabilities {

using namespace gemmtune;

namespace {

constexpr const char* kDefines = "-DCP_ASYNC_PTX=1 -DPTX_FENCES=1 -DPTX_NAMED_BARRIERS=1";
constexpr const char* kVoltaDefines = "-DPTX_FENCES=1 -DPTX_NAMED_BARRIERS=1";

DeviceInfo device(const std::string& vendor, const std::string& name) {
  DeviceInfo d;
  d.vendor = vendor;
  d.name = name;
  d.type = "gpu";
  return d;
}

nlohmann::json sm90_json() {
  return read_json_file(test::source_path("devices/sm_90.json"));
}

}  // namespace

TEST_CASE(
    "the H100/H200 profile gives cp.async from sm_80 and GPU fences and named barriers from sm_70 "
    "to NVIDIA only",
    "[device_profile][capabilities]") {
  const ProfileSet set = ProfileSet::load_dir(test::source_path("devices"));
  const DeviceProfile* sm90 = set.find("sm_90");
  REQUIRE(sm90);
  REQUIRE(sm90->capabilities.size() == 3);
  CHECK(sm90->capabilities[0].name == "ptx_cp_async");
  CHECK(sm90->capabilities[1].name == "ptx_fence_gpu");
  CHECK(sm90->capabilities[2].name == "ptx_named_barriers");
  for (const auto& c : sm90->capabilities) CHECK_FALSE(c.source.empty());
  const DeviceInfo h200 = device("NVIDIA Corporation", "NVIDIA H200");
  CHECK(capability_build_options(sm90->capabilities, h200, 90) == kDefines);
  CHECK(capability_build_options(sm90->capabilities, h200, 80) == kDefines);
  // Older than Ampere: the fences and named barriers only; older than Volta, or a device that does
  // not say: none.
  CHECK(capability_build_options(sm90->capabilities, h200, 75) == kVoltaDefines);
  CHECK(capability_build_options(sm90->capabilities, h200, 70) == kVoltaDefines);
  CHECK(capability_build_options(sm90->capabilities, h200, 61) == "");
  CHECK(capability_build_options(sm90->capabilities, h200, 0) == "");
  // The profile forced onto another vendor's device ($GEMMTUNE_DEVICE_PROFILE): none.
  CHECK(capability_build_options(sm90->capabilities, device("AuthenticAMD", "pthread"), 90) == "");
  CHECK(capability_build_options(sm90->capabilities,
                                 device("Advanced Micro Devices, Inc.", "gfx1012"), 90) == "");
  // A model's variant is the architecture's: the H200 and H100 variants keep it.
  for (const std::string name : {"NVIDIA H200", "NVIDIA H100 80GB HBM3"}) {
    const DeviceProfile* model = set.find("sm_90", name);
    REQUIRE(model);
    CHECK_FALSE(model->model.empty());
    CHECK(capability_build_options(model->capabilities, h200, 90) == kDefines);
  }
  // Written out as declared.
  nlohmann::json j;
  to_json(j, *sm90);
  CHECK(j.at("capabilities") == sm90_json().at("capabilities"));
}

TEST_CASE("no other profile declares a capability", "[device_profile][capabilities]") {
  // AMD's and the CPU's builds (gfx1012, PoCL) never see a capability's define.
  const ProfileSet set = ProfileSet::load_dir(test::source_path("devices"));
  for (const auto& p : set.profiles()) {
    INFO(p.name);
    if (p.name == "sm_90") continue;
    CHECK(p.capabilities.empty());
    CHECK(capability_build_options(p.capabilities, device("NVIDIA Corporation", "x"), 90) == "");
    CHECK(p.build_options.find("CP_ASYNC_PTX") == std::string::npos);
  }
}

TEST_CASE("malformed or misplaced capabilities are refused naming the field",
          "[device_profile][capabilities]") {
  CHECK(test::profile_load_error(sm90_json()).empty());
  auto refused = [](auto change, const std::string& expected) {
    nlohmann::json j = sm90_json();
    change(j);
    const std::string why = test::profile_load_error(j);
    INFO(why);
    CHECK_THAT(why, Catch::Contains(expected));
  };
  refused([](auto& j) { j["capabilities"] = "ptx_cp_async"; }, "field 'capabilities' must be");
  refused([](auto& j) { j["capabilities"][0].erase("source"); }, "field 'capabilities' must be");
  refused([](auto& j) { j["capabilities"][0]["source"] = ""; }, "a public source");
  refused([](auto& j) { j["capabilities"][0]["define"] = "-DX=1"; }, "field 'capabilities'");
  refused([](auto& j) { j["capabilities"][0]["name"] = "ptx_tma"; },
          "field 'capabilities.ptx_tma' names no capability gemmtune knows");
  refused([](auto& j) { j["capabilities"].push_back(j["capabilities"][0]); },
          "field 'capabilities.ptx_cp_async' is declared twice");
  // A capability binds its profile to its vendor: a profile that may match other devices cannot
  // hand them PTX.
  refused([](auto& j) { j["match"].erase("vendor_contains"); },
          "field 'capabilities.ptx_cp_async' needs a profile matched to NVIDIA devices only");
  refused([](auto& j) { j["match"]["vendor_contains"].push_back("AMD"); },
          "needs a profile matched to NVIDIA devices only");
  nlohmann::json amd = read_json_file(test::source_path("devices/gfx1012.json"));
  amd["capabilities"] = sm90_json()["capabilities"];
  CHECK_THAT(test::profile_load_error(amd),
             Catch::Contains("needs a profile matched to NVIDIA devices only"));
}

TEST_CASE("split-K in one launch is refused on NVIDIA devices without GPU-scope fences",
          "[device_profile][capabilities]") {
  const DeviceInfo h200 = device("NVIDIA Corporation", "NVIDIA H200");
  // NVIDIA compiles mem_fence to membar.cta: without the capability's define, refused.
  CHECK_THAT(in_kernel_reduction_refusal(h200, "-cl-mad-enable"),
             Catch::Contains("capability ptx_fence_gpu"));
  CHECK(in_kernel_reduction_refusal(h200, "-cl-mad-enable " + std::string(kDefines)).empty());
  // Named by the platform only (a vendor string that does not say): still NVIDIA's compiler.
  DeviceInfo unnamed = device("", "GeForce");
  unnamed.platform_name = "NVIDIA CUDA";
  CHECK_FALSE(in_kernel_reduction_refusal(unnamed, "").empty());
  // AMD and CPU devices have their own fences (splitk_last.cl).
  CHECK(in_kernel_reduction_refusal(device("Advanced Micro Devices, Inc.", "gfx1012"), "").empty());
  CHECK(in_kernel_reduction_refusal(device("AuthenticAMD", "pthread"), "").empty());
  // The H200 profile's build options on an H200 give the define, so nothing is refused there.
  const ProfileSet set = ProfileSet::load_dir(test::source_path("devices"));
  const DeviceProfile* sm90 = set.find("sm_90");
  REQUIRE(sm90);
  CHECK(in_kernel_reduction_refusal(h200, capability_build_options(sm90->capabilities, h200, 90))
            .empty());
  CHECK_FALSE(
      in_kernel_reduction_refusal(h200, capability_build_options(sm90->capabilities, h200, 61))
          .empty());
}

}  // namespace gemmtune_tests::src_device_test_device_capabilities
