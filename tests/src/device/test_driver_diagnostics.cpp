// SPDX-License-Identifier: Apache-2.0
// Driver diagnostics on recorded build logs and device descriptions (tests/data/drivers/, written
// in the shape Mesa's Clover, LLVM, ROCm, rusticl and PoCL print them): each known driver fault is
// one line naming the cause and the way out, and ordinary build errors and healthy devices get
// none.
#include <catch2/catch.hpp>

#include "src/core/json_util.hpp"
#include "src/device/driver_diagnostics.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_driver_diagnostics {

using namespace gemmtune;

namespace {

std::string recorded_log(const std::string& name) {
  return read_text_file(test::source_path("tests/data/drivers/" + name));
}

nlohmann::json recorded_devices() {
  return read_json_file(test::source_path("tests/data/drivers/devices.json"));
}

// Mesa Clover's description of an RX 5500 XT, as recorded.
DeviceInfo clover_rx5500() {
  for (const auto& c : recorded_devices()) {
    if (c["driver"].get<std::string>().rfind("Mesa Clover on an RX 5500 XT", 0) == 0) {
      return c["device"].get<DeviceInfo>();
    }
  }
  FAIL("tests/data/drivers/devices.json has no Clover RX 5500 XT");
  return {};
}

bool one_line(const std::string& s) {
  return !s.empty() && s.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("Clover's missing libclc bitcode names the ISA and the ways out", "[device][drivers]") {
  const auto d =
      diagnose_build_failure(recorded_log("clover_missing_bitcode.log"), clover_rx5500());
  REQUIRE(d);
  CHECK(one_line(*d));
  CHECK_THAT(*d, Catch::Contains("gfx1012") &&
                     Catch::Contains("/usr/lib/clc/gfx1012-amdgcn-mesa-mesa3d.bc") &&
                     Catch::Contains("libclc with gfx10 bitcode") && Catch::Contains("rusticl") &&
                     Catch::Contains("Mesa 23.1") && Catch::Contains("ROCm"));
}

TEST_CASE("a crashed OpenCL compiler is a driver fault of one configuration", "[device][drivers]") {
  DeviceInfo pocl;
  pocl.platform_name = "Portable Computing Language";
  for (const auto& [file, quoted] :
       {std::pair{"llvm_error.log", "LLVM ERROR: Cannot select"},
        std::pair{"stack_dump.log", "PLEASE submit a bug report"},
        std::pair{"killed_compiler.log", "killed by signal 11 (Segmentation fault)"}}) {
    INFO(file);
    const auto d = diagnose_build_failure(recorded_log(file), pocl);
    REQUIRE(d);
    CHECK(one_line(*d));
    CHECK_THAT(*d, Catch::Contains("compiler of Portable Computing Language crashed") &&
                       Catch::Contains(quoted) && Catch::Contains("not of the kernel") &&
                       Catch::Contains("the others are still tried"));
    // The diagnosis comes first, the log as the driver wrote it after it.
    const std::string log = diagnosed_build_log(recorded_log(file), pocl);
    CHECK(log.rfind(*d + "\n", 0) == 0);
    CHECK_THAT(log, Catch::EndsWith(recorded_log(file)));
  }
}

TEST_CASE("an ordinary build error has no driver diagnosis", "[device][drivers]") {
  DeviceInfo pocl;
  pocl.platform_name = "Portable Computing Language";
  pocl.device_version = "OpenCL 3.0 PoCL";
  const std::string log = recorded_log("compile_error.log");
  CHECK_FALSE(diagnose_build_failure(log, pocl));
  CHECK(diagnosed_build_log(log, pocl) == log);
}

TEST_CASE("a build on an OpenCL 1.1 device that fails says what gemmtune does there",
          "[device][drivers]") {
  const auto d = diagnose_build_failure(recorded_log("compile_error.log"), clover_rx5500());
  REQUIRE(d);
  CHECK_THAT(*d, Catch::Contains("OpenCL 1.1 device") && Catch::Contains("OpenCL C 1.1"));
}

TEST_CASE("device notes on recorded driver descriptions", "[device][drivers]") {
  const auto cases = recorded_devices();
  REQUIRE(cases.size() >= 8);
  for (const auto& c : cases) {
    INFO(c["driver"].get<std::string>());
    const DeviceInfo device = c["device"].get<DeviceInfo>();
    const auto notes = device_notes(device, c["hsa_override"].get<std::string>());
    REQUIRE(notes.size() == c["notes"].size());
    for (size_t i = 0; i < notes.size(); ++i) {
      INFO(notes[i]);
      CHECK(one_line(notes[i]));
      for (const auto& part : c["notes"][i])
        CHECK_THAT(notes[i], Catch::Contains(part.get<std::string>()));
    }
  }
}

}  // namespace gemmtune_tests::src_device_test_driver_diagnostics
