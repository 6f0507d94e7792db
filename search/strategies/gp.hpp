// SPDX-License-Identifier: Apache-2.0
// A Gaussian process regressor on Eigen: Matérn 5/2 kernel with one length scale per input
// dimension, signal variance and noise variance, fitted by maximizing the log marginal likelihood
// (plus weak log-normal priors that keep the fit sane with few points).
#pragma once

#include <Eigen/Dense>

#include "search/strategies/rng.hpp"

namespace gemmtune {

struct GpHyperparameters {
  Eigen::VectorXd log_length;  // log ℓ_d, one per input dimension
  double log_signal = 0;       // log σ_f²
  double log_noise = -6.9;     // log σ_n²

  // Packed as [log ℓ_1..d, log σ_f², log σ_n²].
  Eigen::VectorXd pack() const;
  static GpHyperparameters unpack(const Eigen::VectorXd& theta);
};

// The Matérn 5/2 covariance of `h` between the rows of a and b (signal variance included, noise
// not).
Eigen::MatrixXd matern_covariance(const GpHyperparameters& h, const Eigen::MatrixXd& a,
                                  const Eigen::MatrixXd& b);

// Factorizes k + jitter·I, the jitter growing from 0 until the factorization succeeds (duplicate
// inputs with tiny noise make k singular); false when even 1% of the mean diagonal fails.
bool factorize_with_jitter(const Eigen::MatrixXd& k, Eigen::LLT<Eigen::MatrixXd>* llt);

struct GpFitOptions {
  int restarts = 1;     // random starting points besides the current hyperparameters
  int iterations = 60;  // gradient steps per start
};

class GaussianProcess {
 public:
  // Matérn 5/2 correlation at scaled distance r: (1 + √5 r + 5r²/3) exp(-√5 r).
  static double matern52(double r);

  // Training inputs (n × d) and targets (used as given: callers standardize them).
  void set_data(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  // Sets θ and factorizes the covariance; returns false when it is not positive definite even
  // with added jitter.
  bool set_hyperparameters(const GpHyperparameters& h);
  const GpHyperparameters& hyperparameters() const { return h_; }
  int dimensions() const { return int(x_.cols()); }
  int size() const { return int(x_.rows()); }

  // Posterior mean and variance of the latent function (noise excluded) at the rows of `xs`.
  void predict(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::VectorXd* variance) const;

  // log p(y | X, θ) for the current θ; when `gradient` is given, also d/dθ in packed order.
  double log_marginal_likelihood(Eigen::VectorXd* gradient) const;
  // The weak prior's log density and gradient (added to the likelihood by fit()).
  static double log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient);

  // Maximizes log p(y|X,θ) + log prior with Adam steps in log space, from the current θ and
  // `restarts` random starts; keeps the best. Returns the objective reached.
  double fit(Rng& rng, const GpFitOptions& options);

 private:
  bool factorize();

  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  GpHyperparameters h_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  Eigen::VectorXd alpha_;  // K⁻¹ y
  bool factorized_ = false;
};

}  // namespace gemmtune
