// SPDX-License-Identifier: Apache-2.0
// exhaustive: every valid configuration once. The tuning loop compiles the next configurations
// while the current one is timed, so the device stays busy whatever the order.
#include <numeric>

#include "search/strategies/strategies.hpp"

namespace gemmtune {

namespace {

class ExhaustiveSearcher : public Searcher {
 public:
  ExhaustiveSearcher(const SearchSpace& space, uint64_t seed, const StrategyOptions& options)
      : Searcher(space, seed), order_(space.size()) {
    std::iota(order_.begin(), order_.end(), size_t{0});
    // A shuffled order makes a run cut short by a budget an unbiased sample of the space.
    if (options.get_string("order", {"index", "shuffled"}) == "shuffled") rng_.shuffle(order_);
  }

 protected:
  std::optional<size_t> propose() override {
    while (next_ < order_.size()) {
      const size_t i = order_[next_++];
      if (!seen(i)) return i;
    }
    return std::nullopt;
  }

 private:
  std::vector<size_t> order_;
  size_t next_ = 0;
};

}  // namespace

StrategyInfo exhaustive_strategy() {
  return {"exhaustive",
          "every valid configuration once",
          {{"order", "index", "index (the space's enumeration order) or shuffled (seeded)"}},
          [](const SearchSpace& space, uint64_t seed, const StrategyOptions& options) {
            return std::make_unique<ExhaustiveSearcher>(space, seed, options);
          }};
}

}  // namespace gemmtune
