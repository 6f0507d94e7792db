// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/gp_posterior.hpp"

#include <algorithm>
#include <cmath>
#include <system_error>
#include <thread>
#include <vector>

namespace gemmtune {

namespace {

// Storage grows by this factor when full, so that appending stays amortized O(1) copies.
constexpr double kGrowth = 1.5;
// Smallest conditional variance of an appended point, relative to the signal variance: a point
// (almost) equal to one already in the training set would otherwise divide by zero.
constexpr double kRelativeJitterFloor = 1e-10;

int grown(int needed, int have) {
  return needed <= have ? have : std::max(needed, int(have * kGrowth) + 8);
}

// A pool this large is updated by several threads, each a block of its columns (every column on
// its own: the same arithmetic whichever thread does it). An append reads all of V, n x m values:
// tens of megabytes with tens of thousands of candidates, most of a proposal's time.
constexpr int kParallelColumns = 8192;
// Candidates added at once from which their columns of V (a triangular solve each, O(n^2)) are
// computed in blocks on several threads: a round of the hill climbs' steps adds tens to hundreds,
// and on a host of several GPUs the strategy's pace is what the devices wait for.
constexpr int kParallelNewColumns = 64;
// Threads at most: a host with GPUs to keep busy has the cores (its compile workers yield to them).
constexpr unsigned kMaxThreads = 8;
constexpr int kColumnAlignment = 64;

// Calls f(first, end) over [0, m) in blocks, on up to kMaxThreads threads where m is at least
// `parallel_from`.
template <typename F>
void for_column_blocks(int m, int parallel_from, const F& f) {
  const unsigned threads =
      m < parallel_from ? 1
                        : std::min(kMaxThreads, std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    f(0, m);
    return;
  }
  // Each block rounded up: the blocks together must cover every column.
  const int share = (m + int(threads) - 1) / int(threads);
  const int per = (share + kColumnAlignment - 1) / kColumnAlignment * kColumnAlignment;
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t) {
    const int first = int(t) * per, end = std::min(m, first + per);
    if (first >= end) continue;
    try {
      helpers.emplace_back([&f, first, end] { f(first, end); });
    } catch (const std::system_error&) {
      f(first, end);  // no thread to be had: this block on the caller's
    }
  }
  f(0, std::min(m, per));
  for (auto& h : helpers) h.join();
}

}  // namespace

void GpPosterior::reserve(int rows, int cols) {
  const int r = grown(rows, int(l_.rows()));
  const int c = grown(cols, int(v_.cols()));
  if (r != l_.rows()) {
    l_.conservativeResize(r, r);
    x_.conservativeResize(r, x_.cols());
    y_.conservativeResize(r);
    beta_.conservativeResize(r);
  }
  if (r != v_.rows() || c != v_.cols()) v_.conservativeResize(r, c);
  if (c != pool_.rows()) {
    pool_.conservativeResize(c, pool_.cols());
    v_sq_.conservativeResize(c);
    means_.conservativeResize(c);
  }
}

bool GpPosterior::reset(const GpHyperparameters& h, const Eigen::MatrixXd& x,
                        const Eigen::VectorXd& y) {
  h_ = h;
  signal_ = std::exp(h.log_signal);
  noise_ = std::exp(h.log_noise);
  jitter_floor_ = kRelativeJitterFloor * signal_;
  n_ = 0;
  m_ = 0;
  const int d = int(x.cols());
  x_.resize(0, d);
  pool_.resize(0, d);
  l_.resize(0, 0);
  v_.resize(0, 0);
  y_.resize(0);
  beta_.resize(0);
  v_sq_.resize(0);
  means_.resize(0);
  means_stale_ = true;
  if (x.rows() == 0) return true;

  Eigen::MatrixXd k = matern_covariance(h, x, x);
  k.diagonal().array() += noise_;
  Eigen::LLT<Eigen::MatrixXd> llt;
  if (!factorize_with_jitter(k, &llt)) return false;
  const int n = int(x.rows());
  reserve(n, 0);
  n_ = n;
  x_.topRows(n) = x;
  y_.head(n) = y;
  l_.topLeftCorner(n, n) = llt.matrixL();
  update_beta();
  return true;
}

void GpPosterior::update_beta() {
  beta_.head(n_) = l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solve(y_.head(n_));
  means_stale_ = true;
}

void GpPosterior::append(const Eigen::RowVectorXd& x, double y) {
  append(Eigen::MatrixXd(x), Eigen::VectorXd::Constant(1, y));
}

void GpPosterior::append(const Eigen::MatrixXd& xs, const Eigen::VectorXd& ys) {
  const int k = int(xs.rows()), first = n_;
  if (k == 0) return;
  reserve(n_ + k, m_);
  // The new rows of L, x, y and β, one point after another (each row of L solves against the
  // rows before it, the new ones included).
  for (int j = 0; j < k; ++j) {
    const Eigen::RowVectorXd x = xs.row(j);
    const Eigen::VectorXd kv = matern_covariance(h_, x_.topRows(n_), x).col(0);
    const Eigen::VectorXd l = l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solve(kv);
    const double diag = std::sqrt(std::max(signal_ + noise_ - l.squaredNorm(), jitter_floor_));
    const double mean = l.dot(beta_.head(n_));
    const double y = std::isnan(ys[j]) ? mean : ys[j];
    l_.row(n_).head(n_) = l.transpose();
    l_(n_, n_) = diag;
    x_.row(n_) = x;
    y_[n_] = y;
    beta_[n_] = (y - mean) / diag;
    ++n_;
  }
  if (m_ == 0) return;
  // The new rows of V: solving [L11 0; L21 L22]·[V1; V2] = [K1; K2] for V2 gives
  // V2 = L22⁻¹·(K(xs, pool) - L21·V1), one product over V1 and a small triangular solve.
  const bool means = !means_stale_;
  const Eigen::MatrixXd l21 = l_.block(first, 0, k, first);
  const Eigen::MatrixXd l22 = l_.block(first, first, k, k);
  const Eigen::VectorXd beta = beta_.segment(first, k);
  for_column_blocks(m_, kParallelColumns, [&](int begin, int end) {
    const int cols = end - begin;
    Eigen::MatrixXd rows = matern_covariance(h_, xs, pool_.middleRows(begin, cols));
    if (first > 0) rows.noalias() -= l21 * v_.block(0, begin, first, cols);
    l22.triangularView<Eigen::Lower>().solveInPlace(rows);
    v_.block(first, begin, k, cols) = rows;
    v_sq_.segment(begin, cols) += rows.colwise().squaredNorm().transpose();
    if (means) means_.segment(begin, cols).noalias() += rows.transpose() * beta;
  });
}

void GpPosterior::set_target(int i, double y) {
  const double delta = y - y_[i];
  if (delta == 0) return;
  y_[i] = y;
  // β = L⁻¹y changes only from entry i on: L[i:, i:]·Δβ = δ·e_0, and the means by V[i:]ᵀ·Δβ.
  // Results mostly replace the guesses of recent proposals, the last rows, so this is cheap.
  const int tail = n_ - i;
  Eigen::VectorXd d = Eigen::VectorXd::Zero(tail);
  d[0] = delta;
  l_.block(i, i, tail, tail).triangularView<Eigen::Lower>().solveInPlace(d);
  beta_.segment(i, tail) += d;
  if (!means_stale_ && m_ > 0) {
    means_.head(m_).noalias() += v_.block(i, 0, tail, m_).transpose() * d;
  }
}

void GpPosterior::set_targets(const Eigen::VectorXd& y) {
  y_.head(n_) = y;
  update_beta();
}

void GpPosterior::add_to_pool(const Eigen::MatrixXd& xs) {
  const int add = int(xs.rows());
  if (add == 0) return;
  reserve(n_, m_ + add);
  pool_.middleRows(m_, add) = xs;
  if (n_ > 0) {
    for_column_blocks(add, kParallelNewColumns, [&](int first, int end) {
      const int count = end - first, at = m_ + first;
      Eigen::MatrixXd cols = matern_covariance(h_, x_.topRows(n_), xs.middleRows(first, count));
      l_.topLeftCorner(n_, n_).triangularView<Eigen::Lower>().solveInPlace(cols);  // n × count
      v_.block(0, at, n_, count) = cols;
      v_sq_.segment(at, count) = cols.colwise().squaredNorm().transpose();
      means_.segment(at, count) = cols.transpose() * beta_.head(n_);
    });
  } else {
    v_sq_.segment(m_, add).setZero();
    means_.segment(m_, add).setZero();
  }
  m_ += add;
}

double GpPosterior::mean(int j) {
  if (means_stale_) {
    if (n_ > 0) {
      for_column_blocks(m_, kParallelColumns, [&](int first, int end) {
        means_.segment(first, end - first) =
            v_.block(0, first, n_, end - first).transpose() * beta_.head(n_);
      });
    } else {
      means_.head(m_).setZero();
    }
    means_stale_ = false;
  }
  return means_[j];
}

double GpPosterior::variance(int j) const {
  return std::max(signal_ - v_sq_[j], 1e-12);
}

}  // namespace gemmtune
