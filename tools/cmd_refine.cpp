// SPDX-License-Identifier: Apache-2.0
// gemmtune refine: the A/B protocol applied automatically, one single change at a time, from a
// baseline to a configuration that no single change improves (see search/ab/refine.hpp).
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/ab/refine.hpp"
#include "src/core/error.hpp"
#include "src/db/database.hpp"
#include "tools/ab_options.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct RefineCommandOptions {
  std::string space = "full";
  int64_t max_evals = 0;
  double time_budget_s = 0;
};

std::string rate(const AbSide& s) {
  if (s.status != Status::kOk) return to_string(s.status);
  if (s.times_ms.empty()) return "-";
  return fmt::format("{:.2f}", s.gflops);
}

void run_refine_command(const GlobalOptions& global, const AbCommandOptions& o,
                        const RefineCommandOptions& r) {
  AbSession s = open_ab_session(global, o, "Refinement");
  const Context ctx{{"ELEM_BYTES", element_bytes(s.problem.precision)}};
  const ParamSpace space(*s.spec, r.space, s.limits, ctx);
  if (s.changelog) {
    s.changelog->note(fmt::format(
        "Single changes within the `{}` space of {}; budget: {}, {}.", r.space, s.kernel,
        r.max_evals > 0 ? fmt::format("{} evaluations", r.max_evals) : "no evaluation limit",
        r.time_budget_s > 0 ? fmt::format("{:g} s", r.time_budget_s) : "no time limit"));
  }
  if (auto why = space.check(s.baseline)) {
    spdlog::warn("the baseline is not valid in this space ({}); refining from it anyway", *why);
  }

  RefineOptions ro;
  ro.ab = s.settings;
  ro.max_evals = r.max_evals;
  ro.time_budget_s = r.time_budget_s;
  ro.indicators = s.indicators;
  if (!o.json) {
    std::cout << fmt::format("{:>3}  {:<28} {:>10} {:>10} {:>8} {:>7}  {}\n", "#", "change",
                             "before", "after", "gain %", "noise %", "decision");
  }
  int n = 0;
  ro.on_decision = [&](const AbRecord& rec) {
    s.record(rec);
    ++n;
    if (o.json) return;
    const bool measured = rec.stats.pairs > 0;
    std::cout << fmt::format("{:>3}  {:<28} {:>10} {:>10} {:>8} {:>7}  {} ({})\n", n, rec.change,
                             rate(rec.baseline), rate(rec.changed),
                             measured ? fmt::format("{:+.1f}", 100 * rec.stats.gain) : "-",
                             measured ? fmt::format("{:.1f}", 100 * rec.stats.noise) : "-",
                             to_string(rec.decision), to_string(rec.reason));
    std::cout.flush();
  };
  const RefineResult res = refine(*s.evaluator, s.problem, space, s.baseline, ro);

  const auto start = pooled_measurements(res.decisions, res.start, s.problem.flops());
  auto rate_of = [](const std::optional<AbSide>& m) {
    return m ? fmt::format("{:.2f} ± {:.2f} GFLOPS over {} calls", m->gflops, m->gflops_spread,
                           m->times_ms.size())
             : std::string("not measured");
  };
  const std::string outcome =
      fmt::format("{}: {} kept of {} decisions, {} evaluations in {:.1f} s.", res.stop_reason,
                  res.kept, res.decisions.size(), res.evaluations, res.elapsed_s);
  if (s.changelog) {
    std::string text = "Outcome: " + outcome + "\n\n- start: `" + to_string(res.start) + "` (" +
                       rate_of(start) + ")";
    text += "\n- final: `" + to_string(res.best) + "` (" + rate_of(res.best_measurement) + ")";
    text += fmt::format("\n- converged: {}", res.converged ? "yes (no single change wins)" : "no");
    s.changelog->note(text);
  }
  if (s.log) {
    nlohmann::json j = res;
    j["type"] = "refine_summary";
    j["problem"] = problem_json(s.problem, s.kernel);
    s.log->append_json(j);
  }
  if (o.json) {
    nlohmann::json j = res;
    j["problem"] = problem_json(s.problem, s.kernel);
    j["space"] = r.space;
    j["decision_records"] = res.decisions;
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "\n";
  std::cout << fmt::format("start      {}  ({})\n", to_string(res.start), rate_of(start));
  std::cout << fmt::format("final      {}  ({})\n", to_string(res.best),
                           rate_of(res.best_measurement));
  std::cout << fmt::format("outcome    {}\n", outcome);
  std::cout << fmt::format("converged  {}\n", res.converged ? "yes" : "no");
}

}  // namespace

void set_refine_command(CLI::App& app, GlobalOptions& options) {
  auto o = std::make_shared<AbCommandOptions>();
  auto r = std::make_shared<RefineCommandOptions>();
  auto* cmd = app.add_subcommand(
      "refine",
      "From a baseline, A/B-test single changes (each parameter to a neighbouring value) "
      "and keep what wins, until no single change wins or the budget ends");
  add_ab_options(*cmd, *o);
  cmd->add_option("--space", r->space,
                  "Named space of the template whose values give the neighbours (full: every "
                  "declared value)")
      ->capture_default_str();
  cmd->add_option("--max-evals", r->max_evals, "Evaluations at most (0: no limit)")
      ->capture_default_str()
      ->check(whole_number(0));
  cmd->add_option("--time-budget", r->time_budget_s, "Seconds at most (0: no limit)")
      ->capture_default_str()
      ->check(finite_number(0));
  cmd->callback([&options, o, r]() { run_refine_command(options, *o, *r); });
}

}  // namespace gemmtune::cli
