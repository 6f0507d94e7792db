// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/core/error.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_device {

using namespace gemmtune;

namespace {

Device fake(int p, int d, const std::string& name, const std::string& type,
            const std::string& profile) {
  Device dev;
  dev.info.platform_index = p;
  dev.info.device_index = d;
  dev.info.name = name;
  dev.info.type = type;
  dev.info.profile = profile;
  return dev;
}

std::vector<Device> machine() {
  return {fake(0, 0, "pthread-skylake-avx512-Intel(R) Xeon(R)", "cpu", "cpu-generic"),
          fake(1, 0, "gfx1012", "gpu", "gfx1012"), fake(1, 1, "gfx906:sramecc+:xnack-", "gpu", "gfx906"),
          fake(2, 0, "NVIDIA H200", "gpu", "sm_90")};
}

}  // namespace

TEST_CASE("the default device is the first GPU, else the first CPU", "[device]") {
  CHECK(select_device_from(machine(), "").info.name == "gfx1012");
  CHECK(select_device_from(machine(), "default").info.name == "gfx1012");
  std::vector<Device> cpu_only = {fake(0, 0, "pthread-x", "cpu", "cpu-generic")};
  CHECK(select_device_from(cpu_only, "").info.name == "pthread-x");
}

TEST_CASE("device option selects by profile, name substring and indices", "[device]") {
  CHECK(select_device_from(machine(), "gfx906").info.selector() == "1:1");
  CHECK(select_device_from(machine(), "GFX1012").info.selector() == "1:0");
  CHECK(select_device_from(machine(), "sm_90").info.name == "NVIDIA H200");
  CHECK(select_device_from(machine(), "h200").info.selector() == "2:0");
  CHECK(select_device_from(machine(), "pthread").info.type == "cpu");
  CHECK(select_device_from(machine(), "1:1").info.name == "gfx906:sramecc+:xnack-");
  CHECK(select_device_from(machine(), "2:0").info.name == "NVIDIA H200");
}

TEST_CASE("a selector matching several devices takes the first", "[device]") {
  CHECK(select_device_from(machine(), "gfx").info.selector() == "1:0");
}

TEST_CASE("a selector matching nothing lists what there is", "[device]") {
  try {
    select_device_from(machine(), "RTX 4090");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::kInvalidArgument);
    CHECK_THAT(e.what(), Catch::Contains("RTX 4090") && Catch::Contains("NVIDIA H200") &&
                             Catch::Contains("1:1"));
  }
  CHECK_THROWS_WITH(select_device_from(machine(), "3:0"), Catch::Contains("matches no device"));
  CHECK_THROWS_WITH(select_device_from({}, ""), Catch::Contains("no OpenCL device"));
}

TEST_CASE("device ids are file-name safe", "[device]") {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  CHECK(d.id() == "nvidia-h200");
  d.name = "pthread-skylake-avx512-Intel(R) Xeon(R) Processor @ 2.50GHz";
  CHECK(d.id() == "pthread-skylake-avx512");
  d.name = "gfx906:sramecc+:xnack-";
  CHECK(d.id() == "gfx906-sramecc-xnack");
}

TEST_CASE("PoCL is listed with the CPU profile", "[device][opencl]") {
  const auto profiles = ProfileSet::load_dir(test::source_path("devices"));
  const auto devices = list_devices(&profiles);
  REQUIRE_FALSE(devices.empty());
  bool found = false;
  for (const auto& d : devices) {
    if (d.info.type == "cpu" && d.info.name.find("pthread") != std::string::npos) {
      found = true;
      CHECK(d.info.profile == "cpu-generic");
      CHECK(d.info.compute_units > 0);
      CHECK(d.info.max_work_group_size > 0);
    }
  }
  CHECK(found);
}

}  // namespace gemmtune_tests::src_device_test_device
