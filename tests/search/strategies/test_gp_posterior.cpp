// SPDX-License-Identifier: Apache-2.0
// The incremental posterior must give what a Gaussian process fitted from scratch on the same
// points gives, whatever the order of appends, target changes and pool additions.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "search/strategies/gp.hpp"
#include "search/strategies/gp_posterior.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::search_strategies_test_gp_posterior {

using namespace gemmtune;

namespace {

constexpr int kDims = 3;
constexpr double kTolerance = 1e-8;  // both sides compute in double from the same factors

Eigen::MatrixXd random_points(Rng& rng, int n) {
  Eigen::MatrixXd x(n, kDims);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < kDims; ++k) x(i, k) = rng.uniform();
  }
  return x;
}

double target(const Eigen::RowVectorXd& x) {
  return std::sin(4 * x[0]) + x[1] * x[2];
}

Eigen::VectorXd targets_of(const Eigen::MatrixXd& x) {
  Eigen::VectorXd y(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) y[i] = target(x.row(i));
  return y;
}

GpHyperparameters hyperparameters() {
  GpHyperparameters h;
  h.log_length = Eigen::VectorXd::Constant(kDims, std::log(0.4));
  h.log_signal = std::log(1.3);
  h.log_noise = std::log(1e-3);
  return h;
}

// Checks every pool point of `post` against a GP built from scratch on `x`, `y`.
void check_against_scratch(GpPosterior& post, const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                           const Eigen::MatrixXd& pool) {
  GaussianProcess gp;
  gp.set_data(x, y);
  REQUIRE(gp.set_hyperparameters(hyperparameters()));
  Eigen::VectorXd mean, var;
  gp.predict(pool, &mean, &var);
  REQUIRE(post.pool_size() == pool.rows());
  for (int j = 0; j < post.pool_size(); ++j) {
    CHECK(post.mean(j) == Approx(mean[j]).margin(kTolerance));
    CHECK(post.variance(j) == Approx(var[j]).margin(kTolerance));
  }
}

}  // namespace

TEST_CASE("the incremental GP posterior equals the posterior computed from scratch",
          "[gp][bayes]") {
  Rng rng(11);
  Eigen::MatrixXd x = random_points(rng, 12);
  Eigen::VectorXd y = targets_of(x);
  Eigen::MatrixXd pool = random_points(rng, 40);

  GpPosterior post;
  REQUIRE(post.reset(hyperparameters(), x.topRows(8), y.head(8)));
  post.add_to_pool(pool.topRows(25));
  CHECK(post.mean(0) == post.mean(0));  // means computed before the appends below
  // Four more training points, two of them with a guessed target replaced afterwards (a result
  // arriving for a proposal in flight), and more candidates pooled in between.
  for (int i = 8; i < 12; ++i) post.append(x.row(i), i % 2 ? 0.0 : y[i]);
  post.add_to_pool(pool.bottomRows(15));
  post.set_target(9, y[9]);
  post.set_target(11, y[11]);
  check_against_scratch(post, x, y, pool);

  // Changing an early target, then every target, keeps it exact.
  y[2] += 0.5;
  post.set_target(2, y[2]);
  check_against_scratch(post, x, y, pool);
  y *= 0.5;
  post.set_targets(y);
  check_against_scratch(post, x, y, pool);
}

TEST_CASE("a pool of thousands of candidates, updated in blocks, stays exact", "[gp][bayes]") {
  // Past 8,192 candidates an append updates blocks of the pool on several threads, and candidates
  // added by the hundred get their columns so too. 8,193 of them: a count that 2, 4 or 8 threads
  // do not divide into whole blocks (the last column once went without a thread).
  constexpr int kLargePool = 8193;
  Rng rng(12);
  Eigen::MatrixXd x = random_points(rng, 18);
  Eigen::VectorXd y = targets_of(x);
  const Eigen::MatrixXd pool = random_points(rng, kLargePool);
  GpPosterior post;
  REQUIRE(post.reset(hyperparameters(), x.topRows(6), y.head(6)));
  post.add_to_pool(pool);
  CHECK(post.mean(kLargePool - 1) == post.mean(kLargePool - 1));  // the means kept from here on
  for (int i = 6; i < 10; ++i) post.append(x.row(i), y[i]);
  check_against_scratch(post, x.topRows(10), y.head(10), pool);
  // Every target changed: the means are computed again over the whole pool, in blocks.
  y *= 0.5;
  post.set_targets(y.head(10));
  check_against_scratch(post, x.topRows(10), y.head(10), pool);

  // Results and guesses for proposals in flight appended together (V's new rows in one pass):
  // four results, then three guesses (NaN), each the mean at its point given every point before
  // it, the four results of the same block included.
  GaussianProcess gp;
  gp.set_data(x.topRows(15), y.head(15));
  REQUIRE(gp.set_hyperparameters(hyperparameters()));
  Eigen::VectorXd guess, var;
  gp.predict(x.middleRows(15, 1), &guess, &var);
  Eigen::VectorXd ys = y.segment(11, 7);
  ys.tail(3).setConstant(std::numeric_limits<double>::quiet_NaN());
  post.append(x.row(10), y[10]);
  post.append(x.middleRows(11, 7), ys);
  REQUIRE(post.size() == 18);
  CHECK(post.target(15) == Approx(guess[0]).margin(kTolerance));
  Eigen::VectorXd guessed = y;
  for (int i = 15; i < 18; ++i) guessed[i] = post.target(i);
  check_against_scratch(post, x, guessed, pool);
  // The results replace the guesses.
  for (int i = 15; i < 18; ++i) post.set_target(i, y[i]);
  check_against_scratch(post, x, y, pool);
}

TEST_CASE("candidates added a hundred or so at a time get every column", "[gp][bayes]") {
  // A hill climb's step pools tens to hundreds of candidates, their columns computed in blocks on
  // several threads from 128 on: counts one past a multiple of 64 for 2 to 8 threads each leave
  // a remainder that the blocks must cover too.
  Rng rng(14);
  Eigen::MatrixXd x = random_points(rng, 40);
  const Eigen::VectorXd y = targets_of(x);
  GpPosterior post;
  REQUIRE(post.reset(hyperparameters(), x, y));
  Eigen::MatrixXd pool(0, kDims);
  for (int threads = 2; threads <= 8; ++threads) {
    const Eigen::MatrixXd more = random_points(rng, threads * 64 + 1);
    post.add_to_pool(more);
    pool.conservativeResize(pool.rows() + more.rows(), kDims);
    pool.bottomRows(more.rows()) = more;
  }
  check_against_scratch(post, x, y, pool);
}

TEST_CASE("an incremental GP posterior without training points is the prior", "[gp][bayes]") {
  Rng rng(5);
  GpPosterior post;
  REQUIRE(post.reset(hyperparameters(), Eigen::MatrixXd(0, kDims), Eigen::VectorXd(0)));
  post.add_to_pool(random_points(rng, 3));
  for (int j = 0; j < 3; ++j) {
    CHECK(post.mean(j) == 0);
    CHECK(post.variance(j) == Approx(1.3));
  }
  // Appending the same point twice stays finite (a floor on the conditional variance).
  const Eigen::MatrixXd p = random_points(rng, 1);
  post.append(p.row(0), 1.0);
  post.append(p.row(0), 1.0);
  for (int j = 0; j < 3; ++j) CHECK(std::isfinite(post.mean(j)));
}

}  // namespace gemmtune_tests::search_strategies_test_gp_posterior
