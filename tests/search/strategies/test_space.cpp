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

namespace gemmtune_tests::search_strategies_test_space {

// Rows in an order unlike their keys' (descending A), with a duplicate: the index of each row is
// the order it came in, whichever index the space builds.
void check_round_trip(const std::vector<Parameter>& params) {
  std::vector<Configuration> configs;
  for (int64_t a = 6; a-- > 0;) {
    for (int64_t b = 0; b < 6; ++b) {
      if ((a + b) % 3 == 0) continue;
      Configuration c;
      for (const auto& p : params) c[p.name] = p.values.front();
      c["A"] = a;
      c["B"] = b;
      configs.push_back(c);
    }
  }
  configs.push_back(configs.front());  // a duplicate is one row
  const SearchSpace s(params, configs);
  REQUIRE(s.size() == configs.size() - 1);
  for (size_t i = 0; i < s.size(); ++i) {
    CHECK(s.config(i) == configs[i]);
    CHECK(s.index_of(configs[i]) == std::optional<size_t>(i));
  }
  Configuration absent = configs.front();
  absent["A"] = 0;
  absent["B"] = 0;  // (0 + 0) % 3 == 0: left out
  CHECK_FALSE(s.index_of(absent).has_value());
  // Neighbours are rows of the space, found through the same index.
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t n : s.neighbours(i)) CHECK(n < s.size());
  }
}

TEST_CASE("search space finds rows by their values in small and huge spaces", "[search][space]") {
  std::vector<int64_t> six{0, 1, 2, 3, 4, 5};
  // 36 combinations: a bit per combination.
  check_round_trip({param("A", six), param("B", six)});
  // 6^2 x 200^4 = 5.8e10 combinations: too many to index by bits, found by hashing.
  std::vector<int64_t> wide(200);
  for (int64_t v = 0; v < 200; ++v) wide[size_t(v)] = v;
  check_round_trip({param("A", six), param("B", six), param("C", wide), param("D", wide),
                    param("E", wide), param("F", wide)});
}

}  // namespace gemmtune_tests::search_strategies_test_space
