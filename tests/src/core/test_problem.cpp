// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <type_traits>
#include <utility>

#include "src/core/problem.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_core_test_problem {

using namespace gemmtune;

namespace {

// Whether T has a data member named `kernel`.
template <typename T, typename = void>
struct has_kernel_member : std::false_type {};
template <typename T>
struct has_kernel_member<T, std::void_t<decltype(std::declval<T&>().kernel)>> : std::true_type {};

}  // namespace

TEST_CASE("a problem names no kernel: the kernel is chosen for it and travels beside it",
          "[problem]") {
  STATIC_REQUIRE_FALSE(has_kernel_member<Problem>::value);

  Problem p;
  p.shape = Shape{8, 16, 32};
  p.trans_b = true;
  const nlohmann::json alone = p;
  CHECK_FALSE(alone.contains("kernel"));

  // Files hold the owner's kernel inside the problem's object, where earlier versions read it.
  const nlohmann::json j = problem_json(p, "xgemm_fast");
  CHECK(j.at("kernel") == "xgemm_fast");
  CHECK(kernel_in_problem_json(j) == "xgemm_fast");
  const Problem back = j.get<Problem>();
  CHECK(back.shape == p.shape);
  CHECK(back.layout() == "NT");
  // A file written without one meant the default template.
  CHECK(kernel_in_problem_json(alone) == "xgemm");
}

}  // namespace gemmtune_tests::src_core_test_problem
