// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/gp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gemmtune {

namespace {

const double kSqrt5 = std::sqrt(5.0);
const double kLog2Pi = std::log(2 * M_PI);

// Bounds of θ (log space). Inputs lie in [0,1], targets are standardized.
const double kMinLogLength = std::log(0.02), kMaxLogLength = std::log(50.0);
const double kMinLogSignal = std::log(0.05), kMaxLogSignal = std::log(20.0);
const double kMinLogNoise = std::log(1e-6), kMaxLogNoise = std::log(1.0);

// Weak priors: length scales around 0.5 of the unit range, unit signal, small noise.
const double kPriorLength = std::log(0.5), kPriorLengthSd = 1.5;
const double kPriorSignal = 0.0, kPriorSignalSd = 1.5;
const double kPriorNoise = std::log(1e-3), kPriorNoiseSd = 3.0;

void clamp_theta(Eigen::VectorXd& t) {
  const int d = int(t.size()) - 2;
  for (int i = 0; i < d; ++i) t[i] = std::clamp(t[i], kMinLogLength, kMaxLogLength);
  t[d] = std::clamp(t[d], kMinLogSignal, kMaxLogSignal);
  t[d + 1] = std::clamp(t[d + 1], kMinLogNoise, kMaxLogNoise);
}

// Squared distances between the rows of a and b.
Eigen::MatrixXd squared_distances(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  Eigen::MatrixXd d = -2.0 * a * b.transpose();
  d.colwise() += a.rowwise().squaredNorm();
  d.rowwise() += b.rowwise().squaredNorm().transpose();
  return d.cwiseMax(0.0);
}

}  // namespace

Eigen::VectorXd GpHyperparameters::pack() const {
  Eigen::VectorXd t(log_length.size() + 2);
  t.head(log_length.size()) = log_length;
  t[log_length.size()] = log_signal;
  t[log_length.size() + 1] = log_noise;
  return t;
}

GpHyperparameters GpHyperparameters::unpack(const Eigen::VectorXd& theta) {
  GpHyperparameters h;
  const int d = int(theta.size()) - 2;
  h.log_length = theta.head(d);
  h.log_signal = theta[d];
  h.log_noise = theta[d + 1];
  return h;
}

double GaussianProcess::matern52(double r) {
  return (1 + kSqrt5 * r + 5.0 / 3.0 * r * r) * std::exp(-kSqrt5 * r);
}

void GaussianProcess::set_data(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  x_ = x;
  y_ = y;
  if (h_.log_length.size() != x.cols()) {
    h_.log_length = Eigen::VectorXd::Constant(x.cols(), kPriorLength);
  }
  factorized_ = false;
  factorize();
}

bool GaussianProcess::set_hyperparameters(const GpHyperparameters& h) {
  h_ = h;
  factorized_ = false;
  return factorize();
}

Eigen::MatrixXd matern_covariance(const GpHyperparameters& h, const Eigen::MatrixXd& a,
                                  const Eigen::MatrixXd& b) {
  const Eigen::VectorXd inv_len = (-h.log_length.array()).exp().matrix();
  const Eigen::MatrixXd as = a * inv_len.asDiagonal();
  const Eigen::MatrixXd bs = b * inv_len.asDiagonal();
  const double signal = std::exp(h.log_signal);
  // matern52 over whole arrays: Eigen's vectorized exp instead of one libm call per entry (most of
  // the cost of a proposal's new candidates was here).
  const Eigen::ArrayXXd r = squared_distances(as, bs).array().sqrt();
  return (signal * (1 + kSqrt5 * r + 5.0 / 3.0 * r.square()) * (-kSqrt5 * r).exp()).matrix();
}

bool factorize_with_jitter(const Eigen::MatrixXd& k, Eigen::LLT<Eigen::MatrixXd>* llt) {
  const double scale = k.diagonal().mean();
  for (double jitter = 0; jitter <= 1e-2 * scale;
       jitter = jitter == 0 ? 1e-10 * scale : jitter * 10) {
    Eigen::MatrixXd kj = k;
    kj.diagonal().array() += jitter;
    llt->compute(kj);
    if (llt->info() == Eigen::Success) return true;
  }
  return false;
}

bool GaussianProcess::factorize() {
  factorized_ = false;
  if (x_.rows() == 0) return false;
  Eigen::MatrixXd k = matern_covariance(h_, x_, x_);
  k.diagonal().array() += std::exp(h_.log_noise);
  if (!factorize_with_jitter(k, &llt_)) return false;
  alpha_ = llt_.solve(y_);
  factorized_ = true;
  return true;
}

void GaussianProcess::predict(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean,
                              Eigen::VectorXd* variance) const {
  const int m = int(xs.rows());
  const double signal = std::exp(h_.log_signal);
  if (!factorized_) {
    if (mean) *mean = Eigen::VectorXd::Zero(m);
    if (variance) *variance = Eigen::VectorXd::Constant(m, signal);
    return;
  }
  const Eigen::MatrixXd ks = matern_covariance(h_, xs, x_);  // m × n
  if (mean) *mean = ks * alpha_;
  if (variance) {
    const Eigen::MatrixXd v = llt_.matrixL().solve(ks.transpose());  // n × m
    *variance = (signal - v.colwise().squaredNorm().transpose().array()).cwiseMax(1e-12).matrix();
  }
}

double GaussianProcess::log_marginal_likelihood(Eigen::VectorXd* gradient) const {
  const int n = int(x_.rows()), d = int(x_.cols());
  if (!factorized_) {
    if (gradient) *gradient = Eigen::VectorXd::Zero(d + 2);
    return -std::numeric_limits<double>::infinity();
  }
  const auto l = llt_.matrixL();
  double log_det_half = 0;
  const Eigen::MatrixXd& lm = llt_.matrixLLT();
  for (int i = 0; i < n; ++i) log_det_half += std::log(lm(i, i));
  const double value = -0.5 * y_.dot(alpha_) - log_det_half - 0.5 * n * kLog2Pi;
  (void)l;
  if (!gradient) return value;

  // d/dθ log p = ½ tr(W ∂K/∂θ) with W = ααᵀ - K⁻¹.
  const Eigen::MatrixXd k_inv = llt_.solve(Eigen::MatrixXd::Identity(n, n));
  const Eigen::MatrixXd w = alpha_ * alpha_.transpose() - k_inv;
  const Eigen::VectorXd inv_len = (-h_.log_length.array()).exp().matrix();
  const Eigen::MatrixXd xs = x_ * inv_len.asDiagonal();
  const Eigen::MatrixXd r = squared_distances(xs, xs).cwiseSqrt();
  const double signal = std::exp(h_.log_signal);
  // ∂k/∂log ℓ_d = σ² (5/3)(1 + √5 r) exp(-√5 r) · Δ_d² / ℓ_d²; the factor before Δ is shared.
  const Eigen::MatrixXd shared = r.unaryExpr([signal](double rr) {
    return signal * 5.0 / 3.0 * (1 + kSqrt5 * rr) * std::exp(-kSqrt5 * rr);
  });
  const Eigen::MatrixXd b = shared.cwiseProduct(w);
  gradient->resize(d + 2);
  for (int k = 0; k < d; ++k) {
    const Eigen::VectorXd col = xs.col(k);
    // Σ_ij B_ij (x_ik - x_jk)² = Σ_ij B_ij (x_ik² + x_jk² - 2 x_ik x_jk), B symmetric.
    const Eigen::VectorXd sq = col.array().square().matrix();
    const double s = 2 * sq.dot(b.rowwise().sum()) - 2 * col.dot(b * col);
    (*gradient)[k] = 0.5 * s;
  }
  const Eigen::MatrixXd kf = r.unaryExpr([signal](double rr) { return signal * matern52(rr); });
  (*gradient)[d] = 0.5 * kf.cwiseProduct(w).sum();
  (*gradient)[d + 1] = 0.5 * std::exp(h_.log_noise) * w.trace();
  return value;
}

double GaussianProcess::log_prior(const Eigen::VectorXd& theta, Eigen::VectorXd* gradient) {
  const int d = int(theta.size()) - 2;
  auto term = [](double x, double mu, double sd, double* g) {
    const double z = (x - mu) / sd;
    *g = -z / sd;
    return -0.5 * z * z;
  };
  double value = 0, g = 0;
  if (gradient) gradient->resize(theta.size());
  for (int i = 0; i < d; ++i) {
    value += term(theta[i], kPriorLength, kPriorLengthSd, &g);
    if (gradient) (*gradient)[i] = g;
  }
  value += term(theta[d], kPriorSignal, kPriorSignalSd, &g);
  if (gradient) (*gradient)[d] = g;
  value += term(theta[d + 1], kPriorNoise, kPriorNoiseSd, &g);
  if (gradient) (*gradient)[d + 1] = g;
  return value;
}

double GaussianProcess::fit(Rng& rng, const GpFitOptions& options) {
  const int d = int(x_.cols());
  if (x_.rows() == 0) return 0;
  auto objective = [&](const Eigen::VectorXd& theta, Eigen::VectorXd* grad) {
    h_ = GpHyperparameters::unpack(theta);
    if (!factorize()) return -std::numeric_limits<double>::infinity();
    Eigen::VectorXd gl, gp;
    const double v =
        log_marginal_likelihood(grad ? &gl : nullptr) + log_prior(theta, grad ? &gp : nullptr);
    if (grad) *grad = gl + gp;
    return v;
  };

  Eigen::VectorXd best_theta = h_.pack();
  clamp_theta(best_theta);
  double best_value = objective(best_theta, nullptr);
  for (int start = 0; start <= options.restarts; ++start) {
    Eigen::VectorXd theta = best_theta;
    if (start > 0) {
      for (int i = 0; i < d; ++i) theta[i] = kPriorLength + kPriorLengthSd * 0.7 * rng.normal();
      theta[d] = kPriorSignal + 0.5 * rng.normal();
      theta[d + 1] = std::log(1e-3) + 2 * rng.normal();
      clamp_theta(theta);
    }
    // Adam ascent: scale-free steps suit parameters of very different sensitivity.
    const double rate = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
    Eigen::VectorXd m = Eigen::VectorXd::Zero(d + 2), v = Eigen::VectorXd::Zero(d + 2), grad;
    for (int it = 1; it <= options.iterations; ++it) {
      const double value = objective(theta, &grad);
      if (!std::isfinite(value)) break;
      if (value > best_value) {
        best_value = value;
        best_theta = theta;
      }
      m = b1 * m + (1 - b1) * grad;
      v = b2 * v + (1 - b2) * grad.cwiseAbs2();
      const double c1 = 1 - std::pow(b1, it), c2 = 1 - std::pow(b2, it);
      theta += rate * ((m / c1).array() / ((v / c2).array().sqrt() + eps)).matrix();
      clamp_theta(theta);
    }
    const double final_value = objective(theta, nullptr);
    if (final_value > best_value) {
      best_value = final_value;
      best_theta = theta;
    }
  }
  h_ = GpHyperparameters::unpack(best_theta);
  factorize();
  return best_value;
}

}  // namespace gemmtune
