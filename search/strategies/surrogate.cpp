// SPDX-License-Identifier: Apache-2.0
#include "search/strategies/surrogate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gemmtune {

namespace {

// Most results the hyperparameters are fitted on (a random part of the training subset): each
// gradient step costs O(n³), and a few hundred points fix the length scales no better than this.
constexpr size_t kFitCap = 128;

}  // namespace

TimeScale TimeScale::of_results(const std::vector<Observation>& history) {
  double sum = 0, sum2 = 0;
  TimeScale s;
  s.worst = -std::numeric_limits<double>::infinity();
  s.best = std::numeric_limits<double>::infinity();
  size_t ok = 0;
  for (const auto& o : history) {
    if (!o.ok) continue;
    const double y = std::log(o.time_ms);
    sum += y;
    sum2 += y * y;
    s.worst = std::max(s.worst, y);
    s.best = std::min(s.best, y);
    ++ok;
  }
  s.mean = sum / ok;
  s.sd = std::sqrt(std::max(0.0, sum2 / ok - s.mean * s.mean));
  if (s.sd < 1e-9) s.sd = 1;
  return s;
}

SurrogateModel::SurrogateModel(const SearchSpace& space, SurrogateOptions options)
    : space_(space), options_(std::move(options)) {}

void SurrogateModel::rebuild(const std::vector<Observation>& history,
                             const std::vector<size_t>& pending, const TimeScale& scale, bool refit,
                             Rng& rng) {
  std::vector<const Observation*> obs;
  for (const auto& o : history) {
    if (o.ok || !options_.classify_failures) obs.push_back(&o);
  }
  auto target = [&](const Observation& o) {
    return scale.of(o.ok ? std::log(o.time_ms) : scale.worst);
  };
  const size_t told = obs.size();
  if (obs.size() > kTrainCap) {
    std::stable_sort(obs.begin(), obs.end(), [&](const Observation* a, const Observation* b) {
      return target(*a) < target(*b);
    });
    std::vector<const Observation*> rest(obs.begin() + kTrainCap / 2, obs.end());
    rng.shuffle(rest);
    obs.resize(kTrainCap / 2);
    obs.insert(obs.end(), rest.begin(), rest.begin() + (kTrainCap - kTrainCap / 2));
  }
  const Eigen::Index n = Eigen::Index(obs.size());
  Eigen::MatrixXd x(n, options_.dims);
  Eigen::VectorXd y(n);
  train_rows_.clear();
  train_pos_.clear();
  for (Eigen::Index i = 0; i < n; ++i) {
    encode_row(obs[size_t(i)]->index, x, i);
    y[i] = target(*obs[size_t(i)]);
    train_pos_[obs[size_t(i)]->index] = int(i);
    train_rows_.push_back(obs[size_t(i)]->index);
  }
  if (refit) {
    fit_hyperparameters(x, y, rng);
    fitted_size_ = told;
  }
  post_.reset(gp_.hyperparameters(), x, y);
  epoch_ = scale;
  const std::string& liar = options_.liar;
  liar_value_ = n == 0 ? 0 : liar == "min" ? y.minCoeff() : liar == "max" ? y.maxCoeff() : y.mean();
  told_in_model_ = obs.size();
  fit_classifier(history, refit, rng);
  ready_ = true;
  synced_history_ = history.size();
  pool_rows_.clear();
  pool_pos_.clear();
  sync(history, pending, scale);  // the proposals in flight
}

void SurrogateModel::fit_hyperparameters(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                         Rng& rng) {
  if (x.rows() <= Eigen::Index(kFitCap)) {
    gp_.set_data(x, y);
  } else {
    std::vector<Eigen::Index> pick(size_t(x.rows()));
    for (size_t i = 0; i < pick.size(); ++i) pick[i] = Eigen::Index(i);
    rng.shuffle(pick);
    pick.resize(kFitCap);
    std::sort(pick.begin(), pick.end());
    gp_.set_data(x(pick, Eigen::all), y(pick));
  }
  gp_.fit(rng, options_.fit);
}

void SurrogateModel::sync(const std::vector<Observation>& history,
                          const std::vector<size_t>& pending, const TimeScale& now) {
  // New training points are appended together (the posterior reads V once for all of them):
  // results first, then the guesses for the proposals in flight, each guessed after every point
  // before it.
  std::vector<size_t> rows;
  std::vector<double> targets;
  for (; synced_history_ < history.size(); ++synced_history_) {
    const Observation& o = history[synced_history_];
    if (classify_) append_failure_label(o);
    if (!o.ok && options_.classify_failures) continue;
    const double y = epoch_.of(o.ok ? std::log(o.time_ms) : now.worst);
    const auto it = train_pos_.find(o.index);
    if (it == train_pos_.end()) {
      if (std::find(rows.begin(), rows.end(), o.index) == rows.end()) {
        rows.push_back(o.index);
        targets.push_back(y);
      }
    } else {
      post_.set_target(it->second, y);
    }
    ++told_in_model_;
  }
  for (size_t r : pending) {
    if (train_pos_.count(r) != 0 || std::find(rows.begin(), rows.end(), r) != rows.end()) {
      continue;
    }
    rows.push_back(r);
    // The believer guesses the model's mean at the row; the others a value fixed per rebuild.
    targets.push_back(options_.liar == "believer" ? std::numeric_limits<double>::quiet_NaN()
                                                  : liar_value_);
  }
  append_training(rows, targets);
}

void SurrogateModel::append_training(const std::vector<size_t>& rows,
                                     const std::vector<double>& targets) {
  if (rows.empty()) return;
  Eigen::MatrixXd x(Eigen::Index(rows.size()), options_.dims);
  for (size_t i = 0; i < rows.size(); ++i) {
    encode_row(rows[i], x, Eigen::Index(i));
    train_pos_[rows[i]] = int(train_rows_.size());
    train_rows_.push_back(rows[i]);
  }
  post_.append(x, Eigen::Map<const Eigen::VectorXd>(targets.data(), Eigen::Index(targets.size())));
}

int SurrogateModel::pool_index(size_t row) {
  const auto it = pool_pos_.find(row);
  if (it != pool_pos_.end()) return it->second;
  add_to_pool({row});
  return pool_pos_.at(row);
}

void SurrogateModel::add_to_pool(const std::vector<size_t>& rows) {
  std::vector<size_t> fresh;
  for (size_t r : rows) {
    if (pool_pos_.emplace(r, int(pool_rows_.size() + fresh.size())).second) fresh.push_back(r);
  }
  if (fresh.empty()) return;
  Eigen::MatrixXd x(Eigen::Index(fresh.size()), options_.dims);
  for (size_t i = 0; i < fresh.size(); ++i) encode_row(fresh[i], x, Eigen::Index(i));
  pool_rows_.insert(pool_rows_.end(), fresh.begin(), fresh.end());
  post_.add_to_pool(x);
  if (classify_) fail_post_.add_to_pool(x);
}

double SurrogateModel::sd(int j) const {
  return std::sqrt(post_.variance(j));
}

double SurrogateModel::valid_chance(int j) {
  return classify_ ? std::clamp(1 - (fail_post_.mean(j) + fail_rate_), 0.01, 1.0) : 1.0;
}

// The classifier sees the same kind of subset as the time model: at most kTrainCap told results.
void SurrogateModel::fit_classifier(const std::vector<Observation>& history, bool refit, Rng& rng) {
  classify_ = false;
  if (!options_.classify_failures) return;
  std::vector<const Observation*> obs;
  size_t failures = 0;
  for (const auto& o : history) {
    obs.push_back(&o);
    failures += o.ok ? 0 : 1;
  }
  fail_rate_ = double(failures) / double(obs.size());
  if (failures == 0) return;
  if (obs.size() > kTrainCap) {
    rng.shuffle(obs);
    obs.resize(kTrainCap);
  }
  const Eigen::Index n = Eigen::Index(obs.size());
  Eigen::MatrixXd x(n, options_.dims);
  Eigen::VectorXd l(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    encode_row(obs[size_t(i)]->index, x, i);
    l[i] = (obs[size_t(i)]->ok ? 0.0 : 1.0) - fail_rate_;
  }
  if (refit || !fail_fitted_) {
    fail_gp_.set_data(x, l);
    fail_gp_.fit(rng, options_.fit);
    fail_fitted_ = true;
  }
  fail_post_.reset(fail_gp_.hyperparameters(), x, l);
  classify_ = true;
}

// A result told since the classifier was built joins it (with the failure rate of its build).
void SurrogateModel::append_failure_label(const Observation& o) {
  Eigen::MatrixXd x(1, options_.dims);
  encode_row(o.index, x, 0);
  fail_post_.append(x.row(0), (o.ok ? 0.0 : 1.0) - fail_rate_);
}

void SurrogateModel::encode_row(size_t row, Eigen::MatrixXd& m, Eigen::Index r) {
  buffer_.resize(space_.dimensions().size() + space_.feature_names().size());
  space_.encode_with_features(row, buffer_.data());
  for (int k = 0; k < options_.dims; ++k) m(r, k) = buffer_[size_t(k)];
}

}  // namespace gemmtune
