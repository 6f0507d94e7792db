#include "search/tuning/strategy_eval.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

#include "search/tuning/tuner.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace {

const double kInf = std::numeric_limits<double>::infinity();

// Answers from a shared recording; one per thread, so the recording is never copied.
class SharedReplay : public Evaluator {
 public:
  explicit SharedReplay(const ReplayEvaluator& replay) : replay_(replay) {}
  Result evaluate(const Problem& p, const Configuration& c) override { return replay_.lookup(p, c); }
  std::string description() const override { return replay_.description(); }

 private:
  const ReplayEvaluator& replay_;
};

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

}  // namespace

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return kInf;
  std::sort(values.begin(), values.end());
  const double pos = q * double(values.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  if (!std::isfinite(values[hi])) return kInf;
  return values[lo] + (pos - double(lo)) * (values[hi] - values[lo]);
}

StrategyEvalReport evaluate_strategies(const ReplayEvaluator& replay, const Problem& problem,
                                       const StrategyEvalSettings& settings) {
  StrategyEvalReport report;
  report.problem = problem;
  const auto configs = replay.configurations(problem);
  SearchSpace space = SearchSpace::from_configurations(configs);
  if (settings.spec) {
    space.add_spec_features(*settings.spec,
                            Context{{"ELEM_BYTES", element_bytes(problem.precision)}});
  }
  report.space_size = space.size();
  const auto best = replay.best(problem);
  if (!best) {
    throw invalid_argument("replay " + replay.path() + " holds no valid result for " +
                           problem.shape.to_string());
  }
  report.optimum_ms = best->time.median_ms;
  report.optimum = best->config;
  const double flops = problem.flops();
  for (const auto& c : configs) {
    const Result r = replay.lookup(problem, c);
    if (r.ok() && result_time_ms(r, flops) > 0) ++report.valid;
  }

  for (const auto& name : settings.strategies) {
    find_strategy(name);
    const OptionValues options =
        settings.options.count(name) ? settings.options.at(name) : OptionValues{};
    StrategyEval eval;
    eval.strategy = name;
    eval.trajectories.assign(settings.seeds, {});
    const auto t0 = std::chrono::steady_clock::now();

    std::atomic<int> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    auto worker = [&] {
      SharedReplay evaluator(replay);
      while (true) {
        const int run = next++;
        if (run >= settings.seeds) return;
        try {
          auto searcher = make_searcher(name, space, settings.first_seed + uint64_t(run), options);
          TuneSettings ts;
          ts.stop.max_evals = settings.max_evals;
          ts.lookahead = settings.lookahead;
          run_search(evaluator, problem, space, *searcher, ts);
          std::vector<double> traj;
          double best_ms = kInf;
          for (const auto& o : searcher->history()) {
            if (o.ok) best_ms = std::min(best_ms, o.time_ms);
            traj.push_back(std::isfinite(best_ms) ? report.optimum_ms / best_ms : 0.0);
          }
          eval.trajectories[run] = std::move(traj);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          next = settings.seeds;
        }
      }
    };
    const int threads = std::max(1, std::min(settings.threads, settings.seeds));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    eval.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // A run that stopped early (the whole space seen) keeps its last value at later budgets.
    auto at = [](const std::vector<double>& traj, int evals) {
      if (traj.empty()) return 0.0;
      return traj[std::min<size_t>(traj.size(), size_t(evals)) - 1];
    };
    for (double thr : settings.thresholds) {
      ThresholdStats ts;
      ts.threshold = thr;
      std::vector<double> needed;
      int reached = 0;
      for (const auto& traj : eval.trajectories) {
        double n = kInf;
        for (size_t i = 0; i < traj.size(); ++i) {
          if (traj[i] >= thr - 1e-12) {
            n = double(i + 1);
            break;
          }
        }
        if (std::isfinite(n)) ++reached;
        needed.push_back(n);
      }
      ts.median = quantile(needed, 0.5);
      ts.q1 = quantile(needed, 0.25);
      ts.q3 = quantile(needed, 0.75);
      ts.reached = settings.seeds > 0 ? double(reached) / settings.seeds : 0;
      eval.thresholds.push_back(ts);
    }
    for (int b : settings.budgets) {
      if (b > settings.max_evals) continue;
      BudgetStats bs;
      bs.budget = b;
      double sum = 0;
      int good = 0;
      for (const auto& traj : eval.trajectories) {
        const double f = at(traj, b);
        sum += f;
        good += f >= 0.95 - 1e-12 ? 1 : 0;
      }
      bs.mean_fraction = settings.seeds > 0 ? sum / settings.seeds : 0;
      bs.reached_95 = settings.seeds > 0 ? double(good) / settings.seeds : 0;
      eval.budgets.push_back(bs);
    }
    report.strategies.push_back(std::move(eval));
  }
  return report;
}

void to_json(nlohmann::json& j, const ThresholdStats& t) {
  j = {{"threshold", t.threshold},
       {"median_evals", finite_or_null(t.median)},
       {"q1_evals", finite_or_null(t.q1)},
       {"q3_evals", finite_or_null(t.q3)},
       {"reached", t.reached}};
}

void to_json(nlohmann::json& j, const BudgetStats& b) {
  j = {{"budget", b.budget}, {"mean_fraction", b.mean_fraction}, {"reached_95", b.reached_95}};
}

void to_json(nlohmann::json& j, const StrategyEval& s) {
  j = {{"strategy", s.strategy},
       {"thresholds", s.thresholds},
       {"budgets", s.budgets},
       {"seconds", s.seconds}};
}

void to_json(nlohmann::json& j, const StrategyEvalReport& r) {
  j = {{"problem", r.problem},
       {"space_size", r.space_size},
       {"valid", r.valid},
       {"optimum_ms", r.optimum_ms},
       {"optimum", configuration_to_json(r.optimum)},
       {"strategies", r.strategies}};
}

}  // namespace gemmtune
