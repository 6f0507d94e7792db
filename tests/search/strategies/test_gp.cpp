// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cmath>

#include "search/strategies/gp.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_strategies_test_gp {

using namespace gemmtune;

TEST_CASE("Matern 5/2 correlation at known distances", "[gp]") {
  CHECK(GaussianProcess::matern52(0.0) == Approx(1.0));
  // (1 + √5 + 5/3) e^{-√5} = 4.9027347 × 0.1068779 = 0.5239941
  CHECK(GaussianProcess::matern52(1.0) == Approx(0.5239941088318203).epsilon(1e-12));
  // (1 + √5/2 + 5/12) e^{-√5/2} = 2.5347007 × 0.3269219 = 0.8286491
  CHECK(GaussianProcess::matern52(0.5) == Approx(0.8286491424181253).epsilon(1e-12));
}

TEST_CASE("GP posterior on two points matches the hand computation", "[gp]") {
  // Data: x = 0 → y = 1, x = 1 → y = 2; ℓ = 1, σ_f² = 1, noise negligible.
  //   K = [[1, c], [c, 1]] with c = k(1) = 0.5239941088; det = 1 - c² = 0.7254302
  //   α = K⁻¹ y = ((1 - 2c), (2 - c)) / det = (-0.0661514, 2.0346629)
  // At x* = 0.5: k* = (k(0.5), k(0.5)) = (0.8286491, 0.8286491)
  //   mean = k*ᵀα = 3 k(0.5) / (1 + c) = 1.6312054
  //   var  = 1 - k*ᵀK⁻¹k* = 1 - 2 k(0.5)² / (1 + c) = 0.0988687
  // At x* = 0.25: k* = (k(0.25), k(0.75)) = (0.9509599, 0.6756478)
  //   mean = 0.9509599 × -0.0661514 + 0.6756478 × 2.0346629 = 1.3118082
  //   var  = 1 - (a² - 2c·a·b + b²) / det = 0.0523173
  GaussianProcess gp;
  Eigen::MatrixXd x(2, 1);
  x << 0.0, 1.0;
  Eigen::VectorXd y(2);
  y << 1.0, 2.0;
  gp.set_data(x, y);
  GpHyperparameters h;
  h.log_length = Eigen::VectorXd::Zero(1);
  h.log_signal = 0;
  h.log_noise = std::log(1e-12);
  REQUIRE(gp.set_hyperparameters(h));

  Eigen::MatrixXd xs(3, 1);
  xs << 0.5, 0.25, 0.0;
  Eigen::VectorXd mean, var;
  gp.predict(xs, &mean, &var);
  CHECK(mean[0] == Approx(1.631205404829233).epsilon(1e-7));
  CHECK(var[0] == Approx(0.09886869345363003).epsilon(1e-6));
  CHECK(mean[1] == Approx(1.3118082149007861).epsilon(1e-7));
  CHECK(var[1] == Approx(0.05231727687810461).epsilon(1e-6));
  // At a training point the posterior interpolates, with (almost) no variance left.
  CHECK(mean[2] == Approx(1.0).epsilon(1e-6));
  CHECK(var[2] < 1e-8);
}

TEST_CASE("GP log marginal likelihood gradient matches finite differences", "[gp]") {
  Rng rng(3);
  const int n = 9, d = 3;
  Eigen::MatrixXd x(n, d);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) x(i, k) = rng.uniform();
    y[i] = std::sin(3 * x(i, 0)) + x(i, 1) * x(i, 2) + 0.05 * rng.normal();
  }
  GaussianProcess gp;
  gp.set_data(x, y);
  GpHyperparameters h;
  h.log_length = Eigen::Vector3d(std::log(0.4), std::log(0.9), std::log(0.25));
  h.log_signal = std::log(0.8);
  h.log_noise = std::log(0.01);
  REQUIRE(gp.set_hyperparameters(h));
  Eigen::VectorXd grad;
  gp.log_marginal_likelihood(&grad);
  const Eigen::VectorXd theta = h.pack();
  for (int i = 0; i < theta.size(); ++i) {
    const double eps = 1e-5;
    Eigen::VectorXd tp = theta, tm = theta;
    tp[i] += eps;
    tm[i] -= eps;
    gp.set_hyperparameters(GpHyperparameters::unpack(tp));
    const double fp = gp.log_marginal_likelihood(nullptr);
    gp.set_hyperparameters(GpHyperparameters::unpack(tm));
    const double fm = gp.log_marginal_likelihood(nullptr);
    INFO("parameter " << i);
    CHECK(grad[i] == Approx((fp - fm) / (2 * eps)).epsilon(1e-4).margin(1e-6));
  }
}

TEST_CASE("GP fit raises the objective and finds the irrelevant dimension", "[gp]") {
  Rng rng(11);
  const int n = 40;
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = rng.uniform();
    x(i, 1) = rng.uniform();
    y[i] = std::sin(6 * x(i, 0));  // the second input does not matter
  }
  const double m = y.mean();
  y = (y.array() - m).matrix();
  GaussianProcess gp;
  gp.set_data(x, y);
  Eigen::VectorXd start = gp.hyperparameters().pack();
  const double before =
      gp.log_marginal_likelihood(nullptr) + GaussianProcess::log_prior(start, nullptr);
  Rng fit_rng(5);
  const double after = gp.fit(fit_rng, GpFitOptions{2, 150});
  CHECK(after > before);
  const auto& h = gp.hyperparameters();
  CHECK(h.log_length[1] > h.log_length[0] + 1.0);
  // The fitted model predicts held-out points of the function well.
  Eigen::MatrixXd xs(3, 2);
  xs << 0.2, 0.5, 0.5, 0.1, 0.8, 0.9;
  Eigen::VectorXd mean;
  gp.predict(xs, &mean, nullptr);
  CHECK(mean[0] == Approx(std::sin(1.2) - m).margin(0.1));
  CHECK(mean[1] == Approx(std::sin(3.0) - m).margin(0.1));
  CHECK(mean[2] == Approx(std::sin(4.8) - m).margin(0.1));
}

}  // namespace gemmtune_tests::search_strategies_test_gp
