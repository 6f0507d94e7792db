// SPDX-License-Identifier: Apache-2.0
// The A/B protocol (search/ab/ab_protocol.hpp): what "simpler" means, the statistics and the
// decision, and one interleaved comparison. Indicators, logs and JSON forms are in ab_*.cpp.
#include "search/ab/ab_protocol.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/timing_stats.hpp"
#include "src/db/database.hpp"

namespace gemmtune {

// ---- "simpler" ----

const std::vector<SimplicityRank>& simplicity_ranks() {
  using R = Role;
  static const std::vector<SimplicityRank> ranks = {
      {"local-memory buffers",
       "fewer local-memory buffers",
       {{R::kLocalBufferA}, {R::kLocalBufferB}, {R::kStages}}},
      {"padding", "less padding or swizzling", {{R::kPadA}, {R::kPadB}, {R::kSwizzle}}},
      {"unroll", "a smaller unroll", {{R::kUnrollK}}},
      {"vector width", "narrower vectors", {{R::kVectorM, R::kVectorN}}},
      {"tile", "a smaller work-group tile", {{R::kTileM, R::kTileN}}},
      {"K slice", "a smaller K slice", {{R::kTileK}}},
      {"optional features",
       "fewer optional features",
       {{R::kPrefetch}, {R::kStrideM}, {R::kStrideN}, {R::kGroupM}, {R::kSplitK}}},
  };
  return ranks;
}

std::optional<int64_t> simplicity_value(const SimplicityRank& rank, const RoleValues& roles) {
  std::optional<int64_t> sum;
  for (const auto& term : rank.terms) {
    int64_t product = 1;
    bool applies = true;
    for (const Role role : term) {
      const std::optional<int64_t> v = roles.get(role);
      if (!v) {
        applies = false;
        break;
      }
      product *= *v;
    }
    if (applies) sum = sum.value_or(0) + product;
  }
  return sum;
}

std::string SimplicityComparison::describe() const {
  if (order == 0) return "equally simple";
  return fmt::format("{} ({} {} {})", smaller, first_value, order < 0 ? "<" : ">", second_value);
}

SimplicityComparison compare_simplicity(const Configuration& first, const Configuration& second,
                                        const KernelSpec* spec, const Context& context) {
  SimplicityComparison c;
  const RoleValues first_roles(spec, first, context), second_roles(spec, second, context);
  for (const auto& rank : simplicity_ranks()) {
    const auto a = simplicity_value(rank, first_roles);
    const auto b = simplicity_value(rank, second_roles);
    if (!a && !b) continue;
    // A rank that applies to one side only (configurations of different templates) counts as 0
    // on the other.
    const int64_t va = a.value_or(0), vb = b.value_or(0);
    if (va == vb) continue;
    c.order = va < vb ? -1 : 1;
    c.rank = rank.name;
    c.smaller = rank.smaller;
    c.first_value = va;
    c.second_value = vb;
    return c;
  }
  return c;
}

// ---- decision ----

void AbSettings::validate() const {
  if (!(threshold >= 0 && threshold < 1)) {
    throw invalid_argument(
        fmt::format("the threshold must be in [0%, 100%) (got {:g}%)", 100 * threshold));
  }
  if (min_pairs < 1) {
    throw invalid_argument(fmt::format("--min-pairs must be at least 1 (got {})", min_pairs));
  }
  if (max_pairs < min_pairs) {
    throw invalid_argument(
        fmt::format("--max-pairs ({}) must not be below --min-pairs ({})", max_pairs, min_pairs));
  }
}

namespace {

// Robust standard deviation: 1.4826 x the median absolute deviation (equals the standard
// deviation for normal data, ignores a few outliers).
double robust_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return 1.4826 * median(dev);
}

double coefficient_of_variation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= double(v.size());
  if (mean <= 0) return 0;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / double(v.size() - 1)) / mean;
}

std::string percent(double fraction) {
  return fmt::format("{:.1f}%", 100 * fraction);
}

}  // namespace

AbStatistics ab_statistics(const std::vector<AbPair>& pairs, double threshold) {
  if (pairs.empty()) throw Error(ErrorCode::kInternal, "A/B statistics of no pairs");
  std::vector<double> log_ratios, base, change;
  for (const auto& p : pairs) {
    if (!(p.baseline_ms > 0) || !(p.change_ms > 0)) {
      throw Error(ErrorCode::kInternal,
                  fmt::format("A/B pair with a non-positive time ({} ms, {} ms)", p.baseline_ms,
                              p.change_ms));
    }
    log_ratios.push_back(std::log(p.baseline_ms / p.change_ms));
    base.push_back(p.baseline_ms);
    change.push_back(p.change_ms);
  }
  AbStatistics s;
  s.pairs = static_cast<int>(pairs.size());
  s.gain = std::exp(median(log_ratios)) - 1;
  s.paired_spread = robust_sd(log_ratios);
  const double cv_a = coefficient_of_variation(base), cv_b = coefficient_of_variation(change);
  s.pooled_cv = std::sqrt(0.5 * (cv_a * cv_a + cv_b * cv_b));
  s.noise = 2 * std::max(s.paired_spread, s.pooled_cv) / std::sqrt(double(s.pairs));
  s.margin = std::max(threshold, s.noise);
  return s;
}

bool needs_more_pairs(const AbStatistics& stats, const AbSettings& settings) {
  if (stats.pairs < settings.min_pairs) return true;
  if (stats.pairs >= settings.max_pairs) return false;
  return stats.noise > settings.threshold && std::fabs(stats.gain) <= stats.noise;
}

std::string to_string(Decision d) {
  return d == Decision::kKeep ? "KEEP" : "REVERT";
}

std::string to_string(DecisionReason r) {
  switch (r) {
    case DecisionReason::kFaster:
      return "faster";
    case DecisionReason::kSlower:
      return "slower";
    case DecisionReason::kTieSimpler:
      return "tie_simpler";
    case DecisionReason::kTieNotSimpler:
      return "tie_not_simpler";
    case DecisionReason::kChangeFailed:
      return "change_failed";
    case DecisionReason::kBaselineFailed:
      return "baseline_failed";
    case DecisionReason::kTieRevisit:
      return "tie_revisit";
  }
  return "unknown";
}

Decision parse_decision(const std::string& s) {
  if (s == "KEEP") return Decision::kKeep;
  if (s == "REVERT") return Decision::kRevert;
  throw invalid_argument("unknown A/B decision '" + s + "' (KEEP or REVERT)");
}

DecisionReason parse_decision_reason(const std::string& s) {
  for (auto r : {DecisionReason::kFaster, DecisionReason::kSlower, DecisionReason::kTieSimpler,
                 DecisionReason::kTieNotSimpler, DecisionReason::kChangeFailed,
                 DecisionReason::kBaselineFailed, DecisionReason::kTieRevisit}) {
    if (to_string(r) == s) return r;
  }
  throw invalid_argument("unknown A/B decision reason '" + s + "'");
}

AbVerdict decide(const AbStatistics& stats, const SimplicityComparison& change_vs_baseline) {
  AbVerdict v;
  // The margin is the noise when the noise is wider than the threshold.
  const bool noise_decides = stats.noise > 0 && stats.noise >= stats.margin;
  const std::string margin_words =
      fmt::format("the {} {}", percent(stats.margin), noise_decides ? "noise" : "threshold");
  if (stats.gain > stats.margin) {
    v.decision = Decision::kKeep;
    v.reason = DecisionReason::kFaster;
    v.explanation = fmt::format("faster by {}, beyond {} over {} pairs", percent(stats.gain),
                                margin_words, stats.pairs);
  } else if (stats.gain < -stats.margin) {
    v.decision = Decision::kRevert;
    v.reason = DecisionReason::kSlower;
    v.explanation = fmt::format("slower by {}, beyond {} over {} pairs", percent(-stats.gain),
                                margin_words, stats.pairs);
  } else if (change_vs_baseline.order < 0) {
    v.decision = Decision::kKeep;
    v.reason = DecisionReason::kTieSimpler;
    v.explanation =
        fmt::format("{:+.1f}% is within {} over {} pairs, and the change is simpler: {}",
                    100 * stats.gain, margin_words, stats.pairs, change_vs_baseline.describe());
  } else {
    v.decision = Decision::kRevert;
    v.reason = DecisionReason::kTieNotSimpler;
    v.explanation = fmt::format(
        "{:+.1f}% is within {} over {} pairs, and the change is not simpler ({})", 100 * stats.gain,
        margin_words, stats.pairs,
        change_vs_baseline.order == 0 ? "equally simple"
                                      : "the baseline has " + change_vs_baseline.smaller);
  }
  return v;
}

// ---- one A/B comparison ----

void summarize_side(AbSide& side, double flops) {
  side.median_ms = median(side.times_ms);
  side.gflops = side.median_ms > 0 ? flops / (side.median_ms * 1e6) : 0;
  std::vector<double> rates;
  for (double t : side.times_ms) rates.push_back(flops / (t * 1e6));
  side.gflops_spread = robust_sd(rates);
}

std::string describe_change(const Configuration& before, const Configuration& after) {
  std::string out;
  auto add = [&](const std::string& name, const std::string& from, const std::string& to) {
    if (!out.empty()) out += ", ";
    out += name + " " + from + "->" + to;
  };
  for (const auto& [name, value] : after) {
    auto it = before.find(name);
    if (it == before.end()) {
      add(name, "", std::to_string(value));
    } else if (it->second != value) {
      add(name, std::to_string(it->second), std::to_string(value));
    }
  }
  for (const auto& [name, value] : before) {
    if (!after.count(name)) add(name, std::to_string(value), "");
  }
  return out.empty() ? "no change" : out;
}

namespace {

// The time of one call: the median, else the time implied by the rate.
double call_time_ms(const Result& r, double flops) {
  if (r.time.median_ms > 0) return r.time.median_ms;
  if (r.gflops > 0) return flops / (r.gflops * 1e6);
  return 0;
}

std::string failure_words(const Result& r) {
  std::string words = to_string(r.status);
  if (r.status == Status::kWrongResult) {
    words += fmt::format(" (max error {:.3g}, tolerance {:.3g})", r.max_error, r.tolerance);
  }
  // A build log can run to many lines: its first line is enough in a decision.
  const std::string first = r.message.substr(0, r.message.find('\n'));
  if (!first.empty()) words += ": " + first;
  return words;
}

}  // namespace

AbRecord run_ab(Evaluator& evaluator, const KernelSpec* spec, const Problem& problem,
                const Configuration& baseline, const Configuration& change,
                const AbSettings& settings, const IndicatorFunction& indicators,
                const std::function<bool()>& stop_early) {
  settings.validate();
  AbRecord rec;
  if (spec) rec.kernel = spec->name();
  rec.problem = problem;
  rec.change = describe_change(baseline, change);
  rec.baseline.config = baseline;
  rec.changed.config = change;
  rec.simplicity = compare_simplicity(change, baseline, spec,
                                      {{"ELEM_BYTES", element_bytes(problem.precision)}});
  const double flops = problem.flops();

  std::optional<Result> last_base, last_change;
  std::vector<AbPair> pairs;
  std::optional<Result> failed_base, failed_change;
  while (true) {
    if (!pairs.empty()) {
      rec.stats = ab_statistics(pairs, settings.threshold);
      if (!needs_more_pairs(rec.stats, settings)) break;
      if (rec.stats.pairs >= settings.min_pairs && stop_early && stop_early()) break;
    }
    Result a = evaluator.evaluate(problem, baseline);
    ++rec.evaluations;
    const double ta = call_time_ms(a, flops);
    if (!a.ok() || !(ta > 0)) {
      if (a.ok()) a = Result::failure(baseline, Status::kRunFailed, "no timing was reported");
      failed_base = a;
      break;
    }
    last_base = a;
    Result b = evaluator.evaluate(problem, change);
    ++rec.evaluations;
    const double tb = call_time_ms(b, flops);
    if (!b.ok() || !(tb > 0)) {
      if (b.ok()) b = Result::failure(change, Status::kRunFailed, "no timing was reported");
      failed_change = b;
      break;
    }
    last_change = b;
    pairs.push_back({ta, tb});
    rec.baseline.times_ms.push_back(ta);
    rec.changed.times_ms.push_back(tb);
    spdlog::debug("A/B pair {}: baseline {:.4f} ms, change {:.4f} ms", pairs.size(), ta, tb);
  }

  summarize_side(rec.baseline, flops);
  summarize_side(rec.changed, flops);
  if (last_base) {
    rec.baseline.max_error = last_base->max_error;
    rec.baseline.tolerance = last_base->tolerance;
  }
  if (last_change) {
    rec.changed.max_error = last_change->max_error;
    rec.changed.tolerance = last_change->tolerance;
  }
  if (failed_base) {
    rec.baseline.status = failed_base->status;
    rec.baseline.message = failed_base->message;
    rec.decision = Decision::kRevert;
    rec.reason = DecisionReason::kBaselineFailed;
    rec.explanation =
        "the baseline failed, nothing to compare against: " + failure_words(*failed_base);
  } else if (failed_change) {
    rec.changed.status = failed_change->status;
    rec.changed.message = failed_change->message;
    rec.changed.max_error = failed_change->max_error;
    rec.changed.tolerance = failed_change->tolerance;
    rec.decision = Decision::kRevert;
    rec.reason = DecisionReason::kChangeFailed;
    rec.explanation = "the change failed: " + failure_words(*failed_change);
  } else {
    const AbVerdict v = decide(rec.stats, rec.simplicity);
    rec.decision = v.decision;
    rec.reason = v.reason;
    rec.explanation = v.explanation;
  }
  if (indicators) {
    rec.baseline.indicators = indicators(problem, baseline, last_base ? &*last_base : nullptr);
    rec.changed.indicators = indicators(problem, change, last_change ? &*last_change : nullptr);
  }
  rec.date = iso_utc_now();
  return rec;
}

CheckedEvaluator::CheckedEvaluator(std::unique_ptr<Evaluator> inner, const KernelSpec& spec,
                                   DeviceLimits limits)
    : inner_(std::move(inner)), spec_(spec), limits_(std::move(limits)) {}

Result CheckedEvaluator::evaluate(const Problem& problem, const Configuration& config) {
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  if (auto why = spec_.check(config, DeviceLimits{}, ctx)) {
    return Result::failure(config, Status::kInvalid, *why);
  }
  if (auto why = spec_.check(config, limits_, ctx)) {
    return Result::failure(config, Status::kDeviceLimit, *why);
  }
  return inner_->evaluate(problem, config);
}

}  // namespace gemmtune
