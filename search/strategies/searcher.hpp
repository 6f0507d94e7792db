// SPDX-License-Identifier: Apache-2.0
// The ask/tell interface of search strategies. A searcher proposes rows of a SearchSpace (never one
// already proposed or told) and learns from each result. Results may arrive for rows it never
// proposed (answers taken from a journal when resuming), and several proposals may be in flight at
// once (compilation runs ahead of timing).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "search/strategies/rng.hpp"
#include "search/strategies/space.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

// What a searcher learns from one evaluation.
struct Observation {
  size_t index = 0;
  bool ok = false;
  double time_ms = 0;  // when ok
  Status status = Status::kOk;
};

// The time used to rank results: the median, else a time derived from the rate.
double result_time_ms(const Result& r, double flops);

// One documented option of a strategy ("bayes.acquisition").
struct OptionSpec {
  std::string name;           // without the strategy prefix
  std::string default_value;  // as text
  std::string help;
};

// Options given to one strategy; reading an option that the strategy did not declare is a bug,
// giving one it does not declare is the user's error (checked by the registry).
class StrategyOptions {
 public:
  StrategyOptions() = default;
  StrategyOptions(std::string strategy, std::vector<OptionSpec> specs,
                  std::map<std::string, std::string> values);
  std::string get_string(const std::string& name, const std::vector<std::string>& choices) const;
  int64_t get_int(const std::string& name, int64_t min, int64_t max) const;
  // An integer, or nullopt when the option's value is `word` (such as "auto").
  std::optional<int64_t> get_int_or(const std::string& name, const std::string& word, int64_t min,
                                    int64_t max) const;
  double get_double(const std::string& name, double min, double max) const;

 private:
  const std::string& raw(const std::string& name) const;
  template <typename T, typename Parse>
  T get_number(const std::string& name, T min, T max, const char* what, Parse parse) const;
  std::string strategy_;
  std::vector<OptionSpec> specs_;
  std::map<std::string, std::string> values_;
};

class Searcher {
 public:
  Searcher(const SearchSpace& space, uint64_t seed);
  virtual ~Searcher() = default;

  // Up to `count` new rows to evaluate; fewer (possibly none) when the strategy has nothing left.
  std::vector<size_t> ask(size_t count);
  // Marks row `index` as in flight although the strategy did not propose it (a warm start measures
  // the best rows of related problems first); false when it is already seen.
  bool claim(size_t index);
  // The result of evaluating row `index` (proposed or not).
  void tell(size_t index, const Result& result, double flops);
  void tell(const Observation& observation);

  // How many proposals may be in flight at once now, given `pace`: how many keep the devices busy
  // at the build and measuring times seen so far. Model-based strategies lose quality when they
  // propose far ahead of their results, so they take no more than the pace asks; asked again
  // before each proposal.
  virtual size_t max_batch(size_t pace) const { return SIZE_MAX; }

  const SearchSpace& space() const { return space_; }
  const std::vector<Observation>& history() const { return history_; }
  bool seen(size_t index) const { return state_[index] != kFree; }
  bool pending(size_t index) const { return state_[index] == kPending; }
  size_t pending_count() const { return pending_list_.size(); }
  const std::vector<size_t>& pending_rows() const { return pending_list_; }
  size_t unseen_count() const { return space_.size() - seen_count_; }
  std::optional<size_t> best_index() const { return best_; }

 protected:
  // Strategy hooks: propose one row that is not seen() (nullopt when done), and learn from a
  // result. A batch is proposed one row at a time; rows proposed earlier are pending().
  virtual std::optional<size_t> propose() = 0;
  virtual void learn(const Observation& observation) {}
  // A uniformly drawn unseen row, or nullopt when every row is seen.
  std::optional<size_t> random_unseen();

  const SearchSpace& space_;
  Rng rng_;

 private:
  enum : uint8_t { kFree, kPending, kDone };
  std::vector<uint8_t> state_;
  std::vector<Observation> history_;
  std::vector<size_t> pending_list_;
  size_t seen_count_ = 0;
  std::optional<size_t> best_;
  double best_time_ = 0;
};

// When to stop: the first limit reached (zero means no limit).
struct StopCondition {
  int64_t max_evals = 0;
  double time_budget_s = 0;
  double space_fraction = 0;  // of the space's size

  // The number of evaluations allowed for a space of `space_size` rows.
  size_t eval_limit(size_t space_size) const;
  // Why the search must stop now, or nullopt.
  std::optional<std::string> reached(size_t evaluations, double elapsed_s, size_t space_size) const;
};

}  // namespace gemmtune
