// SPDX-License-Identifier: Apache-2.0
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
// are given a guessed value (by default the model's own mean, "kriging believer"), so that a batch
// spreads out while compilation runs ahead; by default as many are in flight as keep the devices
// busy. The model (surrogate.hpp) is kept up to date incrementally over a training subset of
// bounded size, so that a proposal costs milliseconds even after a thousand results.
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "search/strategies/strategies.hpp"
#include "search/strategies/surrogate.hpp"

namespace gemmtune {

namespace {

// The acquisition functions (larger is better): expected improvement, probability of
// improvement, lower confidence bound.
enum class Acquisition { kEi, kPi, kLcb };

Acquisition acquisition_named(const std::string& name) {
  return name == "pi" ? Acquisition::kPi : name == "lcb" ? Acquisition::kLcb : Acquisition::kEi;
}

// Proposals in flight at least: one measured while the next builds.
constexpr size_t kMinBatch = 2;
// Told results the model takes in after a rebuild before the next (SurrogateModel::kTrainCap).
constexpr size_t kTrainSlack = 64;
// Hyperparameters are refitted on every result below kRefitAlways results, then each time the
// results grow by kRefitGrowth, and by kRefitGrowthLarge past the training cap.
constexpr size_t kRefitAlways = 20;
constexpr double kRefitGrowth = 1.15;
constexpr double kRefitGrowthLarge = 1.5;
// Most hill-climbing steps on the acquisition from one start.
constexpr int kClimbSteps = 30;

double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}
double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

// The model's settings from the strategy's options.
SurrogateOptions model_options(const SearchSpace& space, const StrategyOptions& options,
                               const std::string& liar, const std::string& failed) {
  SurrogateOptions m;
  m.dims = int(space.dimensions().size()) + (options.get_string("derived", {"yes", "no"}) == "yes"
                                                 ? int(space.feature_names().size())
                                                 : 0);
  m.liar = liar;
  m.classify_failures = failed == "classify";
  m.fit.restarts = int(options.get_int("fit-restarts", 0, 100));
  m.fit.iterations = int(options.get_int("fit-iterations", 1, 100000));
  return m;
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
        batch_(options.get_int_or("batch", "auto", 0, 1024)),
        batch_growth_(size_t(options.get_int("batch-growth", 1, 1000))),
        liar_(options.get_string("liar", {"min", "mean", "max", "believer"})),
        local_starts_(size_t(options.get_int("local-starts", 0, 1000))),
        failed_(options.get_string("failed", {"worst", "classify"})),
        local_every_(size_t(options.get_int("local-every", 0, 1000))),
        hedge_eta_(options.get_double("hedge-eta", 0, 100)),
        params_(int(space.dimensions().size())),
        model_(space, model_options(space, options, liar_, failed_)) {}

  // Automatic batch: as many in flight as keep the devices busy (the pace), at least two, and the
  // whole initial design at once (it does not depend on results). The liar "believer" keeps a
  // large batch almost as good per evaluation as a small one, and much better per second when
  // builds take longer than measurements (results/README.md). Batch 0: one proposal in flight
  // per `batch_growth_` results told, whatever the pace.
  size_t max_batch(size_t pace) const override {
    if (batch_ && *batch_ > 0) return size_t(*batch_);
    const bool designing = history().size() + pending_count() < init_count_;
    if (!batch_) return std::max(designing ? init_count_ : kMinBatch, pace);
    if (designing) return init_count_;
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
    const TimeScale sc = TimeScale::of_results(history());
    size_t told = 0;
    for (const auto& o : history()) told += o.ok || failed_ != "classify" ? 1 : 0;
    // Hyperparameters are refitted as the data grows by a fraction, which caps the fitting cost;
    // past the training cap the fraction is larger, since a fit there costs the most and the
    // subset it sees changes little.
    const double growth = told > SurrogateModel::kTrainCap ? kRefitGrowthLarge : kRefitGrowth;
    const bool refit = told < kRefitAlways || told >= model_.fitted_size() * growth + 1;
    if (refit || !model_.ready() ||
        model_.told_in_model() > SurrogateModel::kTrainCap + kTrainSlack) {
      rebuild(sc, refit);
    } else {
      model_.sync(history(), pending_rows(), sc);
    }
    if (best_index() && best_index() != pooled_best_) {
      pool_neighbourhood(*best_index(), true);
      pooled_best_ = best_index();
    }
    const double y_best = model_.scale().of(sc.best);

    // Every local_every_-th proposal is chosen, still by the acquisition, among the unseen
    // neighbours of the best result: the model is least reliable at the fine scale where the
    // last few percent are won.
    std::vector<int> cand;
    ++model_steps_;
    if (local_every_ > 0 && model_steps_ % local_every_ == 0 && best_index()) {
      cand = pool_neighbourhood(*best_index(), true);
    }
    if (cand.empty()) {
      const std::vector<size_t>& pool = model_.pool_rows();
      for (int j = 0; j < int(pool.size()); ++j) {
        if (!seen(pool[size_t(j)])) cand.push_back(j);
      }
    }
    if (cand.empty()) {
      // Everything pooled is seen: a fresh pool from what remains.
      rebuild(sc, false);
      const std::vector<size_t>& pool = model_.pool_rows();
      for (int j = 0; j < int(pool.size()); ++j) {
        if (!seen(pool[size_t(j)])) cand.push_back(j);
      }
      if (cand.empty()) return std::nullopt;
    }

    if (acquisition_ != "multi") {
      return model_
          .pool_rows()[size_t(maximize(cand, {acquisition_named(acquisition_)}, y_best)[0])];
    }

    // GP-Hedge (Hoffman et al. 2011): each function nominates a point; a function's gain grows
    // with how good the current model believes its earlier nominees are, and the next nominee is
    // taken from a function drawn with odds exp(eta * gain).
    static const std::vector<Acquisition> kKinds = {Acquisition::kEi, Acquisition::kPi,
                                                    Acquisition::kLcb};
    if (!nominees_.empty()) {
      for (int a = 0; a < 3; ++a) {
        gains_[a] -= model_.mean(model_.pool_index(nominees_[size_t(a)]));
      }
    }
    nominees_.clear();
    for (int j : maximize(cand, kKinds, y_best)) nominees_.push_back(model_.pool_rows()[size_t(j)]);
    const double top = *std::max_element(gains_, gains_ + 3);
    double odds[3], total = 0;
    for (int a = 0; a < 3; ++a) total += odds[a] = std::exp(hedge_eta_ * (gains_[a] - top));
    double u = rng_.uniform() * total;
    int pick = 0;
    while (pick < 2 && u >= odds[pick]) u -= odds[pick++];
    return nominees_[size_t(pick)];
  }

  // The model from scratch (SurrogateModel::rebuild) and a fresh candidate pool.
  void rebuild(const TimeScale& sc, bool refit) {
    model_.rebuild(history(), pending_rows(), sc, refit, rng_);
    model_.add_to_pool(candidate_rows());
    pooled_best_ = best_index();
  }

  // The unseen neighbours of `row`, and its unseen second neighbours when `second`.
  std::vector<size_t> unseen_neighbourhood(size_t row, bool second) const {
    std::vector<size_t> rows;
    for (size_t i : space_.neighbours(row)) {
      if (!seen(i)) rows.push_back(i);
    }
    if (second) {
      for (size_t i : space_.second_neighbours(row)) {
        if (!seen(i)) rows.push_back(i);
      }
    }
    return rows;
  }

  // Adds the unseen neighbours of `row` (and its second neighbours when `second`) to the pool;
  // returns their pool indices.
  std::vector<int> pool_neighbourhood(size_t row, bool second) {
    const std::vector<size_t> rows = unseen_neighbourhood(row, second);
    model_.add_to_pool(rows);
    std::vector<int> out;
    for (size_t r : rows) out.push_back(model_.pool_index(r));
    return out;
  }

  // For each kind in `kinds`, the pool candidate with the largest acquisition of that kind; in a
  // large space each kind's best candidates are refined by hill climbing on the acquisition
  // through neighbouring configurations, since a sampled candidate set misses narrow optima. The
  // climbs of every kind and start take their steps together, so that the neighbours a round of
  // steps adds to the pool are one block, its columns computed on several threads, rather than a
  // dozen small ones computed one after another: the same climbs and the same picks.
  std::vector<int> maximize(const std::vector<int>& cand, const std::vector<Acquisition>& kinds,
                            double y_best) {
    struct Climb {
      size_t kind;
      int at;
      double score;
      bool going = true;
    };
    std::vector<int> best(kinds.size());
    std::vector<double> best_score(kinds.size());
    std::vector<Climb> climbs;
    const bool climb = unseen_count() > candidates_;
    for (size_t a = 0; a < kinds.size(); ++a) {
      std::vector<double> scores(cand.size());
      for (size_t i = 0; i < cand.size(); ++i) scores[i] = acquisition(cand[i], kinds[a], y_best);
      std::vector<size_t> order(cand.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      const size_t starts = std::max<size_t>(1, std::min<size_t>(local_starts_, order.size()));
      std::partial_sort(order.begin(), order.begin() + starts, order.end(),
                        [&](size_t x, size_t y) { return scores[x] > scores[y]; });
      best[a] = cand[order[0]];
      best_score[a] = scores[order[0]];
      if (!climb) continue;
      for (size_t s = 0; s < std::min<size_t>(local_starts_, order.size()); ++s) {
        climbs.push_back({a, cand[order[s]], scores[order[s]]});
      }
    }
    std::vector<std::vector<size_t>> rows(climbs.size());
    for (int step = 0; step < kClimbSteps; ++step) {
      std::vector<size_t> round;
      for (size_t c = 0; c < climbs.size(); ++c) {
        if (!climbs[c].going) continue;
        rows[c] = unseen_neighbourhood(model_.pool_rows()[size_t(climbs[c].at)], true);
        round.insert(round.end(), rows[c].begin(), rows[c].end());
      }
      if (round.empty()) break;
      model_.add_to_pool(round);
      for (size_t c = 0; c < climbs.size(); ++c) {
        Climb& k = climbs[c];
        if (!k.going) continue;
        if (rows[c].empty()) {
          k.going = false;
          continue;
        }
        int arg = model_.pool_index(rows[c][0]);
        double top = -std::numeric_limits<double>::infinity();
        for (size_t r : rows[c]) {
          const int j = model_.pool_index(r);
          const double a = acquisition(j, kinds[k.kind], y_best);
          if (a > top) {
            top = a;
            arg = j;
          }
        }
        if (!(top > k.score)) {
          k.going = false;
          continue;
        }
        k.at = arg;
        k.score = top;
      }
    }
    for (const Climb& k : climbs) {
      if (k.score > best_score[k.kind]) {
        best_score[k.kind] = k.score;
        best[k.kind] = k.at;
      }
    }
    return best;
  }

  // The acquisition of kind `kind` (larger is better) of pool point j under the current model.
  double acquisition(int j, Acquisition kind, double y_best) {
    const double mu = model_.mean(j);
    const double s = model_.sd(j);
    const double valid = model_.valid_chance(j);
    if (kind == Acquisition::kLcb) return -(mu - kappa_ * s) + std::log(valid);
    if (kind == Acquisition::kPi) return valid * normal_cdf((y_best - mu - xi_) / s);
    const double improvement = y_best - mu - xi_;
    const double z = improvement / s;
    return valid * (improvement * normal_cdf(z) + s * normal_pdf(z));
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

  std::string acquisition_;
  double kappa_, xi_;
  std::string init_kind_;
  size_t init_count_, candidates_;
  std::optional<int64_t> batch_;  // nullopt: auto
  size_t batch_growth_;
  std::string liar_;
  size_t local_starts_;
  std::string failed_;
  size_t local_every_;
  double hedge_eta_;
  size_t model_steps_ = 0;
  std::vector<size_t> nominees_;
  double gains_[3] = {0, 0, 0};
  int params_;  // parameter dimensions (the initial design spans these)
  SurrogateModel model_;
  std::optional<size_t> pooled_best_;  // the best result whose neighbourhood is pooled
  std::vector<std::vector<double>> design_;
  size_t design_next_ = 0;
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
              {"batch", "auto",
               "most proposals in flight (compilation runs ahead of timing): auto (as many as "
               "keep the devices busy at the build and measuring times seen, up to the search's "
               "lookahead), a number, or 0 (growing with the results, see batch-growth)"},
              {"batch-growth", "4",
               "batch 0: results told per proposal in flight (at least 2 in flight; the whole "
               "initial design at once)"},
              {"liar", "believer",
               "value assumed for proposals in flight: min, mean or max seen, or believer (the "
               "model's mean when proposed)"},
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
