// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cmath>

#include "search/strategies/surrogate.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_strategies_test_surrogate {

using namespace gemmtune;

namespace {

constexpr uint64_t kSeed = 7;
// The model's means are those of a GP fitted by gradient steps: compared loosely.
constexpr double kMeanTolerance = 1e-9;

// One parameter A = 1..64 (powers of two), time = A milliseconds: slow rows are large A.
SearchSpace line() {
  Parameter a;
  a.name = "A";
  a.values = {1, 2, 4, 8, 16, 32, 64};
  a.default_value = 1;
  std::vector<Configuration> configs;
  for (int64_t v : a.values) configs.push_back({{"A", v}});
  return SearchSpace({a}, configs);
}

Observation told(size_t row, bool ok = true) {
  Observation o;
  o.index = row;
  o.ok = ok;
  o.time_ms = double(int64_t(1) << row);
  return o;
}

SurrogateOptions options(const std::string& liar, bool classify) {
  SurrogateOptions o;
  o.dims = 1;
  o.liar = liar;
  o.classify_failures = classify;
  return o;
}

}  // namespace

TEST_CASE("the time scale standardizes the log times of the successful results",
          "[strategies][surrogate]") {
  const TimeScale s = TimeScale::of_results({told(0), told(2), told(1, false)});
  CHECK(s.best == Approx(std::log(1.0)));
  CHECK(s.worst == Approx(std::log(4.0)));
  CHECK(s.of(s.mean) == Approx(0.0));
  CHECK(s.of(s.best) < 0);
}

TEST_CASE("a told result replaces the guess of its proposal, and the pool grows on demand",
          "[strategies][surrogate]") {
  const SearchSpace space = line();
  SurrogateModel model(space, options("believer", false));
  Rng rng(kSeed);
  std::vector<Observation> history = {told(0), told(3), told(6)};
  const TimeScale scale = TimeScale::of_results(history);
  CHECK_FALSE(model.ready());
  model.rebuild(history, {}, scale, true, rng);
  REQUIRE(model.ready());
  CHECK(model.told_in_model() == 3);
  CHECK(model.fitted_size() == 3);
  CHECK(model.pool_rows().empty());

  // Row 5 in flight: the believer trains on the model's own mean there, so the mean stays.
  const int j5 = model.pool_index(5);
  const double guess = model.mean(j5);
  model.sync(history, {5}, scale);
  CHECK(model.told_in_model() == 3);
  CHECK(model.mean(j5) == Approx(guess).margin(kMeanTolerance));
  CHECK(model.pool_index(5) == j5);
  CHECK(model.pool_rows().size() == 1);

  // Its result arrives, far slower than the guess: the mean at the row moves towards it.
  history.push_back(told(5));
  history.back().time_ms = 1e4;
  model.sync(history, {}, scale);
  CHECK(model.told_in_model() == 4);
  CHECK(model.mean(j5) > guess);
  CHECK(model.sd(j5) >= 0);
  CHECK(model.valid_chance(j5) == 1.0);
}

TEST_CASE("the training subset is capped at rebuild", "[strategies][surrogate]") {
  // Two parameters of 20 and 15 values: 300 rows, more than kTrainCap, each told once.
  Parameter a, b;
  a.name = "A";
  b.name = "B";
  for (int64_t v = 1; v <= 20; ++v) a.values.push_back(v);
  for (int64_t v = 1; v <= 15; ++v) b.values.push_back(v);
  a.default_value = b.default_value = 1;
  std::vector<Configuration> configs;
  for (int64_t x : a.values) {
    for (int64_t y : b.values) configs.push_back({{"A", x}, {"B", y}});
  }
  const SearchSpace space({a, b}, configs);
  REQUIRE(space.size() > SurrogateModel::kTrainCap);
  std::vector<Observation> history;
  for (size_t r = 0; r < space.size(); ++r) {
    Observation o;
    o.index = r;
    o.ok = true;
    o.time_ms = 1.0 + double(r);
    history.push_back(o);
  }
  SurrogateOptions two = options("mean", false);
  two.dims = 2;
  SurrogateModel model(space, two);
  Rng rng(kSeed);
  model.rebuild(history, {}, TimeScale::of_results(history), false, rng);
  CHECK(model.told_in_model() == SurrogateModel::kTrainCap);
  CHECK(model.fitted_size() == 0);  // not refitted
}

TEST_CASE("with failures classified, the chance that a row runs falls near the failures",
          "[strategies][surrogate]") {
  const SearchSpace space = line();
  SurrogateModel model(space, options("mean", true));
  Rng rng(kSeed);
  // The three largest values fail; the failures stay out of the time model.
  const std::vector<Observation> history = {told(0),        told(1),        told(2),       told(3),
                                            told(4, false), told(5, false), told(6, false)};
  model.rebuild(history, {}, TimeScale::of_results(history), true, rng);
  CHECK(model.told_in_model() == 4);
  const int small = model.pool_index(0);
  const int large = model.pool_index(6);
  CHECK(model.valid_chance(large) < model.valid_chance(small));
  CHECK(model.valid_chance(large) >= 0.01);
  CHECK(model.valid_chance(small) <= 1.0);
}

}  // namespace gemmtune_tests::search_strategies_test_surrogate
