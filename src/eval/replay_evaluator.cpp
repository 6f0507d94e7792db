// SPDX-License-Identifier: Apache-2.0
#include "src/eval/replay_evaluator.hpp"

#include <chrono>
#include <thread>

#include "src/core/error.hpp"
#include "src/db/recording.hpp"

namespace gemmtune {

ReplayEvaluator::ReplayEvaluator(const std::string& path, double delay_ms)
    : ReplayEvaluator(read_recording(path), delay_ms) {}

ReplayEvaluator::ReplayEvaluator(const Journal& journal, double delay_ms)
    : path_(journal.path), delay_ms_(delay_ms) {
  if (!journal.headers.empty()) {
    header_ = journal.headers.front();
    header_line_ = journal.header_lines.empty() ? 0 : journal.header_lines.front();
  }
  if (!journal.entries.empty()) kernel_ = journal.entries.front().kernel;
  for (const auto& e : journal.entries) {
    // A recording is the space of one template; a result of another (which no search of this
    // evaluator could ask for) is not replayed.
    if (e.kernel != kernel_) continue;
    const std::string key = problem_key(e);
    auto [it, fresh] = tables_.try_emplace(key);
    if (fresh) problems_.push_back(e.problem);
    Table& t = it->second;
    // A configuration recorded twice (a resumed recording) keeps its first measurement.
    if (t.by_config.emplace(to_string(e.result.config), t.results.size()).second) {
      t.results.push_back(e.result);
      for (const auto& [name, value] : e.result.config) t.names.insert(name);
    }
  }
  if (tables_.empty()) throw invalid_file(journal.path, "records no evaluation to replay");
}

bool ReplayEvaluator::has_problem(const Problem& p) const {
  return tables_.count(problem_key(kernel_, p));
}

const ReplayEvaluator::Table& ReplayEvaluator::table(const Problem& p) const {
  auto it = tables_.find(problem_key(kernel_, p));
  if (it == tables_.end()) {
    std::string known;
    for (const auto& q : problems_) known += (known.empty() ? "" : ", ") + q.shape.to_string();
    throw invalid_argument("replay " + path_ + " has no recording of " + p.shape.to_string() + " " +
                           p.layout() + " fp" + to_string(p.precision) +
                           " (recorded shapes: " + known + ")");
  }
  return it->second;
}

Result ReplayEvaluator::evaluate(const Problem& problem, const Configuration& config) {
  table(problem);  // an unknown problem throws before any delay
  ++evaluations_;
  if (delay_ms_ > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t(delay_ms_ * 1000)));
  }
  return lookup(problem, config);
}

Result ReplayEvaluator::lookup(const Problem& problem, const Configuration& config) const {
  const Table& t = table(problem);
  auto it = t.by_config.find(to_string(config));
  if (it != t.by_config.end()) return t.results[it->second];
  Configuration recorded_form;
  for (const auto& [name, value] : config) {
    const auto d = defaults_.find(name);
    const bool newer_at_default =
        !t.names.count(name) && d != defaults_.end() && d->second == value;
    if (!newer_at_default) recorded_form[name] = value;
  }
  if (recorded_form.size() < config.size()) it = t.by_config.find(to_string(recorded_form));
  if (it == t.by_config.end()) {
    return Result::failure(config, Status::kInvalid, "not in the recorded space");
  }
  Result r = t.results[it->second];
  r.config = config;
  return r;
}

std::string ReplayEvaluator::description() const {
  return "replay of " + path_;
}

std::vector<Configuration> ReplayEvaluator::configurations(const Problem& problem) const {
  std::vector<Configuration> out;
  for (const auto& r : table(problem).results) out.push_back(r.config);
  return out;
}

std::optional<Result> ReplayEvaluator::best(const Problem& problem) const {
  std::optional<Result> best;
  for (const auto& r : table(problem).results) {
    if (r.ok() && r.time.median_ms > 0 && (!best || r.time.median_ms < best->time.median_ms)) {
      best = r;
    }
  }
  return best;
}

}  // namespace gemmtune
