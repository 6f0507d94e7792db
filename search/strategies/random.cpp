// SPDX-License-Identifier: Apache-2.0
// random: uniform over the valid configurations, without repeats, seeded.
#include "search/strategies/strategies.hpp"

namespace gemmtune {

namespace {

class RandomSearcher : public Searcher {
 public:
  using Searcher::Searcher;

 protected:
  std::optional<size_t> propose() override { return random_unseen(); }
};

}  // namespace

StrategyInfo random_strategy() {
  return {"random",
          "uniform over the valid configurations, without repeats",
          {},
          [](const SearchSpace& space, uint64_t seed, const StrategyOptions&) {
            return std::make_unique<RandomSearcher>(space, seed);
          }};
}

}  // namespace gemmtune
