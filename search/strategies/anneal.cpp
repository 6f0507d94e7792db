// SPDX-License-Identifier: Apache-2.0
// anneal: simulated annealing over neighbouring configurations (one parameter moved to an adjacent
// value; two parameters when no single move is left). Energy is log(time), so the temperature is
// a relative slow-down: at T=0.1 a move 10% slower is taken with probability 1/e.
#include <cmath>
#include <limits>
#include <unordered_map>

#include "search/strategies/strategies.hpp"

namespace gemmtune {

namespace {

class AnnealSearcher : public Searcher {
 public:
  AnnealSearcher(const SearchSpace& space, uint64_t seed, const StrategyOptions& options)
      : Searcher(space, seed),
        t0_(options.get_double("t0", 1e-6, 100)),
        cooling_(options.get_double("cooling", 0.5, 1.0)),
        patience_(size_t(options.get_int("restart", 1, 1000000))),
        temperature_(t0_) {}

  size_t max_batch(size_t) const override { return 2; }

 protected:
  std::optional<size_t> propose() override {
    if (current_) {
      if (auto next = pick(space_.neighbours(*current_))) return next;
      if (auto next = pick(space_.second_neighbours(*current_))) return next;
      // The neighbourhood is used up: continue from the best configuration, else start afresh.
      if (auto best = best_index(); best && best != current_) {
        move_to(*best);
        if (auto next = pick(space_.neighbours(*best))) return next;
        if (auto next = pick(space_.second_neighbours(*best))) return next;
      }
    }
    current_.reset();
    return random_unseen();
  }

  void learn(const Observation& o) override {
    const double y = o.ok ? std::log(o.time_ms) : std::numeric_limits<double>::infinity();
    energy_[o.index] = y;
    if (y < best_energy_) {
      best_energy_ = y;
      since_improvement_ = 0;
    } else {
      ++since_improvement_;
    }
    if (!current_ || !std::isfinite(current_energy_)) {
      move_to(o.index);
    } else {
      const double delta = y - current_energy_;
      if (delta <= 0 ||
          (std::isfinite(delta) && rng_.uniform() < std::exp(-delta / temperature_))) {
        move_to(o.index);
      }
      temperature_ *= cooling_;
    }
    if (since_improvement_ >= patience_) {
      // Stuck: reheat and restart from a random configuration.
      current_.reset();
      temperature_ = t0_;
      since_improvement_ = 0;
    }
  }

 private:
  std::optional<size_t> pick(const std::vector<size_t>& candidates) {
    std::vector<size_t> free;
    for (size_t i : candidates) {
      if (!seen(i)) free.push_back(i);
    }
    if (free.empty()) return std::nullopt;
    return free[rng_.below(free.size())];
  }

  void move_to(size_t index) {
    current_ = index;
    auto it = energy_.find(index);
    current_energy_ = it == energy_.end() ? std::numeric_limits<double>::infinity() : it->second;
  }

  double t0_, cooling_;
  size_t patience_;
  double temperature_;
  std::optional<size_t> current_;
  double current_energy_ = std::numeric_limits<double>::infinity();
  double best_energy_ = std::numeric_limits<double>::infinity();
  size_t since_improvement_ = 0;
  std::unordered_map<size_t, double> energy_;
};

}  // namespace

StrategyInfo anneal_strategy() {
  return {"anneal",
          "simulated annealing over neighbouring configurations",
          {{"t0", "0.1", "initial temperature, as a relative slow-down accepted with odds 1/e"},
           {"cooling", "0.97", "temperature factor applied after each result"},
           {"restart", "30", "results without a new best before a reheated random restart"}},
          [](const SearchSpace& space, uint64_t seed, const StrategyOptions& options) {
            return std::make_unique<AnnealSearcher>(space, seed, options);
          }};
}

}  // namespace gemmtune
