#include "search/ab/ab_protocol.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/db/database.hpp"
#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/report/report.hpp"

namespace gemmtune {

// ---- "simpler" ----

const std::vector<SimplicityRank>& simplicity_ranks() {
  static const std::vector<SimplicityRank> ranks = {
      {"local-memory buffers", "fewer local-memory buffers", {{"SA"}, {"SB"}, {"STAGES"}}},
      {"padding", "less padding or swizzling", {{"PADA"}, {"PADB"}, {"SWZ"}}},
      {"unroll", "a smaller unroll", {{"KWI"}, {"KWID"}}},
      {"vector width", "narrower vectors", {{"VWM", "VWN"}, {"VWMD", "VWND"}}},
      {"tile", "a smaller work-group tile", {{"MWG", "NWG"}, {"WGD", "WGD"}}},
      {"K slice", "a smaller K slice", {{"KWG"}}},
      {"optional features",
       "fewer optional features",
       {{"PREFETCH"}, {"STRM"}, {"STRN"}, {"GROUPM"}, {"SPLITK"}}},
  };
  return ranks;
}

std::optional<int64_t> simplicity_value(const SimplicityRank& rank, const Configuration& config) {
  std::optional<int64_t> sum;
  for (const auto& term : rank.terms) {
    int64_t product = 1;
    bool applies = true;
    for (const auto& name : term) {
      auto it = config.find(name);
      if (it == config.end()) {
        applies = false;
        break;
      }
      product *= it->second;
    }
    if (applies) sum = sum.value_or(0) + product;
  }
  return sum;
}

std::string SimplicityComparison::describe() const {
  if (order == 0) return "equally simple";
  return fmt::format("{} ({} {} {})", smaller, first_value, order < 0 ? "<" : ">", second_value);
}

SimplicityComparison compare_simplicity(const Configuration& first, const Configuration& second) {
  SimplicityComparison c;
  for (const auto& rank : simplicity_ranks()) {
    const auto a = simplicity_value(rank, first);
    const auto b = simplicity_value(rank, second);
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

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Robust standard deviation: 1.4826 x the median absolute deviation (equals the standard
// deviation for normal data, ignores a few outliers).
double robust_sd(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = median_of(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return 1.4826 * median_of(dev);
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
  s.gain = std::exp(median_of(log_ratios)) - 1;
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

// ---- bottleneck indicators ----

std::optional<double> Indicators::get(const std::string& name) const {
  for (const auto& i : items) {
    if (i.name == name) return i.value;
  }
  return std::nullopt;
}

Indicators spec_indicators(const KernelSpec& spec, const Problem& problem,
                           const Configuration& config, const Result* measured) {
  Indicators out;
  out.source = "kernel spec estimate";
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  auto add = [&](const std::string& name, std::optional<int64_t> v) {
    if (v) out.items.push_back({name, static_cast<double>(*v), std::to_string(*v)});
  };
  add("lds_bytes", spec.local_mem_bytes(config, ctx));
  add("work_group_size", spec.work_group_size(config, ctx));
  add("registers_estimate", spec.registers(config, ctx));
  const auto mwi = spec.value_of("MWI", config, ctx), nwi = spec.value_of("NWI", config, ctx);
  if (mwi && nwi) add("outputs_per_work_item", *mwi * *nwi);
  // The vector-width product: every parameter named VW* (VWM, VWN, VWMD, ...).
  std::optional<int64_t> vw;
  for (const auto& [name, value] : config) {
    if (name.rfind("VW", 0) == 0) vw = vw.value_or(1) * value;
  }
  add("vector_width_product", vw);
  if (measured) {
    const auto& u = measured->usage;
    add("lds_bytes_measured", u.local_mem_bytes);
    add("private_bytes_measured", u.private_mem_bytes);
    add("registers_measured", u.registers);
    add("spills_measured", u.spills);
    if (!u.source.empty() && (u.local_mem_bytes || u.private_mem_bytes || u.registers)) {
      out.source += ", measured: " + u.source;
    }
  }
  return out;
}

IndicatorFunction spec_indicator_function(const KernelSpec& spec) {
  return [&spec](const Problem& p, const Configuration& c, const Result* r) {
    return spec_indicators(spec, p, c, r);
  };
}

IndicatorFunction report_indicator_function(const KernelSpec& spec, const DeviceProfile* profile,
                                            const DatabaseDevice& device) {
  return [&spec, profile, device](const Problem& problem, const Configuration& config,
                                  const Result* measured) {
    Result r;
    if (measured) {
      r = *measured;
    } else {
      r.config = config;
    }
    const DatabaseEntry entry = DatabaseEntry::from_result(problem, r, Provenance{});
    const EntryReport report = analyze_entry(entry, &spec, profile, device);
    Indicators out;
    out.source = "bottleneck report";
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    if (auto wg = spec.work_group_size(config, ctx)) {
      out.items.push_back({"work_group_size", static_cast<double>(*wg), std::to_string(*wg)});
    }
    for (const auto& item : report.items) {
      if (!item.value) continue;
      std::string text = item.value_text;
      if (item.verdict != Verdict::kUnknown) text += " [" + to_string(item.verdict) + "]";
      out.items.push_back({item.id, *item.value, text});
    }
    return out;
  };
}

// ---- one A/B comparison ----

void summarize_side(AbSide& side, double flops) {
  side.median_ms = median_of(side.times_ms);
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

AbRecord run_ab(Evaluator& evaluator, const Problem& problem, const Configuration& baseline,
                const Configuration& change, const AbSettings& settings,
                const IndicatorFunction& indicators, const std::function<bool()>& stop_early) {
  settings.validate();
  AbRecord rec;
  rec.problem = problem;
  rec.change = describe_change(baseline, change);
  rec.baseline.config = baseline;
  rec.changed.config = change;
  rec.simplicity = compare_simplicity(change, baseline);
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

// ---- logs ----

namespace {

// Table cells hold one line without pipes.
std::string cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  constexpr size_t kMax = 240;
  if (out.size() > kMax) out = out.substr(0, kMax) + "...";
  return out;
}

std::string side_rate(const AbSide& s) {
  if (s.status != Status::kOk) return to_string(s.status);
  if (s.times_ms.empty()) return "not measured";
  return fmt::format("{:.2f} ± {:.2f}", s.gflops, s.gflops_spread);
}

std::string format_number(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.3g}", v);
}

std::string indicator_cell(const AbRecord& r) {
  // Names of the spec estimate and of the bottleneck report; only those present are shown.
  static const std::vector<std::pair<std::string, std::string>> labels = {
      {"lds_bytes", "LDS B"},
      {"lds", "LDS B"},
      {"work_group_size", "WG"},
      {"registers_estimate", "regs est"},
      {"registers", "regs"},
      {"occupancy", "waves/SIMD"},
      {"outputs_per_work_item", "MWI×NWI"},
      {"work_per_thread", "MWI×NWI"},
      {"vector_width_product", "VW"},
      {"vector_width", "VW"},
      {"spills_measured", "spills"},
  };
  std::string out;
  for (const auto& [name, label] : labels) {
    const auto a = r.baseline.indicators.get(name), b = r.changed.indicators.get(name);
    if (!a && !b) continue;
    const std::string va = a ? format_number(*a) : "?", vb = b ? format_number(*b) : "?";
    if (!out.empty()) out += ", ";
    out += label + " " + (va == vb ? va : va + "→" + vb);
  }
  return out.empty() ? "-" : out;
}

}  // namespace

std::string markdown_table_head() {
  return "| Date | Change | Result (GFLOPS, baseline → change) | Decision | Indicators "
         "(baseline → change) |\n"
         "|---|---|---|---|---|\n";
}

std::string markdown_row(const AbRecord& r) {
  std::string result = side_rate(r.baseline) + " → " + side_rate(r.changed);
  if (r.reason != DecisionReason::kChangeFailed && r.reason != DecisionReason::kBaselineFailed) {
    result += fmt::format(" ({:+.1f}%, noise ±{:.1f}%, {} pairs)", 100 * r.stats.gain,
                          100 * r.stats.noise, r.stats.pairs);
  }
  const std::string decision = "**" + to_string(r.decision) + "**: " + r.explanation;
  return fmt::format("| {} | `{}` | {} | {} | {} |\n", cell(r.date), cell(r.change), cell(result),
                     cell(decision), cell(indicator_cell(r)));
}

MarkdownChangelog::MarkdownChangelog(std::string path, const ChangelogHeader& header)
    : path_(std::move(path)) {
  std::error_code ec;
  const bool fresh =
      !std::filesystem::exists(path_, ec) || std::filesystem::file_size(path_, ec) == 0;
  std::string text = fresh ? "# " + header.title + "\n\n" : "\n## " + header.title + "\n\n";
  for (const auto& [name, value] : header.fields) text += "- " + name + ": " + value + "\n";
  if (!header.fields.empty()) text += "\n";
  write(text);
}

void MarkdownChangelog::write(const std::string& addition) {
  std::error_code ec;
  std::string content;
  if (std::filesystem::exists(path_, ec)) content = read_text_file(path_);
  write_file_atomic(path_, content + addition);
}

void MarkdownChangelog::append(const AbRecord& record) {
  std::string text;
  // A table needs a blank line between it and a paragraph above.
  if (!table_open_) text = (after_note_ ? "\n" : "") + markdown_table_head();
  table_open_ = true;
  after_note_ = false;
  write(text + markdown_row(record));
}

void MarkdownChangelog::note(const std::string& text) {
  write((table_open_ || after_note_ ? "\n" : "") + text + "\n");
  table_open_ = false;
  after_note_ = true;
}

DecisionLog::DecisionLog(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw invalid_file(path, std::string("cannot open for appending: ") + std::strerror(errno));
}

DecisionLog::~DecisionLog() {
  if (fd_ >= 0) ::close(fd_);
}

void DecisionLog::append_json(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw invalid_file(path_, std::string("cannot append: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd_);
}

void DecisionLog::append(const AbRecord& record) {
  nlohmann::json j = record;
  j["type"] = "decision";
  append_json(j);
}

// ---- JSON ----

void to_json(nlohmann::json& j, const SimplicityComparison& c) {
  j = {{"order", c.order},
       {"rank", c.rank},
       {"smaller", c.smaller},
       {"change_value", c.first_value},
       {"baseline_value", c.second_value},
       {"words", c.describe()}};
}

void from_json(const nlohmann::json& j, SimplicityComparison& c) {
  c.order = j.value("order", 0);
  c.rank = j.value("rank", "");
  c.smaller = j.value("smaller", "");
  c.first_value = j.value("change_value", int64_t{0});
  c.second_value = j.value("baseline_value", int64_t{0});
}

void to_json(nlohmann::json& j, const AbSettings& s) {
  j = {{"threshold", s.threshold}, {"min_pairs", s.min_pairs}, {"max_pairs", s.max_pairs}};
}

void from_json(const nlohmann::json& j, AbSettings& s) {
  s.threshold = j.value("threshold", 0.02);
  s.min_pairs = j.value("min_pairs", 5);
  s.max_pairs = j.value("max_pairs", 20);
}

void to_json(nlohmann::json& j, const AbStatistics& s) {
  j = {{"pairs", s.pairs},         {"gain", s.gain},   {"paired_spread", s.paired_spread},
       {"pooled_cv", s.pooled_cv}, {"noise", s.noise}, {"margin", s.margin}};
}

void from_json(const nlohmann::json& j, AbStatistics& s) {
  s.pairs = j.value("pairs", 0);
  s.gain = j.value("gain", 0.0);
  s.paired_spread = j.value("paired_spread", 0.0);
  s.pooled_cv = j.value("pooled_cv", 0.0);
  s.noise = j.value("noise", 0.0);
  s.margin = j.value("margin", 0.0);
}

void to_json(nlohmann::json& j, const Indicators& i) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& item : i.items) {
    nlohmann::json e = {{"name", item.name}, {"value", item.value}};
    if (!item.text.empty()) e["text"] = item.text;
    items.push_back(e);
  }
  j = {{"source", i.source}, {"items", items}};
}

void from_json(const nlohmann::json& j, Indicators& i) {
  i = Indicators{};
  i.source = j.value("source", "");
  for (const auto& e : j.value("items", nlohmann::json::array())) {
    i.items.push_back(
        {e.at("name").get<std::string>(), e.at("value").get<double>(), e.value("text", "")});
  }
}

void to_json(nlohmann::json& j, const AbSide& s) {
  j = {{"config", configuration_to_json(s.config)},
       {"status", to_string(s.status)},
       {"times_ms", s.times_ms},
       {"median_ms", s.median_ms},
       {"gflops", s.gflops},
       {"gflops_spread", s.gflops_spread},
       {"max_error", s.max_error},
       {"tolerance", s.tolerance},
       {"indicators", s.indicators}};
  if (!s.message.empty()) j["message"] = s.message;
}

void from_json(const nlohmann::json& j, AbSide& s) {
  s.config = configuration_from_json(j.at("config"));
  s.status = parse_status(j.value("status", "ok"));
  s.message = j.value("message", "");
  s.times_ms = j.value("times_ms", std::vector<double>{});
  s.median_ms = j.value("median_ms", 0.0);
  s.gflops = j.value("gflops", 0.0);
  s.gflops_spread = j.value("gflops_spread", 0.0);
  s.max_error = j.value("max_error", 0.0);
  s.tolerance = j.value("tolerance", 0.0);
  if (j.contains("indicators")) s.indicators = j.at("indicators").get<Indicators>();
}

void to_json(nlohmann::json& j, const AbRecord& r) {
  j = {{"date", r.date},
       {"problem", r.problem},
       {"change", r.change},
       {"baseline", r.baseline},
       {"changed", r.changed},
       {"stats", r.stats},
       {"simplicity", r.simplicity},
       {"decision", to_string(r.decision)},
       {"reason", to_string(r.reason)},
       {"explanation", r.explanation},
       {"evaluations", r.evaluations}};
}

void from_json(const nlohmann::json& j, AbRecord& r) {
  r.date = j.value("date", "");
  r.problem = j.at("problem").get<Problem>();
  r.change = j.value("change", "");
  r.baseline = j.at("baseline").get<AbSide>();
  r.changed = j.at("changed").get<AbSide>();
  r.stats = j.value("stats", nlohmann::json::object()).get<AbStatistics>();
  r.simplicity = j.value("simplicity", nlohmann::json::object()).get<SimplicityComparison>();
  r.decision = parse_decision(j.at("decision").get<std::string>());
  r.reason = parse_decision_reason(j.at("reason").get<std::string>());
  r.explanation = j.value("explanation", "");
  r.evaluations = j.value("evaluations", 0);
}

}  // namespace gemmtune
