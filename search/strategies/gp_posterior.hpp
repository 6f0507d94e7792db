// SPDX-License-Identifier: Apache-2.0
// The posterior of a Gaussian process with fixed hyperparameters over a pool of candidate points,
// kept up to date incrementally. A search proposes one point at a time and learns one result at a
// time; recomputing the posterior over thousands of candidates for each (O(n²·m) for n training
// points and m candidates) made proposals slower than the GPU measures kernels. Here, with
// V = L⁻¹·K(train, pool) kept beside the Cholesky factor L:
//   appending a training point extends L and V by one row:        O(n² + n·m)
//   a result replacing the guess at training point i:            O((n-i)² + (n-i)·m)
//   changing every target:                                        O(n²), the means O(n·m) later
//   adding a candidate to the pool adds a column to V:            O(n²)
// so only a change of hyperparameters or of the training subset pays the full price. Points
// appended together read V once: O(k·n² + k·n·m) for k of them.
#pragma once

#include <Eigen/Dense>

#include "search/strategies/gp.hpp"

namespace gemmtune {

class GpPosterior {
 public:
  // Restarts from training inputs `x` (n × d) and targets `y` under `h`, with an empty pool.
  // False when the covariance cannot be factorized even with jitter (the posterior is then empty).
  bool reset(const GpHyperparameters& h, const Eigen::MatrixXd& x, const Eigen::VectorXd& y);

  // Adds one training point (a row of d inputs) with target `y`.
  void append(const Eigen::RowVectorXd& x, double y);
  // Adds the rows of `xs` as training points, in order, with targets `ys`; a NaN target is the
  // posterior mean of the latent function at that point given every point before it (the kriging
  // believer's guess, which leaves the means where they were). The same posterior as appending
  // them one at a time, but V's new rows come from one pass over V instead of one pass each.
  void append(const Eigen::MatrixXd& xs, const Eigen::VectorXd& ys);
  // The target training point i was given (a guess resolved by append included).
  double target(int i) const { return y_[i]; }
  // Replaces the target of training point `i` (O((n-i)² + (n-i)·m): cheap for recent points), or
  // of every training point.
  void set_target(int i, double y);
  void set_targets(const Eigen::VectorXd& y);
  int size() const { return n_; }
  const Eigen::VectorXd& targets() const { return y_; }

  // Adds the rows of `xs` to the pool; the first new pool index is the old pool_size().
  void add_to_pool(const Eigen::MatrixXd& xs);
  int pool_size() const { return m_; }
  // Posterior mean and variance of the latent function (noise excluded) at pool point j.
  double mean(int j);
  double variance(int j) const;

 private:
  void reserve(int rows, int cols);
  // β = L⁻¹·y, from which the means follow as Vᵀβ.
  void update_beta();

  GpHyperparameters h_;
  double signal_ = 1, noise_ = 0, jitter_floor_ = 0;
  int n_ = 0, m_ = 0;
  Eigen::MatrixXd x_;      // training inputs (first n_ rows used)
  Eigen::VectorXd y_;      // training targets (n_)
  Eigen::MatrixXd l_;      // lower Cholesky factor of K + noise (top-left n_ × n_ used)
  Eigen::MatrixXd v_;      // L⁻¹·K(train, pool) (top-left n_ × m_ used)
  Eigen::MatrixXd pool_;   // pool inputs (first m_ rows used)
  Eigen::VectorXd v_sq_;   // column-wise ‖V_j‖², so that variance_j = signal - v_sq_j
  Eigen::VectorXd beta_;   // L⁻¹·y (n_)
  Eigen::VectorXd means_;  // Vᵀβ (m_), valid when !means_stale_
  bool means_stale_ = true;
};

}  // namespace gemmtune
