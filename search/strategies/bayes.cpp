// bayes: Bayesian optimization. A Gaussian process (gp.hpp) models log(time) over the encoded
// parameters (log2 of sizes scaled to [0,1]) and, when the space provides them, the template's
// derived values. After a Latin-hypercube initial design, the next configuration maximizes an
// acquisition over the unseen valid space (scored whole when small; sampled, plus the
// neighbourhood of the best results, when large): expected improvement, probability of
// improvement, a lower confidence bound, or by default a GP-Hedge portfolio of the three, since
// no single one is best on every space. Every few proposals the acquisition is maximized over the
// neighbours of the best result only (a hybrid step: the last percent is usually won there).
// Failed configurations are imputed as slow as the slowest seen so that the model learns to avoid
// their region (or, optionally, left to a separate failure classifier). Proposals still in flight
// are given a "constant liar" value so that a batch spreads out while compilation runs ahead;
// optionally (batch 0) how many may be in flight grows with the results told, so that a compile
// pool fills as the model learns.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "search/strategies/gp.hpp"
#include "search/strategies/strategies.hpp"

namespace gemmtune {

namespace {

// Proposals in flight at least: one measured while the next builds.
constexpr size_t kMinBatch = 2;

double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}
double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

class BayesSearcher : public Searcher {
 public:
  BayesSearcher(const SearchSpace& space, uint64_t seed, const StrategyOptions& options)
      : Searcher(space, seed),
        acquisition_(options.get_string("acquisition", {"ei", "pi", "lcb", "multi"})),
        kappa_(options.get_double("kappa", 0, 100)),
        xi_(options.get_double("xi", 0, 10)),
        init_kind_(options.get_string("init", {"lhs", "random"})),
        init_count_(size_t(options.get_int("init-count", 1, 100000))),
        candidates_(size_t(options.get_int("candidates", 10, 10000000))),
        batch_(size_t(options.get_int("batch", 0, 1024))),
        batch_growth_(size_t(options.get_int("batch-growth", 1, 1000))),
        liar_(options.get_string("liar", {"min", "mean", "max"})),
        local_starts_(size_t(options.get_int("local-starts", 0, 1000))),
        failed_(options.get_string("failed", {"worst", "classify"})),
        local_every_(size_t(options.get_int("local-every", 0, 1000))),
        hedge_eta_(options.get_double("hedge-eta", 0, 100)),
        params_(int(space.dimensions().size())),
        dims_(params_ + (options.get_string("derived", {"yes", "no"}) == "yes"
                             ? int(space.feature_names().size())
                             : 0)) {
    fit_options_.restarts = int(options.get_int("fit-restarts", 0, 100));
    fit_options_.iterations = int(options.get_int("fit-iterations", 1, 100000));
  }

  // Without a fixed batch: the whole initial design at once (it does not depend on results), then
  // one proposal in flight per `batch_growth_` results told (at least two), so that a compile
  // pool fills as the model learns while the guesses made for proposals in flight (the liar's
  // values) stay few beside what the model has measured.
  size_t max_batch() const override {
    if (batch_ > 0) return batch_;
    if (history().size() + pending_count() < init_count_) return init_count_;
    return std::max(kMinBatch, history().size() / batch_growth_);
  }

 protected:
  std::optional<size_t> propose() override {
    if (params_ == 0) return random_unseen();
    size_t ok = 0;
    for (const auto& o : history()) ok += o.ok ? 1 : 0;
    if (history().size() + pending_count() < init_count_ || ok < 2) return initial_point();
    return model_point();
  }

 private:
  // The next point of the initial design, mapped to the nearest unseen valid configuration.
  std::optional<size_t> initial_point() {
    if (init_kind_ == "random") return random_unseen();
    if (design_.empty() || design_next_ >= design_.size()) make_design();
    const std::vector<double>& target = design_[design_next_++];
    const size_t n = space_.size();
    // Too large a space is searched through a sample of rows.
    const size_t limit = 50000;
    std::vector<double> x(params_);
    std::optional<size_t> best;
    double best_d = std::numeric_limits<double>::infinity();
    auto consider = [&](size_t i) {
      if (seen(i)) return;
      space_.encode(i, x.data());
      double dist = 0;
      for (int k = 0; k < params_; ++k) dist += (x[k] - target[k]) * (x[k] - target[k]);
      if (dist < best_d) {
        best_d = dist;
        best = i;
      }
    };
    if (n <= limit) {
      for (size_t i = 0; i < n; ++i) consider(i);
    } else {
      for (size_t s = 0; s < limit; ++s) consider(rng_.below(n));
    }
    return best ? best : random_unseen();
  }

  // A Latin hypercube of init_count_ points in [0,1]^d.
  void make_design() {
    const size_t k = init_count_;
    design_.assign(k, std::vector<double>(params_));
    for (int d = 0; d < params_; ++d) {
      std::vector<size_t> strata(k);
      for (size_t i = 0; i < k; ++i) strata[i] = i;
      rng_.shuffle(strata);
      for (size_t i = 0; i < k; ++i) design_[i][d] = (strata[i] + rng_.uniform()) / double(k);
    }
    design_next_ = 0;
  }

  std::optional<size_t> model_point() {
    // Training data: told results (failures imputed as the slowest seen, or left to the
    // classifier), then pending proposals at the liar value.
    std::vector<size_t> rows;
    std::vector<double> ys;
    std::vector<bool> failed;
    std::vector<size_t> all_rows;
    std::vector<double> labels;  // 1 for a failure, for the classifier
    double sum = 0, sum2 = 0, worst = -std::numeric_limits<double>::infinity();
    double best = std::numeric_limits<double>::infinity();
    size_t ok = 0;
    for (const auto& o : history()) {
      all_rows.push_back(o.index);
      labels.push_back(o.ok ? 0.0 : 1.0);
      if (!o.ok && failed_ == "classify") continue;
      rows.push_back(o.index);
      failed.push_back(!o.ok);
      const double y = o.ok ? std::log(o.time_ms) : 0;
      ys.push_back(y);
      if (o.ok) {
        sum += y;
        sum2 += y * y;
        worst = std::max(worst, y);
        best = std::min(best, y);
        ++ok;
      }
    }
    const double mean = sum / ok;
    double sd = std::sqrt(std::max(0.0, sum2 / ok - mean * mean));
    if (sd < 1e-9) sd = 1;
    for (size_t i = 0; i < ys.size(); ++i) ys[i] = ((failed[i] ? worst : ys[i]) - mean) / sd;
    const double y_best = (best - mean) / sd;

    const size_t told = rows.size();
    Eigen::MatrixXd x(told, dims_);
    for (size_t i = 0; i < told; ++i) encode_row(rows[i], x, Eigen::Index(i));
    Eigen::VectorXd y = Eigen::Map<Eigen::VectorXd>(ys.data(), told);

    // Hyperparameters are refitted as the data grows by a fraction, which caps the fitting cost.
    const bool refit = told >= fitted_size_ * 1.15 + 1 || told < 20;
    if (refit) {
      gp_.set_data(x, y);
      gp_.fit(rng_, fit_options_);
      fitted_size_ = told;
    }
    const auto& pend = pending_rows();
    if (!pend.empty()) {
      double lie = liar_ == "min" ? y.minCoeff() : liar_ == "max" ? y.maxCoeff() : y.mean();
      x.conservativeResize(told + pend.size(), Eigen::NoChange);
      y.conservativeResize(told + pend.size());
      for (size_t j = 0; j < pend.size(); ++j) {
        encode_row(pend[j], x, Eigen::Index(told + j));
        y[told + j] = lie;
      }
    }
    gp_.set_data(x, y);  // keeps the fitted hyperparameters
    fit_classifier(all_rows, labels, refit);

    // Every local_every_-th proposal is chosen, still by the acquisition, among the unseen
    // neighbours of the best result: the model is least reliable at the fine scale where the
    // last few percent are won.
    std::vector<size_t> cand;
    ++model_steps_;
    if (local_every_ > 0 && model_steps_ % local_every_ == 0 && best_index()) {
      for (size_t i : space_.neighbours(*best_index())) {
        if (!seen(i)) cand.push_back(i);
      }
      for (size_t i : space_.second_neighbours(*best_index())) {
        if (!seen(i)) cand.push_back(i);
      }
    }
    if (cand.empty()) cand = candidate_rows();
    if (cand.empty()) return std::nullopt;

    if (acquisition_ != "multi") return maximize(cand, acquisition_, y_best);

    // GP-Hedge (Hoffman et al. 2011): each function nominates a point; a function's gain grows
    // with how good the current model believes its earlier nominees are, and the next nominee is
    // taken from a function drawn with odds exp(eta * gain).
    static const char* kKinds[] = {"ei", "pi", "lcb"};
    if (!nominees_.empty()) {
      Eigen::MatrixXd xn(3, dims_);
      for (int a = 0; a < 3; ++a) encode_row(nominees_[a], xn, a);
      Eigen::VectorXd mu;
      gp_.predict(xn, &mu, nullptr);
      for (int a = 0; a < 3; ++a) gains_[a] -= mu[a];
    }
    nominees_.assign(3, 0);
    for (int a = 0; a < 3; ++a) nominees_[a] = maximize(cand, kKinds[a], y_best);
    const double top = *std::max_element(gains_, gains_ + 3);
    double odds[3], total = 0;
    for (int a = 0; a < 3; ++a) total += odds[a] = std::exp(hedge_eta_ * (gains_[a] - top));
    double u = rng_.uniform() * total;
    int pick = 0;
    while (pick < 2 && u >= odds[pick]) u -= odds[pick++];
    return nominees_[pick];
  }

  // The candidate with the largest acquisition of kind `kind`; in a large space the best
  // candidates are refined by hill climbing on the acquisition through neighbouring
  // configurations, since a sampled candidate set misses narrow optima.
  size_t maximize(const std::vector<size_t>& cand, const std::string& kind, double y_best) {
    const std::vector<double> scores = acquisition(cand, kind, y_best);
    std::vector<size_t> order(cand.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const size_t starts = std::max<size_t>(1, std::min<size_t>(local_starts_, order.size()));
    std::partial_sort(order.begin(), order.begin() + starts, order.end(),
                      [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    size_t best_row = cand[order[0]];
    double best_score = scores[order[0]];
    if (unseen_count() > candidates_) {
      for (size_t s = 0; s < std::min<size_t>(local_starts_, order.size()); ++s) {
        size_t row = cand[order[s]];
        double score = scores[order[s]];
        for (int step = 0; step < 30; ++step) {
          std::vector<size_t> next;
          for (size_t i : space_.neighbours(row)) {
            if (!seen(i)) next.push_back(i);
          }
          for (size_t i : space_.second_neighbours(row)) {
            if (!seen(i)) next.push_back(i);
          }
          if (next.empty()) break;
          const std::vector<double> ns = acquisition(next, kind, y_best);
          const size_t k = size_t(std::max_element(ns.begin(), ns.end()) - ns.begin());
          if (!(ns[k] > score)) break;
          row = next[k];
          score = ns[k];
        }
        if (score > best_score) {
          best_score = score;
          best_row = row;
        }
      }
    }
    return best_row;
  }

  // The failure classifier: a second GP regressing 1 (failed) / 0 (valid) over every told
  // result, so that its mean estimates the chance that a configuration fails.
  void fit_classifier(const std::vector<size_t>& rows, const std::vector<double>& labels,
                      bool refit) {
    classify_ = false;
    if (failed_ != "classify") return;
    const Eigen::Index n = Eigen::Index(rows.size());
    const Eigen::VectorXd l = Eigen::Map<const Eigen::VectorXd>(labels.data(), n);
    fail_rate_ = l.mean();
    if (fail_rate_ == 0) return;
    Eigen::MatrixXd x(n, dims_);
    for (Eigen::Index i = 0; i < n; ++i) encode_row(rows[size_t(i)], x, i);
    fail_gp_.set_data(x, (l.array() - fail_rate_).matrix());
    if (refit || !fail_fitted_) {
      fail_gp_.fit(rng_, fit_options_);
      fail_fitted_ = true;
    }
    classify_ = true;
  }

  // The acquisition of kind `kind` (larger is better) of unseen rows under the current model.
  std::vector<double> acquisition(const std::vector<size_t>& rows, const std::string& kind,
                                  double y_best) {
    Eigen::MatrixXd xc(rows.size(), dims_);
    for (size_t i = 0; i < rows.size(); ++i) encode_row(rows[i], xc, Eigen::Index(i));
    Eigen::VectorXd mu, var, pf;
    gp_.predict(xc, &mu, &var);
    if (classify_) fail_gp_.predict(xc, &pf, nullptr);
    std::vector<double> out(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const double s = std::sqrt(var[i]);
      // The chance that the configuration runs at all (1 without a classifier).
      const double valid = classify_ ? std::clamp(1 - (pf[i] + fail_rate_), 0.01, 1.0) : 1.0;
      if (kind == "lcb") {
        out[i] = -(mu[i] - kappa_ * s) + std::log(valid);
      } else if (kind == "pi") {
        out[i] = valid * normal_cdf((y_best - mu[i] - xi_) / s);
      } else {
        const double improvement = y_best - mu[i] - xi_;
        const double z = improvement / s;
        out[i] = valid * (improvement * normal_cdf(z) + s * normal_pdf(z));
      }
    }
    return out;
  }

  // Unseen rows to score: all of them when few, else a sample plus the neighbourhoods of the best
  // results (where the optimum usually is).
  std::vector<size_t> candidate_rows() {
    std::vector<size_t> out;
    if (unseen_count() <= candidates_) {
      for (size_t i = 0; i < space_.size(); ++i) {
        if (!seen(i)) out.push_back(i);
      }
      return out;
    }
    std::unordered_set<size_t> chosen;
    std::vector<std::pair<double, size_t>> good;
    for (const auto& o : history()) {
      if (o.ok) good.emplace_back(o.time_ms, o.index);
    }
    std::sort(good.begin(), good.end());
    for (size_t g = 0; g < std::min<size_t>(good.size(), 5); ++g) {
      for (size_t i : space_.neighbours(good[g].second)) {
        if (!seen(i)) chosen.insert(i);
      }
      if (g == 0) {
        for (size_t i : space_.second_neighbours(good[g].second)) {
          if (!seen(i)) chosen.insert(i);
        }
      }
    }
    out.assign(chosen.begin(), chosen.end());
    std::sort(out.begin(), out.end());
    size_t tries = 0;
    while (out.size() < candidates_ && tries++ < candidates_ * 4) {
      auto i = random_unseen();
      if (!i) break;
      if (chosen.insert(*i).second) out.push_back(*i);
    }
    return out;
  }

  // Row `r` of `m` (column-major, so rows are strided) gets the encoding of space row `row`.
  void encode_row(size_t row, Eigen::MatrixXd& m, Eigen::Index r) {
    buffer_.resize(params_ + space_.feature_names().size());
    space_.encode_with_features(row, buffer_.data());
    for (int k = 0; k < dims_; ++k) m(r, k) = buffer_[k];
  }

  std::string acquisition_;
  double kappa_, xi_;
  std::string init_kind_;
  size_t init_count_, candidates_, batch_, batch_growth_;
  std::string liar_;
  size_t local_starts_;
  std::string failed_;
  size_t local_every_;
  double hedge_eta_;
  size_t model_steps_ = 0;
  GaussianProcess fail_gp_;
  bool classify_ = false, fail_fitted_ = false;
  double fail_rate_ = 0;
  std::vector<size_t> nominees_;
  double gains_[3] = {0, 0, 0};
  int params_;  // parameter dimensions (the initial design spans these)
  int dims_;    // model inputs: parameters, then derived features when used
  GpFitOptions fit_options_;
  GaussianProcess gp_;
  size_t fitted_size_ = 0;
  std::vector<std::vector<double>> design_;
  size_t design_next_ = 0;
  std::vector<double> buffer_;
};

}  // namespace

StrategyInfo bayes_strategy() {
  return {"bayes",
          "Bayesian optimization: Gaussian process on log(time), a GP-Hedge portfolio of EI, PI "
          "and LCB",
          {
              {"acquisition", "multi",
               "ei (expected improvement), pi (probability of improvement), lcb (lower "
               "confidence bound) or multi (a GP-Hedge portfolio of the three)"},
              {"kappa", "2.0", "lcb: weight of the standard deviation"},
              {"xi", "0.0", "ei, pi: improvement margin, in standard deviations of log(time)"},
              {"init", "lhs", "initial design: lhs (Latin hypercube) or random"},
              {"init-count", "10", "evaluations of the initial design"},
              {"candidates", "5000",
               "most configurations scored per proposal (the whole space when smaller)"},
              {"batch", "2",
               "most proposals in flight (compilation runs ahead of timing); 0: growing with the "
               "results up to the search's lookahead (see batch-growth), which keeps a compile "
               "pool busier but lowered the quality reached per evaluation and per simulated "
               "second on the recordings tried (results/README.md)"},
              {"batch-growth", "4",
               "batch 0: results told per proposal in flight (at least 2 in flight; the whole "
               "initial design at once)"},
              {"liar", "mean", "value assumed for proposals in flight: min, mean or max seen"},
              {"local-starts", "5",
               "best sampled candidates refined by hill climbing on the acquisition (large "
               "spaces)"},
              {"failed", "worst",
               "failed configurations: worst (imputed as slow as the slowest seen) or classify "
               "(left out of the time model; a second GP estimates the chance of failure, which "
               "weights the acquisition)"},
              {"local-every", "3",
               "every N-th model-guided proposal is chosen among the unseen neighbours of the best "
               "result (0: never)"},
              {"hedge-eta", "1.0", "multi: how strongly GP-Hedge favours the best function"},
              {"derived", "yes",
               "also model the template's derived values (work per work-item, work-group size, "
               "resources) when the space provides them: yes or no"},
              {"fit-restarts", "1", "random restarts of the hyperparameter fit"},
              {"fit-iterations", "60", "gradient steps per hyperparameter fit"},
          },
          [](const SearchSpace& space, uint64_t seed, const StrategyOptions& options) {
            return std::make_unique<BayesSearcher>(space, seed, options);
          }};
}

}  // namespace gemmtune
