// SPDX-License-Identifier: Apache-2.0
// Answers evaluations from a recorded measurement of a whole space (the journal of an exhaustive
// run, a Kernel Tuner cache file or T4 results: see read_recording) instead of a device: searchers
// can be tested and compared in seconds, reproducibly.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/db/journal.hpp"
#include "src/eval/evaluator.hpp"

namespace gemmtune {

class ReplayEvaluator : public Evaluator {
 public:
  // `delay_ms` is slept per evaluation, to imitate measuring time (tests of interruption).
  explicit ReplayEvaluator(const std::string& path, double delay_ms = 0);
  explicit ReplayEvaluator(const Journal& journal, double delay_ms = 0);

  // The recorded result; a configuration that was not recorded is reported kInvalid. A problem that
  // was not recorded is an Error (checked before a search starts, see has_problem()).
  Result evaluate(const Problem& problem, const Configuration& config) override;
  std::string description() const override;
  // The recorded answer, without delay or counting: safe to call from several threads at once.
  Result lookup(const Problem& problem, const Configuration& config) const;

  // The run's first header: device, kernel, space, settings of the recording (may be empty).
  const nlohmann::json& header() const { return header_; }
  // The header as a reader whose errors name the journal, the line and the field.
  JsonReader header_reader() const { return JsonReader(header_, path_, header_line_); }
  const std::string& path() const { return path_; }
  // The template the recording measured (that of its first result): the one this evaluator
  // answers for.
  const std::string& kernel() const { return kernel_; }
  // Recorded problems, in order of first appearance.
  const std::vector<Problem>& problems() const { return problems_; }
  bool has_problem(const Problem& p) const;
  // Every configuration recorded for `problem`, in recording order.
  std::vector<Configuration> configurations(const Problem& problem) const;
  // The fastest valid recorded result for `problem`.
  std::optional<Result> best(const Problem& problem) const;
  size_t evaluations() const { return evaluations_; }

  // The template's parameter defaults. A recording made before a parameter existed lacks it, and
  // its configurations ran with that parameter's default: with the defaults known, a query that
  // sets such a parameter to its default finds them (answered under the query's configuration).
  void set_defaults(const Configuration& defaults) { defaults_ = defaults; }

 private:
  struct Table {
    std::vector<Result> results;  // recording order
    std::unordered_map<std::string, size_t> by_config;
    std::set<std::string> names;  // parameter names of the recorded configurations
  };
  const Table& table(const Problem& p) const;

  std::string path_;
  double delay_ms_ = 0;
  nlohmann::json header_;
  size_t header_line_ = 0;
  std::string kernel_;
  std::vector<Problem> problems_;
  std::map<std::string, Table> tables_;
  size_t evaluations_ = 0;
  Configuration defaults_;
};

}  // namespace gemmtune
