// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_device_profile {

using namespace gemmtune;

namespace {

nlohmann::json valid_profile() {
  return read_json_file(test::source_path("devices/gfx1012.json"));
}

}  // namespace

TEST_CASE("every checked-in profile loads and names a source for each figure", "[profile]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  for (const char* name :
       {"gfx1012", "gfx1010", "gfx1030", "gfx1100", "gfx906", "gfx803", "sm_90", "cpu-generic"}) {
    INFO(name);
    const auto* p = set.find(name);
    REQUIRE(p != nullptr);
    for (const auto& key : DeviceProfile::required_figures()) {
      INFO(key);
      CHECK(p->figures.count(key) == 1);
      CHECK_FALSE(p->figures.at(key).source.empty());
    }
    CHECK_FALSE(p->wavefront_sizes.empty());
  }
}

TEST_CASE("profile figures hold the architecture values", "[profile]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  CHECK(set.find("gfx1012")->figure("max_waves_per_simd") == 20);
  CHECK(set.find("gfx1012")->wavefront_sizes == std::vector<int64_t>{32, 64});
  CHECK(set.find("gfx906")->figure("registers_per_simd_lane") == 256);
  CHECK(set.find("gfx906")->wavefront_sizes == std::vector<int64_t>{64});
  CHECK(set.find("sm_90")->figure("max_registers_per_thread") == 255);
}

TEST_CASE("a malformed profile is an error naming the file and the field", "[profile]") {
  auto j = valid_profile();
  j["figures"].erase("lds_banks");
  auto err = test::profile_load_error(j);
  CHECK_THAT(err, Catch::Contains("bad.json") && Catch::Contains("figures.lds_banks"));

  j = valid_profile();
  j["figures"]["peak_fp32_gflops"]["value"] = "fast";
  CHECK_THAT(test::profile_load_error(j), Catch::Contains("figures.peak_fp32_gflops.value"));

  j = valid_profile();
  j["figures"]["cache_line_bytes"].erase("source");
  CHECK_THAT(test::profile_load_error(j), Catch::Contains("figures.cache_line_bytes.source"));

  j = valid_profile();
  j["match"]["type"] = "toaster";
  CHECK_THAT(test::profile_load_error(j), Catch::Contains("match.type"));

  j = valid_profile();
  j.erase("name");
  CHECK_THAT(test::profile_load_error(j), Catch::Contains("'name'"));

  const std::string dir = test::temp_dir("profile-syntax");
  std::ofstream(dir + "/broken.json") << "{\"name\": \"x\",\n  \"match\": }";
  try {
    load_profile(dir + "/broken.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("broken.json") && Catch::Contains("line 2"));
  }
}

TEST_CASE("profiles match devices by type, name and priority", "[profile]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  DeviceInfo amd;
  amd.type = "gpu";
  amd.name = "gfx1012";
  amd.vendor = "Advanced Micro Devices, Inc.";
  REQUIRE(set.match(amd) != nullptr);
  CHECK(set.match(amd)->name == "gfx1012");

  DeviceInfo nv;
  nv.type = "gpu";
  nv.name = "NVIDIA H200";
  nv.vendor = "NVIDIA Corporation";
  CHECK(set.match(nv)->name == "sm_90");

  DeviceInfo cpu;
  cpu.type = "cpu";
  cpu.name = "pthread-skylake-avx512-Intel(R) Xeon(R) Processor @ 2.50GHz";
  CHECK(set.match(cpu)->name == "cpu-generic");

  DeviceInfo other;
  other.type = "gpu";
  other.name = "Mali-G78";
  CHECK(set.match(other) == nullptr);
}

TEST_CASE("device limits combine the driver and the profile", "[profile]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  DeviceInfo nv;
  nv.max_work_group_size = 1024;
  nv.local_mem_bytes = 49152;
  const auto limits = device_limits(nv, set.find("sm_90"));
  CHECK(limits.max_work_group_size == 1024);
  CHECK(limits.local_mem_bytes == 49152);
  CHECK(limits.max_registers_per_thread == 255);
  CHECK(device_limits(nv, nullptr).max_registers_per_thread == 0);
}

TEST_CASE("models of one architecture keep their own figures", "[profile]") {
  const auto set = ProfileSet::load_dir(test::source_path("devices"));
  auto hopper = [](const std::string& name) {
    DeviceInfo d;
    d.type = "gpu";
    d.name = name;
    d.vendor = "NVIDIA Corporation";
    return d;
  };
  const auto bandwidth = [&](const std::string& name) {
    const auto* p = set.match(hopper(name));
    REQUIRE(p != nullptr);
    CHECK(p->name == "sm_90");
    return p->figure("memory_bandwidth_gbs");
  };
  CHECK(bandwidth("NVIDIA H100 80GB HBM3") == 3350);
  CHECK(bandwidth("NVIDIA H100 PCIe") == 2000);
  CHECK(bandwidth("NVIDIA H100 NVL") == 3900);
  CHECK(bandwidth("NVIDIA H200") == 4800);
  CHECK(set.match(hopper("NVIDIA H100 PCIe"))->figure("compute_units") == 114);
  CHECK(set.match(hopper("NVIDIA H100 80GB HBM3"))->figure("compute_units") == 132);
  CHECK(set.match(hopper("NVIDIA H100 80GB HBM3"))->model == "H100 SXM");

  // A database names the architecture and the device: the lookup by both gives the model.
  CHECK(set.find("sm_90")->model.empty());
  CHECK(set.find("sm_90", "NVIDIA H100 80GB HBM3")->figure("memory_bandwidth_gbs") == 3350);
  CHECK(set.find("sm_90", "NVIDIA H200")->figure("memory_bandwidth_gbs") == 4800);
  CHECK(set.find("sm_90", "Mali-G78") == set.find("sm_90"));
  CHECK(set.find("gfx1012", "NVIDIA H100 80GB HBM3") == set.find("gfx1012"));
}

TEST_CASE("a malformed model is an error naming the file and the field", "[profile]") {
  auto j = read_json_file(test::source_path("devices/sm_90.json"));
  j["models"][0].erase("name_contains");
  CHECK_THAT(test::profile_load_error(j), Catch::Contains("name_contains"));
  j = read_json_file(test::source_path("devices/sm_90.json"));
  j["models"][0]["figures"]["memory_bandwidth_gbs"]["value"] = "fast";
  CHECK_THAT(test::profile_load_error(j),
             Catch::Contains("models.H100 SXM.figures.memory_bandwidth_gbs.value"));
  j = read_json_file(test::source_path("devices/sm_90.json"));
  j["models"] = 3;
  CHECK_THAT(test::profile_load_error(j), Catch::Contains("models"));
}

}  // namespace gemmtune_tests::src_device_test_device_profile
