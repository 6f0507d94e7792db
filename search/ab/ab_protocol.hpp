// SPDX-License-Identifier: Apache-2.0
// The A/B keep-or-revert protocol: a baseline configuration and a changed one are measured
// interleaved (A B A B ...), both verified by the evaluator, and the change is kept only when it
// is faster beyond the threshold and the measured noise, or when it ties and is the simpler
// configuration. Every decision is recorded with both measurements, their bottleneck indicators
// and the reason in words, as a Markdown changelog row and as a JSON line.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/eval/evaluator.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

struct DatabaseDevice;
struct DeviceProfile;

// ---- "simpler" ----
//
// Simplicity is an ordered comparison over ranks; the first rank on which two configurations
// differ decides, and on each rank the smaller value is simpler. A rank's value is the sum of its
// terms, each term a product of roles (kernel_spec.hpp: what the template declares a parameter
// to be); a term counts only when the configuration has every role it names, so one table serves
// every template. The ranks, in order:
//   1. local-memory buffers   local_buffer_a + local_buffer_b (xgemm's SA + SB, xgemm_fast's
//                             LDS twice), stages (xgemm_fast: LDS * STAGES)
//   2. padding and swizzling  pad_a + pad_b, swizzle
//   3. unroll                 unroll_k
//   4. vector width           vector_m * vector_n
//   5. work-group tile        tile_m * tile_n
//   6. K slice                tile_k
//   7. optional features      prefetch, stride_m + stride_n, group_m, split_k
// Parameters in no role of the table (work-group shapes such as MDIMC) never make a configuration
// simpler: two configurations that differ only there are equally simple.
struct SimplicityRank {
  std::string name;     // "local-memory buffers"
  std::string smaller;  // how the simpler side reads in words: "fewer local-memory buffers"
  std::vector<std::vector<Role>> terms;
};

// The declared table above.
const std::vector<SimplicityRank>& simplicity_ranks();

// A rank's value for a configuration's roles; nullopt when none of its terms applies.
std::optional<int64_t> simplicity_value(const SimplicityRank& rank, const RoleValues& roles);

struct SimplicityComparison {
  int order = 0;     // < 0: the first configuration is simpler, > 0: the second, 0: equally simple
  std::string rank;  // the deciding rank's name ("" when equally simple)
  std::string smaller;
  int64_t first_value = 0, second_value = 0;
  // "fewer local-memory buffers (1 < 2)" / "equally simple"
  std::string describe() const;
};

// Compares two configurations of the template `spec` declares, by its roles; `context` holds what
// the role expressions may read besides the parameters (ELEM_BYTES). Without a declaration
// (`spec` null) the roles are read by the conventional parameter names (conventional_role).
SimplicityComparison compare_simplicity(const Configuration& first, const Configuration& second,
                                        const KernelSpec* spec = nullptr,
                                        const Context& context = {});

// ---- decision ----

struct AbSettings {
  double threshold = 0.02;  // relative speed-up a change must exceed to be kept
  int min_pairs = 5;
  int max_pairs = 20;  // more pairs are measured, up to this, while the result is within noise
  // Throws Error (invalid argument) naming the bad setting.
  void validate() const;
};

// One interleaved pair: the per-call median times of the baseline and of the change.
struct AbPair {
  double baseline_ms = 0;
  double change_ms = 0;
};

struct AbStatistics {
  int pairs = 0;
  // Speed-up of the change over the baseline: exp(median over pairs of ln(t_base / t_change)) - 1;
  // positive when the change is faster.
  double gain = 0;
  // Robust standard deviation (1.4826 x MAD) of one pair's ln(t_base / t_change).
  double paired_spread = 0;
  // sqrt((cv_base^2 + cv_change^2) / 2) of the per-call times of each side.
  double pooled_cv = 0;
  // Half-width of an approximate 95% interval of the gain: 2 * max(paired_spread, pooled_cv) /
  // sqrt(pairs). Taking the larger of the two keeps a lucky run of similar pairs from passing for
  // a precise measurement.
  double noise = 0;
  // What the gain must exceed, either way: max(threshold, noise).
  double margin = 0;
};

// Statistics of the pairs measured so far (at least one pair, every time positive).
AbStatistics ab_statistics(const std::vector<AbPair>& pairs, double threshold);

// Whether another pair should be measured: fewer than min_pairs, or the noise is wider than the
// threshold and the gain lies within it (more pairs can still resolve it), below max_pairs.
bool needs_more_pairs(const AbStatistics& stats, const AbSettings& settings);

enum class Decision { kKeep, kRevert };
enum class DecisionReason {
  kFaster,          // faster beyond the margin: keep
  kSlower,          // slower beyond the margin: revert
  kTieSimpler,      // within the margin and simpler: keep
  kTieNotSimpler,   // within the margin, not simpler: revert
  kChangeFailed,    // the change is invalid, failed to build or run, or computes a wrong result
  kBaselineFailed,  // the baseline itself failed: nothing to compare against (revert)
  // Refinement only: a tie (and simpler) that would return to a configuration left earlier for a
  // measured win; a tie does not undo a win, so it is reverted.
  kTieRevisit,
};

std::string to_string(Decision d);        // "KEEP", "REVERT"
std::string to_string(DecisionReason r);  // "faster", "slower", "tie_simpler", ...
Decision parse_decision(const std::string& s);
DecisionReason parse_decision_reason(const std::string& s);

struct AbVerdict {
  Decision decision = Decision::kRevert;
  DecisionReason reason = DecisionReason::kTieNotSimpler;
  std::string explanation;  // the reason in words
};

// The decision on measured statistics. `change_vs_baseline` compares the change (first) with the
// baseline (second).
AbVerdict decide(const AbStatistics& stats, const SimplicityComparison& change_vs_baseline);

// ---- bottleneck indicators ----

struct Indicator {
  std::string name;  // "lds_bytes", "work_group_size", "occupancy", ...
  double value = 0;
  std::string text;  // the value in words with its unit and verdict, when known
};

struct Indicators {
  std::vector<Indicator> items;
  std::string source;  // what computed them ("kernel spec estimate", ...)
  std::optional<double> get(const std::string& name) const;
};

// Computes the bottleneck indicators of one configuration; `measured` is the evaluator's last
// result for it (null when it failed before running). This is the seam where a fuller bottleneck
// report plugs in.
using IndicatorFunction =
    std::function<Indicators(const Problem& problem, const Configuration&, const Result* measured)>;

// The bottleneck report's items (src/report/report.hpp: LDS, registers, occupancy, wave
// utilization, MWI x NWI, vector width, arithmetic intensity, parallelism, fraction of peak) for
// the configuration as measured, plus the work-group size from the spec. `profile` may be null (the
// device figures are then unknown); `spec` and `profile` must outlive the function.
IndicatorFunction report_indicator_function(const KernelSpec& spec, const DeviceProfile* profile,
                                            const DatabaseDevice& device);

// ---- one A/B comparison ----

struct AbSide {
  Configuration config;
  Status status = Status::kOk;
  std::string message;           // why it failed, when it did
  std::vector<double> times_ms;  // per-call median times, one per pair
  double median_ms = 0;
  double gflops = 0;         // at the median time
  double gflops_spread = 0;  // robust standard deviation of the per-call GFLOPS
  double max_error = 0, tolerance = 0;
  Indicators indicators;
};

// Sets median_ms, gflops and gflops_spread from times_ms.
void summarize_side(AbSide& side, double flops);

struct AbRecord {
  std::string date;                     // ISO 8601 UTC, when decided
  std::string kernel = kDefaultKernel;  // the template compared (its spec's, when given)
  Problem problem;
  std::string change;  // "KWI 2->4"
  AbSide baseline, changed;
  AbStatistics stats;
  SimplicityComparison simplicity;  // the change (first) against the baseline (second)
  Decision decision = Decision::kRevert;
  DecisionReason reason = DecisionReason::kTieNotSimpler;
  std::string explanation;
  int evaluations = 0;

  const Configuration& kept() const {
    return decision == Decision::kKeep ? changed.config : baseline.config;
  }
};

// "KWI 2->4, VWM 2->4" for the parameters that differ (a parameter only in one: "X -->4").
std::string describe_change(const Configuration& before, const Configuration& after);

// Runs the protocol: pairs of evaluate() calls (baseline first), at least min_pairs, more while
// needs_more_pairs(), and decides. A change that fails stops at once with a revert naming its
// status and message; so does a failing baseline (reason kBaselineFailed). `stop_early` is asked
// before each pair beyond min_pairs (a budget running out) and ends the measuring when true.
// `spec`, the template of both configurations, declares the roles a tie's simplicity is judged
// by (null: the conventional parameter names).
AbRecord run_ab(Evaluator& evaluator, const KernelSpec* spec, const Problem& problem,
                const Configuration& baseline, const Configuration& change,
                const AbSettings& settings, const IndicatorFunction& indicators = {},
                const std::function<bool()>& stop_early = {});
// The same without a declaration.
inline AbRecord run_ab(Evaluator& evaluator, const Problem& problem, const Configuration& baseline,
                       const Configuration& change, const AbSettings& settings,
                       const IndicatorFunction& indicators = {},
                       const std::function<bool()>& stop_early = {}) {
  return run_ab(evaluator, nullptr, problem, baseline, change, settings, indicators, stop_early);
}

// An evaluator that first checks each configuration against the kernel declaration (constraints
// and `limits`) and answers kInvalid / kDeviceLimit with the reason, so that a refused change
// reads the same whatever the evaluator behind (a replay file only knows what it recorded).
class CheckedEvaluator : public Evaluator {
 public:
  CheckedEvaluator(std::unique_ptr<Evaluator> inner, const KernelSpec& spec, DeviceLimits limits);
  Result evaluate(const Problem& problem, const Configuration& config) override;
  void prepare(const Problem& problem, const std::vector<Configuration>& upcoming) override {
    inner_->prepare(problem, upcoming);
  }
  std::string description() const override { return inner_->description(); }
  Evaluator& inner() { return *inner_; }

 private:
  std::unique_ptr<Evaluator> inner_;
  const KernelSpec& spec_;
  DeviceLimits limits_;
};

// ---- logs ----

// Lines written above a changelog's table: "- command: `...`", "- device: ...".
struct ChangelogHeader {
  std::string title = "A/B changelog";
  std::vector<std::pair<std::string, std::string>> fields;  // (name, value) in order
};

// One Markdown table row for `record`: date | change | result | decision | indicators.
std::string markdown_row(const AbRecord& record);
// The table's header and separator lines.
std::string markdown_table_head();

// A Markdown changelog: a new file starts with the title, the header fields and the table head;
// an existing file gets a new section for this run. Each append rewrites the file atomically.
class MarkdownChangelog {
 public:
  MarkdownChangelog(std::string path, const ChangelogHeader& header);
  const std::string& path() const { return path_; }
  void append(const AbRecord& record);
  // A paragraph after the table (e.g. the outcome of a refinement); a later row starts a new
  // table.
  void note(const std::string& text);

 private:
  void write(const std::string& addition);
  std::string path_;
  bool table_open_ = false;
  bool after_note_ = false;  // the file ends with a note's paragraph
};

// The decisions as JSON lines: appended and synced to disk one decision at a time, so that an
// interrupted run keeps every decision it made.
class DecisionLog {
 public:
  explicit DecisionLog(const std::string& path);
  ~DecisionLog();
  DecisionLog(const DecisionLog&) = delete;
  DecisionLog& operator=(const DecisionLog&) = delete;
  const std::string& path() const { return path_; }
  void append(const AbRecord& record);
  // Any other line (a run header, a summary); `line` gets no fields added.
  void append_json(const nlohmann::json& line);

 private:
  std::string path_;
  int fd_ = -1;
};

void to_json(nlohmann::json& j, const SimplicityComparison& c);
void from_json(const nlohmann::json& j, SimplicityComparison& c);
void to_json(nlohmann::json& j, const AbSettings& s);
void from_json(const nlohmann::json& j, AbSettings& s);
void to_json(nlohmann::json& j, const AbStatistics& s);
void from_json(const nlohmann::json& j, AbStatistics& s);
void to_json(nlohmann::json& j, const Indicators& i);
void from_json(const nlohmann::json& j, Indicators& i);
void to_json(nlohmann::json& j, const AbSide& s);
void from_json(const nlohmann::json& j, AbSide& s);
void to_json(nlohmann::json& j, const AbRecord& r);
void from_json(const nlohmann::json& j, AbRecord& r);

}  // namespace gemmtune
