// SPDX-License-Identifier: Apache-2.0
// The model that the bayes strategy scores candidates with: the posterior of a Gaussian process
// (gp_posterior.hpp) of standardized log(time) over a bounded training subset of the told results
// and a guess for each proposal in flight, the pool of candidate rows it is evaluated on, and,
// when failures are classified, a second process that estimates the chance that a row fails.
// The strategy decides when to rebuild, what to pool and what to propose; this class keeps the
// space's rows, the training points, the pool indices and the targets in step.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "search/strategies/gp.hpp"
#include "search/strategies/gp_posterior.hpp"
#include "search/strategies/rng.hpp"
#include "search/strategies/searcher.hpp"
#include "search/strategies/space.hpp"

namespace gemmtune {

// What standardizes log(time): the mean and spread of the successful results, the slowest
// (imputed to failures) and the best.
struct TimeScale {
  double mean = 0, sd = 1, worst = 0, best = 0;
  double of(double log_time) const { return (log_time - mean) / sd; }
  static TimeScale of_results(const std::vector<Observation>& history);
};

struct SurrogateOptions {
  int dims = 0;                    // model inputs: the parameters, then derived values when used
  std::string liar = "believer";   // the guess for a proposal in flight: min, mean, max, believer
  bool classify_failures = false;  // failures left out of the time model, classified apart
  GpFitOptions fit;
};

class SurrogateModel {
 public:
  // Most told results in the model right after a rebuild: the posterior costs O(n²) per
  // candidate, and past a few hundred points the model gains little that a subset centred on the
  // best results does not already give.
  static constexpr size_t kTrainCap = 256;

  SurrogateModel(const SearchSpace& space, SurrogateOptions options);

  // The model from scratch: a training subset of at most kTrainCap told results (the best half of
  // the cap, the rest drawn at random, so that the model stays sharp where the optimum is and
  // still sees the whole space), hyperparameters refitted on it when `refit`, then the proposals
  // in flight. The pool starts empty.
  void rebuild(const std::vector<Observation>& history, const std::vector<size_t>& pending,
               const TimeScale& scale, bool refit, Rng& rng);
  // Brings the model up to date with the results told and the proposals made since it was last
  // touched. Targets stay in the scale of the last rebuild, so that a result changes only its
  // own row's target (a guess replaced) and the posterior updates cheaply.
  void sync(const std::vector<Observation>& history, const std::vector<size_t>& pending,
            const TimeScale& now);

  bool ready() const { return ready_; }
  // Told results the hyperparameters were last fitted on, and those in the model now.
  size_t fitted_size() const { return fitted_size_; }
  size_t told_in_model() const { return told_in_model_; }
  // The scale of the targets, fixed at the last rebuild.
  const TimeScale& scale() const { return epoch_; }

  // The pool index of `row`, adding it to the pool when missing.
  int pool_index(size_t row);
  void add_to_pool(const std::vector<size_t>& rows);
  const std::vector<size_t>& pool_rows() const { return pool_rows_; }

  // Posterior mean and standard deviation of standardized log(time) at pool point j, and the
  // chance that it runs at all (1 without a classifier).
  double mean(int j) { return post_.mean(j); }
  double sd(int j) const;
  double valid_chance(int j);

 private:
  void fit_hyperparameters(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, Rng& rng);
  void fit_classifier(const std::vector<Observation>& history, bool refit, Rng& rng);
  void append_failure_label(const Observation& o);
  // Appends `rows` to the training points with `targets` (NaN: the believer's guess), together.
  void append_training(const std::vector<size_t>& rows, const std::vector<double>& targets);
  // Row `r` of `m` (column-major, so rows are strided) gets the encoding of space row `row`.
  void encode_row(size_t row, Eigen::MatrixXd& m, Eigen::Index r);

  const SearchSpace& space_;
  SurrogateOptions options_;
  GaussianProcess gp_;  // fits the hyperparameters
  size_t fitted_size_ = 0;
  // Training rows in the posterior's order (told results, then proposals in flight).
  GpPosterior post_;
  bool ready_ = false;
  std::vector<size_t> train_rows_;
  std::unordered_map<size_t, int> train_pos_;
  size_t told_in_model_ = 0;
  size_t synced_history_ = 0;  // history entries the model has taken in
  std::vector<size_t> pool_rows_;
  std::unordered_map<size_t, int> pool_pos_;
  TimeScale epoch_;
  double liar_value_ = 0;  // the guess for a proposal in flight (liar min, mean or max)
  // The failure classifier: a second process regressing 1 (failed) / 0 (valid) less the failure
  // rate, so that its mean estimates the chance that a configuration fails.
  GaussianProcess fail_gp_;
  GpPosterior fail_post_;
  bool classify_ = false, fail_fitted_ = false;
  double fail_rate_ = 0;
  std::vector<double> buffer_;
};

}  // namespace gemmtune
