// SPDX-License-Identifier: Apache-2.0
#include "src/bench/bench_suite.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/bench/suite_internal.hpp"
#include "src/core/error.hpp"
#include "src/core/version.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

std::vector<Shape> default_suite_shapes() {
  return {{256, 256, 256},    {1000, 1000, 1000}, {1024, 1024, 1024}, {2048, 2048, 2048},
          {4096, 4096, 4096}, {4097, 4097, 4097}, {8192, 8192, 8192}, {128, 4096, 1024},
          {64, 4096, 4096},   {8192, 64, 8192}};
}

std::vector<Shape> memory_suite_shapes() {
  return {{1, 4096, 4096}, {1, 8192, 8192}, {8, 4096, 4096}, {16, 8192, 8192},
          {4096, 1, 4096}, {8192, 1, 8192}, {4096, 8, 4096}, {8192, 16, 8192}};
}

// Without the profile's figures: M or N at most this is a matrix times a few vectors.
constexpr int64_t kFewVectors = 16;

std::optional<MemoryBound> memory_bound(const Problem& p, const DeviceProfile* profile,
                                        const DeviceInfo& device) {
  const OperandBytes o = operand_bytes(p);
  MemoryBound m;
  // C is written once, and read first when beta is not 0.
  m.bytes = o.a + o.b + o.c * (p.beta != 0 ? 2 : 1) + o.bias;
  std::optional<double> peak;
  if (profile) {
    m.profile_gbs = profile->figure_if("memory_bandwidth_gbs").value_or(0);
    peak = peak_gflops(*profile, p.precision, device.compute_units, device.max_clock_mhz);
  }
  if (peak && *peak > 0 && m.profile_gbs > 0) {
    const double ridge = *peak / m.profile_gbs;  // flops per byte where the two limits meet
    const double intensity = p.flops() / m.bytes;
    if (intensity >= ridge) return std::nullopt;
    m.rule = fmt::format(
        "{:.2g} flops per byte, below the profile's {:.3g} ({:.0f} GFLOPS / {:.0f} GB/s)",
        intensity, ridge, *peak, m.profile_gbs);
    return m;
  }
  if (std::min(p.shape.m, p.shape.n) > kFewVectors) return std::nullopt;
  m.rule = fmt::format("M or N at most {} (the profile states no peak or bandwidth)", kFewVectors);
  return m;
}

std::vector<SuiteCase> batched_suite_cases() {
  return {{{32, 32, 32}, 1024}, {{256, 256, 256}, 64}};
}

std::vector<SuiteCase> named_suite(const std::string& name) {
  if (name == "standard") {
    std::vector<SuiteCase> cases;
    for (const auto& s : default_suite_shapes()) cases.push_back({s, 1});
    return cases;
  }
  if (name == "batched") return batched_suite_cases();
  if (name == "memory") {
    std::vector<SuiteCase> cases;
    for (const auto& s : memory_suite_shapes()) cases.push_back({s, 1});
    return cases;
  }
  throw invalid_argument("unknown suite '" + name + "' (expected standard, batched or memory)");
}

std::vector<std::string> default_suite_kernels() {
  return {"xgemm", "xgemm_direct", "xgemm_fast"};
}

bool clblast_linked() {
#if GEMMTUNE_HAVE_CLBLAST
  return true;
#else
  return false;
#endif
}

Problem SuiteRow::problem() const {
  Problem p;
  p.shape = shape;
  p.precision = precision;
  p.batch = batch;
  p.batch_layout = batch > 1 ? batch_layout : BatchLayout::kStrided;
  return p;
}

std::string SuiteRow::label() const {
  std::string s = shape.to_string() + " fp" + to_string(precision);
  if (batch > 1) s += " b" + std::to_string(batch) + " " + to_string(batch_layout);
  return epilogue ? s + " bias+ReLU" : s;
}

bool SuiteReport::all_ok() const {
  for (const auto& r : rows) {
    for (const SideResult* side : {&r.gemmtune, &r.library, &r.clblast}) {
      if (side->available && !side->ok()) return false;
    }
  }
  return true;
}

namespace {

using suite::ClEnv;
using suite::epilogue_kernels;
using suite::first_line;

// The rows of each case, in the order they run: precisions, then batch layouts, then the
// epilogue row of an FP32 single GEMM.
struct RowPlan {
  Problem problem;
  bool epilogue_too = false;
};

std::vector<RowPlan> plan_rows(const std::vector<SuiteCase>& cases,
                               const BenchSuiteOptions& options) {
  std::vector<RowPlan> out;
  for (const auto& c : cases) {
    for (Precision precision : options.precisions) {
      const std::vector<BatchLayout> layouts =
          c.batch > 1 ? options.batch_layouts : std::vector<BatchLayout>{BatchLayout::kStrided};
      for (BatchLayout layout : layouts) {
        RowPlan r;
        r.problem.shape = c.shape;
        r.problem.precision = precision;
        r.problem.batch = c.batch;
        r.problem.batch_layout = layout;
        r.epilogue_too = options.epilogue && precision == Precision::kFP32 && c.batch == 1;
        out.push_back(r);
      }
    }
  }
  return out;
}

}  // namespace

SuiteReport run_bench_suite(const Device& device, const DeviceProfile* profile,
                            const std::vector<NamedDatabase>& databases,
                            const BenchSuiteOptions& options_in) {
  BenchSuiteOptions options = options_in;
  std::vector<SuiteCase> cases = options.cases;
  if (!cases.empty() && (!options.shapes.empty() || options.batch != 1)) {
    throw invalid_argument("a suite of cases takes no separate shapes or batch count");
  }
  if (options.batch < 1) throw invalid_argument("--batch must be at least 1");
  if (cases.empty()) {
    for (const auto& s : options.shapes.empty() ? default_suite_shapes() : options.shapes) {
      cases.push_back({s, options.batch});
    }
  }
  if (options.kernels.empty()) options.kernels = default_suite_kernels();
  if (options.precisions.empty()) throw invalid_argument("no precision to run");
  if (options.batch_layouts.empty()) throw invalid_argument("no batch layout to run");
  if (options.reps < 1) throw invalid_argument("--reps must be at least 1");
  if (options.warmup < 0) throw invalid_argument("--warmup must be at least 0");
  if (options.sample_band < 1) throw invalid_argument("the sample band must be at least 1 row");
  bool batched = false;
  for (const auto& c : cases) {
    const Shape& s = c.shape;
    if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
      throw invalid_argument("shape " + s.to_string() + " has a dimension that is not positive");
    }
    if (c.batch < 1)
      throw invalid_argument("batch " + std::to_string(c.batch) + " of " + s.to_string() +
                             " is not positive");
    batched = batched || c.batch > 1;
  }

  ClEnv env(device, profile, options);
  // Unknown kernels are bad input: refuse them before measuring anything.
  for (const auto& k : options.kernels) env.spec(k);
  if (options.epilogue) epilogue_kernels(env);
  // So is a batch layout that none of the kernels computes: every such row would fail.
  for (BatchLayout layout : options.batch_layouts) {
    if (!batched) break;
    const bool any =
        std::any_of(options.kernels.begin(), options.kernels.end(),
                    [&](const auto& k) { return supports_batch(env.spec(k), layout); });
    if (!any) {
      std::string names;
      for (const auto& k : options.kernels) names += (names.empty() ? "" : ", ") + k;
      throw invalid_argument("none of the kernels (" + names + ") computes batched GEMMs in the " +
                             to_string(layout) + " layout");
    }
  }
  const std::vector<RowPlan> plan = plan_rows(cases, options);
  if (options.epilogue &&
      std::none_of(plan.begin(), plan.end(), [](const RowPlan& r) { return r.epilogue_too; })) {
    throw invalid_argument(
        "--epilogue adds rows to FP32 single GEMMs only, and the suite has none");
  }

  SuiteReport report;
  report.device = device.info;
  report.date = iso_utc_now();
  report.command = options.command;
  report.gemmtune_version = version();
  for (const auto& d : databases) {
    report.databases.push_back(d.name);
    if (!d.db.device.same_hardware(DatabaseDevice::from(device.info))) {
      spdlog::warn("{} was tuned on {}, not on {}", d.name, d.db.device.name, device.info.name);
    }
  }
  report.clblast = options.clblast && clblast_linked();
  if (!report.clblast) {
    report.clblast_note =
        options.clblast ? "CLBlast is not linked into this build" : "skipped on request";
  }
  std::optional<suite::ClblastParameters> clblast_parameters;
  if (!options.clblast_params.empty()) {
    if (!report.clblast) throw invalid_argument("--clblast-params needs the CLBlast column");
    clblast_parameters =
        suite::load_clblast_parameters(env.device().device, options.clblast_params);
    report.clblast_tuned = clblast_parameters->description + " (" + options.clblast_params + ")";
    spdlog::info("CLBlast tuned column: {}, interleaved with CLBlast's own parameters",
                 report.clblast_tuned);
  }
  report.reps = options.reps;
  report.warmup = options.warmup;
  const suite::LibrarySession library(databases);
  report.library_database = library.database;
  report.stale_entries = library.stale_entries();
  for (const auto& s : report.stale_entries) {
    spdlog::warn("stale database entries, passed over: {}", s);
  }

  for (const auto& r : plan) {
    suite::CaseData data(env, r.problem, options, r.epilogue_too);
    for (bool epilogue : {false, true}) {
      if (epilogue && !r.epilogue_too) continue;
      SuiteRow row =
          suite::run_suite_row(env, databases, options, library,
                               clblast_parameters ? &*clblast_parameters : nullptr, data, epilogue);
      auto side = [](const SideResult& s) {
        if (s.ok()) return fmt::format("{:.1f} GFLOPS", s.gflops);
        return s.available ? s.status : "n/a (" + first_line(s.message) + ")";
      };
      spdlog::info("{}: gemmtune {} {}, library {}, CLBlast {}{}{}", row.label(),
                   row.chosen ? row.chosen->kernel : "-", side(row.gemmtune), side(row.library),
                   side(row.clblast),
                   clblast_parameters ? ", CLBlast tuned " + side(row.clblast_tuned) : "",
                   row.ratio ? fmt::format(", ratio {:.2f}", *row.ratio) : "");
      report.rows.push_back(std::move(row));
    }
  }
  return report;
}

}  // namespace gemmtune
