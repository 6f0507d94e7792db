// SPDX-License-Identifier: Apache-2.0
// kernel_build_options: the one composition of a kernel's build options (defines, precision,
// transposes, batch layout, epilogue, the profile's options and the register cap by the device's
// method), pinned where binary cache keys depend on it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/kernel/kernel_source.hpp"
#include "src/kernel/kernel_spec.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_kernel_test_kernel_source {

using namespace gemmtune;

namespace {

constexpr int64_t kCap = 128;
const std::string kProfileOptions = "-cl-mad-enable";

// One tunable and a register cap: short enough to spell the whole option string.
KernelSpec tiny_spec() {
  const nlohmann::json j = {{"kernel", "tiny"},
                            {"source", "tiny.cl"},
                            {"entry", "Tiny"},
                            {"parameters",
                             {{{"name", "WG"}, {"values", {8, 16}}, {"default", 8}},
                              {{"name", "REGCAP"}, {"values", {0, kCap}}, {"default", 0}}}},
                            {"launch", {{"local", {"WG"}}, {"global", {"WG"}}}},
                            {"register_cap", "REGCAP"}};
  return KernelSpec::from_json(j, "tiny.json");
}

// A column-major single-precision GEMM with op(A) transposed: the view keeps the transposes.
Problem col_major_tn() {
  Problem p;
  p.shape = {64, 32, 16};
  p.order = Order::kColMajor;
  p.trans_a = true;
  return p;
}

DeviceLimits build_option_limits() {
  DeviceLimits limits;
  limits.register_cap_known = true;
  limits.register_cap_option = "-cl-nv-maxrregcount=";
  return limits;
}

DeviceLimits attribute_limits() {
  DeviceLimits limits;
  limits.register_cap_known = true;
  limits.register_cap_attribute = true;
  return limits;
}

}  // namespace

TEST_CASE("kernel build options apply a register cap by the device's method",
          "[kernel_spec][regcap]") {
  const KernelSpec spec = tiny_spec();
  const Problem p = col_major_tn();
  Configuration capped = spec.defaults();
  capped["REGCAP"] = kCap;
  const std::string defines = "-DREGCAP=128 -DWG=8 -DPRECISION=32 -DTRANSA=1 -DTRANSB=0";

  // NVIDIA: the option with the value appended, after the profile's options.
  CHECK(kernel_build_options(spec, p, capped, build_option_limits(), kProfileOptions) ==
        defines + " -cl-mad-enable -cl-nv-maxrregcount=128");
  // AMD: the define that makes the template declare the cap as an attribute.
  CHECK(kernel_build_options(spec, p, capped, attribute_limits(), kProfileOptions) ==
        defines + " -cl-mad-enable -DREGCAP_ATTRIBUTE=1");
  // No way known to apply it, or nothing known of the device: no cap option at all (the check
  // refuses such a configuration before it is built where the device is known).
  DeviceLimits none;
  none.register_cap_known = true;
  CHECK(kernel_build_options(spec, p, capped, none, kProfileOptions) ==
        defines + " -cl-mad-enable");
  CHECK(kernel_build_options(spec, p, capped, DeviceLimits{}, kProfileOptions) ==
        defines + " -cl-mad-enable");
}

TEST_CASE("an uncapped kernel builds with the same options whatever the cap method",
          "[kernel_spec][regcap]") {
  // The binary cache key hashes this string: REGCAP=0 must not change it on any device.
  const KernelSpec spec = tiny_spec();
  const Problem p = col_major_tn();
  const Configuration plain = spec.defaults();
  const std::string expected =
      "-DREGCAP=0 -DWG=8 -DPRECISION=32 -DTRANSA=1 -DTRANSB=0 -cl-mad-enable";
  CHECK(kernel_build_options(spec, p, plain, build_option_limits(), kProfileOptions) == expected);
  CHECK(kernel_build_options(spec, p, plain, attribute_limits(), kProfileOptions) == expected);
  CHECK(kernel_build_options(spec, p, plain, DeviceLimits{}, kProfileOptions) == expected);
}

TEST_CASE("kernel build options carry the problem's view, batch and epilogue",
          "[kernel_spec][regcap]") {
  const KernelSpec spec = tiny_spec();
  Configuration capped = spec.defaults();
  capped["REGCAP"] = kCap;

  // Row-major swaps A and B: op(A)^T of the user is the view's TRANSB.
  Problem row = col_major_tn();
  row.order = Order::kRowMajor;
  row.precision = Precision::kFP16Acc32;
  row.batch = 4;
  row.batch_layout = BatchLayout::kOffsets;
  row.epilogue = parse_epilogue("bias,relu");
  // Defines first, then the epilogue, the profile's options and the cap, in that order.
  CHECK(kernel_build_options(spec, row, capped, attribute_limits(), kProfileOptions) ==
        "-DREGCAP=128 -DWG=8 -DPRECISION=1632 -DTRANSA=0 -DTRANSB=1 -DBATCH_LAYOUT=2 "
        "-DBIAS=1 -DACTIVATION=1 -cl-mad-enable -DREGCAP_ATTRIBUTE=1");
  // A vendor flag the caller adds to the profile's options stays before the cap.
  CHECK(kernel_build_options(spec, row, capped, build_option_limits(),
                             kProfileOptions + " -cl-nv-verbose") ==
        "-DREGCAP=128 -DWG=8 -DPRECISION=1632 -DTRANSA=0 -DTRANSB=1 -DBATCH_LAYOUT=2 "
        "-DBIAS=1 -DACTIVATION=1 -cl-mad-enable -cl-nv-verbose -cl-nv-maxrregcount=128");
}

TEST_CASE("a runtime parameter is no define: configurations differing there build alike",
          "[kernel_spec]") {
  const nlohmann::json j = {
      {"kernel", "tiny"},
      {"source", "tiny.cl"},
      {"entry", "Tiny"},
      {"parameters",
       {{{"name", "WG"}, {"values", {8, 16}}, {"default", 8}},
        {{"name", "ORDER"}, {"values", {1, 4}}, {"default", 1}, {"runtime", true}}}},
      {"launch", {{"local", {"WG"}}, {"global", {"WG"}}}}};
  const KernelSpec spec = KernelSpec::from_json(j, "tiny.json");
  REQUIRE(spec.runtime_parameters().size() == 1);
  CHECK(spec.runtime_parameters()[0].name == "ORDER");
  Configuration one = spec.defaults(), four = one;
  four["ORDER"] = 4;
  const std::string options =
      kernel_build_options(spec, col_major_tn(), one, DeviceLimits{}, kProfileOptions);
  CHECK(options ==
        kernel_build_options(spec, col_major_tn(), four, DeviceLimits{}, kProfileOptions));
  CHECK(options.find("ORDER") == std::string::npos);
  CHECK(options.find("-DWG=8") != std::string::npos);
  // The flag is a boolean.
  nlohmann::json wrong = j;
  wrong["parameters"][1]["runtime"] = "yes";
  CHECK_THROWS_WITH(KernelSpec::from_json(wrong, "tiny.json"),
                    Catch::Contains("tiny.json") && Catch::Contains("parameters[1].runtime") &&
                        Catch::Contains("true or false"));
}

TEST_CASE("a runtime parameter's compiled values are defines, each its own build",
          "[kernel_spec]") {
  const nlohmann::json j = {{"kernel", "tiny"},
                            {"source", "tiny.cl"},
                            {"entry", "Tiny"},
                            {"parameters",
                             {{{"name", "WG"}, {"values", {8, 16}}, {"default", 8}},
                              {{"name", "ORDER"},
                               {"values", {1, 4, 8}},
                               {"default", 1},
                               {"runtime", true},
                               {"compiled_values", {1}}}}},
                            {"launch", {{"local", {"WG"}}, {"global", {"WG"}}}}};
  const KernelSpec spec = KernelSpec::from_json(j, "tiny.json");
  auto options = [&](int64_t order) {
    Configuration c = spec.defaults();
    c["ORDER"] = order;
    return kernel_build_options(spec, col_major_tn(), c, DeviceLimits{}, kProfileOptions);
  };
  CHECK(options(1).find("-DORDER=1") != std::string::npos);
  CHECK(options(4).find("ORDER") == std::string::npos);
  CHECK(options(4) == options(8));
  CHECK(options(1) != options(4));
  // Only a runtime parameter has them, and only among its values.
  nlohmann::json not_runtime = j;
  not_runtime["parameters"][1].erase("runtime");
  CHECK_THROWS_WITH(KernelSpec::from_json(not_runtime, "tiny.json"),
                    Catch::Contains("parameters[1].compiled_values") &&
                        Catch::Contains("needs \"runtime\": true"));
  nlohmann::json stray = j;
  stray["parameters"][1]["compiled_values"] = {2};
  CHECK_THROWS_WITH(KernelSpec::from_json(stray, "tiny.json"),
                    Catch::Contains("compiled_values: 2 of ORDER is not among its values"));
}

}  // namespace gemmtune_tests::src_kernel_test_kernel_source
