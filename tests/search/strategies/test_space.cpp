// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <algorithm>

#include "search/strategies/space.hpp"
#include "src/core/error.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_strategies_test_space {

using namespace gemmtune;

namespace {

Parameter param(const std::string& name, std::vector<int64_t> values) {
  Parameter p;
  p.name = name;
  p.values = std::move(values);
  p.default_value = p.values.front();
  return p;
}

// A 3x3 grid of (A, B) minus the centre (A=2,B=20), plus a single-valued parameter C.
SearchSpace grid() {
  std::vector<Configuration> configs;
  for (int64_t a : {1, 2, 4}) {
    for (int64_t b : {0, 10, 20}) {
      if (a == 2 && b == 10) continue;
      configs.push_back({{"A", a}, {"B", b}, {"C", 7}});
    }
  }
  return SearchSpace({param("A", {1, 2, 4}), param("B", {0, 10, 20}), param("C", {7})}, configs);
}

}  // namespace

TEST_CASE("search space indexes configurations", "[search][space]") {
  const SearchSpace s = grid();
  REQUIRE(s.size() == 8);
  CHECK(s.dimensions() == std::vector<size_t>{0, 1});
  for (size_t i = 0; i < s.size(); ++i) CHECK(s.index_of(s.config(i)) == i);
  CHECK_FALSE(s.index_of({{"A", 2}, {"B", 10}, {"C", 7}}));  // the hole
  CHECK_FALSE(s.index_of({{"A", 3}, {"B", 10}, {"C", 7}}));  // not a value
  CHECK_FALSE(s.index_of({{"A", 1}, {"B", 0}}));             // incomplete
  CHECK_THROWS_AS(SearchSpace({param("A", {1, 2})}, {{{"A", 5}}}), Error);
}

TEST_CASE("search space encodes log2 of positive values and scales others linearly",
          "[search][space]") {
  const SearchSpace s = grid();
  double x[2];
  s.encode(*s.index_of({{"A", 2}, {"B", 20}, {"C", 7}}), x);
  CHECK(x[0] == Approx(0.5));  // log2: 0, 1, 2 → 0, 0.5, 1
  CHECK(x[1] == Approx(1.0));  // 0 is not positive: linear 0, 0.5, 1
  s.encode(*s.index_of({{"A", 4}, {"B", 10}, {"C", 7}}), x);
  CHECK(x[0] == Approx(1.0));
  CHECK(x[1] == Approx(0.5));
}

TEST_CASE("search space neighbours move one parameter to an adjacent value", "[search][space]") {
  const SearchSpace s = grid();
  auto names = [&](std::vector<size_t> idx) {
    std::vector<std::string> out;
    for (size_t i : idx) out.push_back(to_string(s.config(i)));
    std::sort(out.begin(), out.end());
    return out;
  };
  const size_t corner = *s.index_of({{"A", 1}, {"B", 0}, {"C", 7}});
  CHECK(names(s.neighbours(corner)) == std::vector<std::string>{"A=1,B=10,C=7", "A=2,B=0,C=7"});
  // The centre's neighbour (2,10) is invalid, so (2,0) has only (1,0), (4,0).
  CHECK(names(s.neighbours(*s.index_of({{"A", 2}, {"B", 0}, {"C", 7}}))) ==
        std::vector<std::string>{"A=1,B=0,C=7", "A=4,B=0,C=7"});
  CHECK(names(s.second_neighbours(corner)) == std::vector<std::string>{});  // (2,10) is the hole
  CHECK(names(s.second_neighbours(*s.index_of({{"A", 1}, {"B", 10}, {"C", 7}}))) ==
        std::vector<std::string>{"A=2,B=0,C=7", "A=2,B=20,C=7"});
}

TEST_CASE("search space from recorded configurations", "[search][space]") {
  const SearchSpace s = SearchSpace::from_configurations(
      {{{"X", 8}, {"Y", 1}}, {{"X", 2}, {"Y", 1}}, {{"X", 4}, {"Y", 1}}, {{"X", 2}, {"Y", 1}}});
  CHECK(s.size() == 3);  // the duplicate counts once
  CHECK(s.parameters()[0].values == std::vector<int64_t>{2, 4, 8});
  CHECK(s.dimensions().size() == 1);
}

}  // namespace gemmtune_tests::search_strategies_test_space
