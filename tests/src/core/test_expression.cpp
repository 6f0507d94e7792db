// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "src/core/error.hpp"
#include "src/core/expression.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_core_test_expression {

using gemmtune::Expression;

namespace {
std::optional<int64_t> vars(const std::string& n) {
  if (n == "MWG") return 64;
  if (n == "MDIMC") return 16;
  if (n == "VWM") return 4;
  if (n == "ZERO") return 0;
  return std::nullopt;
}
}  // namespace

TEST_CASE("expressions follow C precedence", "[expression]") {
  CHECK(Expression::parse("1 + 2 * 3").evaluate(vars) == 7);
  CHECK(Expression::parse("(1 + 2) * 3").evaluate(vars) == 9);
  CHECK(Expression::parse("MWG % (MDIMC*VWM) == 0").evaluate(vars) == 1);
  CHECK(Expression::parse("MWG % (MDIMC*VWM*3) == 0").evaluate(vars) == 0);
  CHECK(Expression::parse("1 < 2 && 3 <= 3 || 0").evaluate(vars) == 1);
  CHECK(Expression::parse("!0 && -MWG == 0 - 64").evaluate(vars) == 1);
  CHECK(Expression::parse("MWG > 32 ? 7 : 9").evaluate(vars) == 7);
  CHECK(Expression::parse("min(MWG, 10) + max(2, VWM)").evaluate(vars) == 14);
  CHECK(Expression::parse("ceil_div(65, MWG) * round_up(65, MWG)").evaluate(vars) == 256);
  CHECK(Expression::parse("log2(MWG)").evaluate(vars) == 6);
}

TEST_CASE("expressions list their identifiers once", "[expression]") {
  auto e = Expression::parse("MWG % MDIMC + MWG / VWM");
  CHECK(e.identifiers() == std::vector<std::string>{"MWG", "MDIMC", "VWM"});
}

TEST_CASE("expression errors name the position or the name", "[expression]") {
  REQUIRE_THROWS_WITH(Expression::parse("MWG % (MDIMC"), Catch::Contains("expected ')'"));
  REQUIRE_THROWS_WITH(Expression::parse("MWG $ 2"), Catch::Contains("position 4"));
  REQUIRE_THROWS_WITH(Expression::parse("foo(1)"), Catch::Contains("unknown function"));
  REQUIRE_THROWS_WITH(Expression::parse("NOPE + 1").evaluate(vars), Catch::Contains("NOPE"));
  REQUIRE_THROWS_WITH(Expression::parse("MWG / ZERO").evaluate(vars),
                      Catch::Contains("division by zero"));
  CHECK_FALSE(Expression::parse("MWG % ZERO").try_evaluate(vars).has_value());
}

}  // namespace gemmtune_tests::src_core_test_expression
