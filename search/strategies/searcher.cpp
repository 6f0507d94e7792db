// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/searcher.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "src/core/error.hpp"

namespace gemmtune {

double result_time_ms(const Result& r, double flops) {
  if (r.time.median_ms > 0) return r.time.median_ms;
  if (r.gflops > 0 && flops > 0) return flops / (r.gflops * 1e6);
  return 0;
}

// ---- StrategyOptions ----

StrategyOptions::StrategyOptions(std::string strategy, std::vector<OptionSpec> specs,
                                 std::map<std::string, std::string> values)
    : strategy_(std::move(strategy)), specs_(std::move(specs)), values_(std::move(values)) {
  for (const auto& [name, value] : values_) {
    const bool known = std::any_of(specs_.begin(), specs_.end(),
                                   [&](const OptionSpec& s) { return s.name == name; });
    if (!known) {
      std::string list;
      for (const auto& s : specs_) list += (list.empty() ? "" : ", ") + strategy_ + "." + s.name;
      throw invalid_argument("strategy " + strategy_ + " has no option '" + name +
                             "' (options: " + (list.empty() ? "none" : list) + ")");
    }
  }
}

const std::string& StrategyOptions::raw(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  for (const auto& s : specs_) {
    if (s.name == name) return s.default_value;
  }
  throw Error(ErrorCode::kInternal, "strategy " + strategy_ + " reads undeclared option " + name);
}

std::string StrategyOptions::get_string(const std::string& name,
                                        const std::vector<std::string>& choices) const {
  const std::string& v = raw(name);
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    throw invalid_argument("option " + strategy_ + "." + name + "=" + v + ": expected one of " +
                           list);
  }
  return v;
}

namespace {

// The whole of `v` as a number of type T (std::stoll or std::stod), or nullopt.
template <typename T, typename Parse>
std::optional<T> parse_whole(const std::string& v, Parse parse) {
  size_t used = 0;
  T x{};
  try {
    x = parse(v, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (v.empty() || used != v.size()) return std::nullopt;
  return x;
}

}  // namespace

template <typename T, typename Parse>
T StrategyOptions::get_number(const std::string& name, T min, T max, const char* what,
                              Parse parse) const {
  const std::string& v = raw(name);
  const std::optional<T> x = parse_whole<T>(v, parse);
  if (!x || !(*x >= min && *x <= max)) {
    throw invalid_argument("option " + strategy_ + "." + name + "=" + v + ": expected " + what +
                           " from " + std::to_string(min) + " to " + std::to_string(max));
  }
  return *x;
}

int64_t StrategyOptions::get_int(const std::string& name, int64_t min, int64_t max) const {
  return get_number<int64_t>(name, min, max, "an integer", [](const std::string& v, size_t* used) {
    return std::stoll(v, used);
  });
}

std::optional<int64_t> StrategyOptions::get_int_or(const std::string& name, const std::string& word,
                                                   int64_t min, int64_t max) const {
  if (raw(name) == word) return std::nullopt;
  return get_int(name, min, max);
}

double StrategyOptions::get_double(const std::string& name, double min, double max) const {
  return get_number<double>(name, min, max, "a number",
                            [](const std::string& v, size_t* used) { return std::stod(v, used); });
}

// ---- Searcher ----

Searcher::Searcher(const SearchSpace& space, uint64_t seed)
    : space_(space), rng_(seed), state_(space.size(), kFree) {}

std::vector<size_t> Searcher::ask(size_t count) {
  if (count == 0 || seen_count_ == space_.size()) return {};
  std::vector<size_t> out;
  while (out.size() < count && seen_count_ < space_.size()) {
    const auto i = propose();
    if (!i) break;
    if (*i >= space_.size() || state_[*i] != kFree) {
      throw Error(ErrorCode::kInternal, "a searcher proposed row " + std::to_string(*i) +
                                            " that is out of range or already seen");
    }
    state_[*i] = kPending;
    pending_list_.push_back(*i);
    ++seen_count_;
    out.push_back(*i);
  }
  return out;
}

bool Searcher::claim(size_t index) {
  if (index >= space_.size() || state_[index] != kFree) return false;
  state_[index] = kPending;
  pending_list_.push_back(index);
  ++seen_count_;
  return true;
}

void Searcher::tell(size_t index, const Result& result, double flops) {
  Observation o;
  o.index = index;
  o.status = result.status;
  o.time_ms = result_time_ms(result, flops);
  o.ok = result.ok() && o.time_ms > 0;
  tell(o);
}

void Searcher::tell(const Observation& observation) {
  const size_t i = observation.index;
  if (i >= space_.size()) {
    throw Error(ErrorCode::kInternal, "result for row " + std::to_string(i) + " out of range");
  }
  if (state_[i] == kDone) return;  // answered twice: keep the first
  if (state_[i] == kPending) {
    pending_list_.erase(std::find(pending_list_.begin(), pending_list_.end(), i));
  } else {
    ++seen_count_;
  }
  state_[i] = kDone;
  history_.push_back(observation);
  if (observation.ok && (!best_ || observation.time_ms < best_time_)) {
    best_ = i;
    best_time_ = observation.time_ms;
  }
  learn(observation);
}

std::optional<size_t> Searcher::random_unseen() {
  const size_t free = space_.size() - seen_count_;
  if (free == 0) return std::nullopt;
  // Rejection sampling while the space is mostly free; a scan when few rows are left.
  if (free * 4 >= space_.size()) {
    while (true) {
      const size_t i = rng_.below(space_.size());
      if (state_[i] == kFree) return i;
    }
  }
  size_t k = rng_.below(free);
  for (size_t i = 0; i < space_.size(); ++i) {
    if (state_[i] == kFree && k-- == 0) return i;
  }
  return std::nullopt;
}

// ---- StopCondition ----

size_t StopCondition::eval_limit(size_t space_size) const {
  size_t limit = space_size;
  if (max_evals > 0) limit = std::min(limit, size_t(max_evals));
  if (space_fraction > 0) {
    limit = std::min(limit, std::max<size_t>(1, size_t(std::ceil(space_fraction * space_size))));
  }
  return limit;
}

std::optional<std::string> StopCondition::reached(size_t evaluations, double elapsed_s,
                                                  size_t space_size) const {
  if (evaluations >= space_size) return std::string("the whole space was evaluated");
  if (max_evals > 0 && evaluations >= size_t(max_evals)) {
    return "reached " + std::to_string(max_evals) + " evaluations";
  }
  if (space_fraction > 0 && evaluations >= eval_limit(space_size)) {
    return "evaluated the requested fraction of the space";
  }
  if (time_budget_s > 0 && elapsed_s >= time_budget_s) return std::string("time budget spent");
  return std::nullopt;
}

}  // namespace gemmtune
