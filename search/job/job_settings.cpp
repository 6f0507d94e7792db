// SPDX-License-Identifier: Apache-2.0
// The settings a search's journal records, and how a resumed search takes back the ones not given
// again.
#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "search/job/job_parts.hpp"
#include "src/core/data_paths.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

nlohmann::json settings_json(const SearchJobOptions& a, const std::vector<Shape>& shapes) {
  nlohmann::json shape_list = nlohmann::json::array();
  for (const auto& s : shapes) shape_list.push_back(s.to_string());
  const Problem& p = a.problem;
  return {{"kernel", a.kernel},
          {"space", a.space},
          {"space_from", a.space_from},
          {"strategy", a.strategy},
          {"strategy_options", a.strategy_options},
          {"max_evals", a.max_evals},
          {"time_budget_s", a.time_budget_s},
          {"space_fraction", a.space_fraction},
          {"seed", a.seed},
          {"shapes", shape_list},
          {"layout", p.layout()},
          {"order", p.order_name()},
          {"precision", to_string(p.precision)},
          {"batch", p.batch},
          {"batch_layout", to_string(p.batch_layout)},
          {"epilogue", to_string(p.epilogue)},
          {"alpha", p.alpha},
          {"beta", p.beta},
          {"device", a.device},
          {"replay", a.replay},
          {"output", a.output},
          {"db", a.db},
          {"no_db", a.no_db},
          {"refine", a.refine},
          {"eval_timeout_s", a.eval_timeout_s},
          {"shard", a.shard},
          {"workload", a.workload}};
}

void apply_journal_settings(SearchJobOptions& a, const JsonReader& s) {
  auto unset = [&](const std::string& name) { return a.given.count(name) == 0; };
  auto take = [&](const std::string& name, const char* key, auto& field) {
    if (unset(name) && s.has(key)) field = s.get<std::decay_t<decltype(field)>>(key);
  };
  // A problem setting as the journal spells it, read back into the problem by `parse`.
  auto take_text = [&](const std::string& name, const char* key, auto parse) {
    if (unset(name) && s.has(key)) s.parsed(key, [&](const std::string& v) { return parse(v), 0; });
  };
  Problem& p = a.problem;
  take("kernel", "kernel", a.kernel);
  take("space", "space", a.space);
  take("space-from", "space_from", a.space_from);
  take("strategy", "strategy", a.strategy);
  take("strategy-option", "strategy_options", a.strategy_options);
  take("max-evals", "max_evals", a.max_evals);
  take("time-budget", "time_budget_s", a.time_budget_s);
  take("space-fraction", "space_fraction", a.space_fraction);
  take("seed", "seed", a.seed);
  take_text("layout", "layout", [&](const std::string& v) { set_layout(p, v); });
  take_text("order", "order", [&](const std::string& v) { p.order = parse_order(v); });
  take_text("precision", "precision",
            [&](const std::string& v) { p.precision = parse_precision(v); });
  take("batch", "batch", p.batch);
  take_text("batch-layout", "batch_layout",
            [&](const std::string& v) { p.batch_layout = parse_batch_layout(v); });
  take_text("epilogue", "epilogue", [&](const std::string& v) { p.epilogue = parse_epilogue(v); });
  take("alpha", "alpha", p.alpha);
  take("beta", "beta", p.beta);
  take("device", "device", a.device);
  take("replay", "replay", a.replay);
  take("output", "output", a.output);
  take("db", "db", a.db);
  take("no-db", "no_db", a.no_db);
  take("refine", "refine", a.refine);
  take("eval-timeout", "eval_timeout_s", a.eval_timeout_s);
  take("shard", "shard", a.shard);
  take("workload", "workload", a.workload);
  if (unset("shapes") && unset("shapes-file") && a.workload.empty() && s.has("shapes")) {
    a.shapes.clear();
    for (const auto& sh : s.array("shapes")) {
      a.shapes.push_back(sh.read([&] { return parse_shape(sh.as_string()); }));
    }
  }
}

Problem base_problem(SearchJobOptions& a) {
  Problem p = a.problem;
  // The command line's checks cover what was given there; a journal's settings come this way too.
  if (!std::isfinite(p.alpha) || !std::isfinite(p.beta)) {
    throw invalid_argument(fmt::format("--alpha {} and --beta {} must be finite", p.alpha, p.beta));
  }
  if (p.batch < 1) throw invalid_argument("--batch must be at least 1");
  return p;
}

ProfileSet job_profiles(const SearchJobOptions& a) {
  return ProfileSet::load_dir(find_data_dir("devices", a.devices_dir));
}

}  // namespace gemmtune
