// SPDX-License-Identifier: Apache-2.0
// xgemm_fast's declaration of ASYNC (multistage copies) and STAGES 3 and 4: what the constraints
// allow, the local memory they take, and the spaces that search them. Every configuration that
// existed before ASYNC keeps its meaning: ASYNC defaults to 0, STAGES 1 and 2 are what they were,
// and 3 and 4 exist only with ASYNC.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "src/kernel/kernel_spec.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_kernel_test_kernel_spec_async {

using namespace gemmtune;

namespace {

const Context kFp32{{"ELEM_BYTES", 4}};

KernelSpec xgemm_fast() {
  return KernelSpec::load(test::source_path("kernel_templates/xgemm_fast.json"));
}

Configuration with(const KernelSpec& spec, const Configuration& changes) {
  Configuration c = spec.defaults();
  for (const auto& [name, value] : changes) c[name] = value;
  return c;
}

}  // namespace

TEST_CASE("ASYNC defaults to 0 and STAGES 3 and 4 need it", "[kernel_spec][async]") {
  const KernelSpec spec = xgemm_fast();
  CHECK(spec.defaults().at("ASYNC") == 0);
  CHECK(spec.defaults().at("STAGES") == 2);
  CHECK_FALSE(spec.check(spec.defaults(), DeviceLimits{}, kFp32));
  for (int64_t stages : {2, 3, 4}) {
    INFO("STAGES=" << stages);
    CHECK_FALSE(spec.check(with(spec, {{"ASYNC", 1}, {"STAGES", stages}}), DeviceLimits{}, kFp32));
  }
  for (int64_t stages : {3, 4}) {
    const auto why = spec.check(with(spec, {{"STAGES", stages}}), DeviceLimits{}, kFp32);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("STAGES <= 2 || ASYNC == 1"));
  }
  // One buffer, or none: nothing to fill while another is read.
  for (const Configuration& c :
       {with(spec, {{"ASYNC", 1}, {"STAGES", 1}}),
        with(spec, {{"ASYNC", 1}, {"LDS", 0}, {"STAGES", 1}, {"PREFETCH", 0}})}) {
    const auto why = spec.check(c, DeviceLimits{}, kFp32);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("ASYNC == 0 || (LDS == 1 && STAGES >= 2)"));
  }
}

TEST_CASE("the stages' local memory is counted and bounded", "[kernel_spec][async]") {
  const KernelSpec spec = xgemm_fast();
  // STAGES buffers of A and B, padding included.
  const Configuration four = with(spec, {{"ASYNC", 1}, {"STAGES", 4}, {"PADA", 4}, {"PADB", 4}});
  CHECK(*spec.local_mem_bytes(four, kFp32) == 4 * 4 * 16 * (64 + 4 + 64 + 4));
  CHECK(*spec.local_mem_bytes(four, Context{{"ELEM_BYTES", 2}}) == 2 * 4 * 16 * (64 + 4 + 64 + 4));
  // K tile 16: three stages of 128x64 tiles take 36 KiB; of 128x128 tiles 48 KiB, which with the
  // 64 bytes NVIDIA's compiler adds exceed its 48 KiB per work-group.
  const Configuration three = with(spec, {{"MWG", 128}, {"ASYNC", 1}, {"STAGES", 3}});
  CHECK(*spec.local_mem_bytes(three, kFp32) == 36864);
  CHECK_FALSE(spec.check(three, DeviceLimits{}, kFp32));
  Configuration big = three;
  big["NWG"] = 128;
  CHECK(*spec.local_mem_bytes(big, kFp32) == 49152);
  const auto why = spec.check(big, DeviceLimits{}, kFp32);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("48 KiB"));
  // A device's own limit applies as always.
  DeviceLimits small;
  small.local_mem_bytes = 32768;
  CHECK(spec.check(three, small, kFp32));
}

TEST_CASE("the ci, gpu and large spaces search ASYNC and its depths", "[kernel_spec][async]") {
  const KernelSpec spec = xgemm_fast();
  for (const std::string name : {"ci", "gpu", "large"}) {
    INFO(name);
    const ParamSpace space(spec, name, DeviceLimits{}, kFp32);
    std::map<int64_t, std::set<int64_t>> stages;  // ASYNC -> STAGES
    space.for_each([&](const Configuration& c) {
      stages[c.at("ASYNC")].insert(c.at("STAGES"));
      return true;
    });
    CHECK(stages[0] == std::set<int64_t>{1, 2});
    CHECK(stages[1] == std::set<int64_t>{2, 3, 4});
  }
}

}  // namespace gemmtune_tests::src_kernel_test_kernel_spec_async
