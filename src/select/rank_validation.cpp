// SPDX-License-Identifier: Apache-2.0
// Apart from prior.cpp so that a program that only ranks (libgemmtune, the offline short list)
// does not link the journal reader.
#include "src/select/rank_validation.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

namespace {

std::string table_key(const std::string& kernel, const Configuration& config) {
  return kernel + "|" + to_string(config);
}

// Registers a work-item needs for its accumulators alone: a recorded count that, spills
// included, falls below it was not read from this kernel's report.
int64_t accumulator_registers(const KernelSpec* spec, const Configuration& config,
                              Precision precision) {
  const int64_t elem = element_bytes(precision);
  const RoleValues roles(spec, config, {{"ELEM_BYTES", elem}});
  auto value = [&](Role role) -> int64_t {
    const std::optional<int64_t> v = roles.get(role);
    return v && *v > 0 ? *v : 1;
  };
  return value(Role::kRegisterTileM) * value(Role::kRegisterTileN) * elem / 4;
}

// The usage the prior is given for one recorded configuration, and where its registers come from.
enum class Origin { kTable, kJournal, kEstimate, kImplausible };

std::pair<ResourceUsage, Origin> usage_for(const RecordedConfiguration& r,
                                           const std::string& kernel, const Problem& problem,
                                           const KernelSpec* spec, const ResourceTable* resources,
                                           RegisterSource registers) {
  if (resources) {
    if (const ResourceUsage* u = resources->find(kernel, r.config)) {
      return {*u, u->registers ? Origin::kTable : Origin::kEstimate};
    }
  }
  ResourceUsage u = r.usage;
  if (registers == RegisterSource::kEstimate || !u.registers) {
    u.registers.reset();
    u.spills.reset();
    return {u, Origin::kEstimate};
  }
  if (*u.registers + u.spills.value_or(0) <
      accumulator_registers(spec, r.config, problem.precision)) {
    u.registers.reset();
    u.spills.reset();
    return {u, Origin::kImplausible};
  }
  return {u, Origin::kJournal};
}

}  // namespace

std::vector<RecordedProblem> recorded_problems(const Journal& journal) {
  std::vector<RecordedProblem> out;
  std::map<std::string, size_t> problem_index;
  std::vector<std::map<std::string, size_t>> config_index;
  for (const JournalEntry& e : journal.entries) {
    const std::string pk = problem_key(e);
    auto [p, new_problem] = problem_index.emplace(pk, out.size());
    if (new_problem) {
      out.push_back({e.kernel, e.problem, {}});
      config_index.emplace_back();
    }
    RecordedProblem& rp = out[p->second];
    const bool ok = e.result.status == Status::kOk && e.result.gflops > 0;
    RecordedConfiguration r{e.result.config, e.result.status, ok ? e.result.gflops : 0,
                            e.result.usage};
    auto [c, new_config] = config_index[p->second].emplace(to_string(r.config), 0);
    if (new_config) {
      c->second = rp.configurations.size();
      rp.configurations.push_back(std::move(r));
      continue;
    }
    RecordedConfiguration& have = rp.configurations[c->second];
    if (ok && r.gflops > have.gflops) have = std::move(r);
  }
  return out;
}

ResourceTable ResourceTable::load(const std::string& path) {
  std::istringstream in(read_text_file(path));
  ResourceTable t;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("line {}", number);
    nlohmann::json j;
    try {
      j = parse_json_text(line, path + " " + where);
    } catch (const Error&) {
      throw invalid_file(path, where + " is not JSON");
    }
    if (!j.is_object()) throw invalid_file(path, where + " is not a JSON object");
    const std::string kernel = require_string(j, "kernel", path + " " + where);
    if (!j.contains("config")) throw invalid_file(path, where + " has no field 'config'");
    Configuration config;
    try {
      config = configuration_from_json(j["config"]);
    } catch (const Error& e) {
      throw invalid_file(path, where + ", field 'config': " + e.what());
    }
    ResourceUsage u;
    auto count = [&](const char* field) -> std::optional<int64_t> {
      if (!j.contains(field) || j[field].is_null()) return std::nullopt;
      if (!j[field].is_number_integer() || j[field].get<int64_t>() < 0) {
        throw invalid_file(path, where + ", field '" + field + "' must be a whole number >= 0");
      }
      return j[field].get<int64_t>();
    };
    u.registers = count("registers");
    u.spills = count("spills");
    u.local_mem_bytes = count("local_mem_bytes");
    if (u.registers && *u.registers == 0) u.registers.reset();  // not reported
    u.source = j.value("source", std::string("resources file"));
    t.put(kernel, config, u);
  }
  if (t.size() == 0) throw invalid_file(path, "holds no configuration");
  return t;
}

void ResourceTable::put(const std::string& kernel, const Configuration& config,
                        const ResourceUsage& usage) {
  usage_[table_key(kernel, config)] = usage;
}

const ResourceUsage* ResourceTable::find(const std::string& kernel,
                                         const Configuration& config) const {
  auto it = usage_.find(table_key(kernel, config));
  return it == usage_.end() ? nullptr : &it->second;
}

namespace {

// The expected max(floor, best of k of `values` taken in a uniformly random order).
double expected_best(std::vector<double> values, size_t k, double floor) {
  const size_t n = values.size();
  if (n == 0 || k == 0) return floor;
  std::sort(values.begin(), values.end(), std::greater<double>());
  if (k >= n) return std::max(floor, values.front());
  // p = chance that the j-th best (1-based) is the best of a random k: C(n-j, k-1) / C(n, k),
  // from p(1) = k / n by p(j+1) = p(j) (n-j-k+1) / (n-j).
  double p = double(k) / double(n), expected = 0;
  for (size_t j = 1; j + k <= n + 1; ++j) {
    expected += p * std::max(floor, values[j - 1]);
    p *= double(n - j - k + 1) / double(n - j);
  }
  return expected;
}

}  // namespace

double random_top_fraction(const std::vector<double>& measured, size_t k) {
  if (measured.empty()) return 0;
  const double best = *std::max_element(measured.begin(), measured.end());
  return best > 0 ? expected_best(measured, k, 0) / best : 0;
}

ProblemRanking validate_ranking(const RecordedProblem& recorded, const KernelSpec* spec,
                                const DeviceModel& device, const ResourceTable* resources,
                                const RankValidationOptions& options) {
  ProblemRanking out;
  out.kernel = recorded.kernel;
  out.problem = recorded.problem;
  out.recorded = recorded.configurations.size();
  std::vector<PriorCandidate> candidates;
  std::vector<const RecordedConfiguration*> kept;
  for (const RecordedConfiguration& r : recorded.configurations) {
    if (resources && !resources->find(recorded.kernel, r.config)) {
      ++out.without_resources;
      continue;
    }
    if (!(r.gflops > 0) && !options.include_failed) {
      ++out.failed_left_out;
      continue;
    }
    auto [usage, origin] =
        usage_for(r, recorded.kernel, recorded.problem, spec, resources, options.registers);
    switch (origin) {
      case Origin::kTable:
        ++out.from_table;
        break;
      case Origin::kJournal:
        ++out.from_journal;
        break;
      case Origin::kEstimate:
        ++out.estimated;
        break;
      case Origin::kImplausible:
        ++out.estimated;
        ++out.implausible_registers;
        break;
    }
    candidates.push_back({r.config, usage});
    kept.push_back(&r);
  }
  out.ranked = candidates.size();
  const std::string what =
      fmt::format("{} {}", recorded.kernel, recorded.problem.shape.to_string());
  if (candidates.empty()) {
    throw invalid_argument(fmt::format(
        "nothing to rank for {}: of {} recorded configurations, {} failed and {} are not in the "
        "resources file",
        what, out.recorded, out.failed_left_out, out.without_resources));
  }
  std::vector<double> measured;
  for (const auto* r : kept) measured.push_back(r->gflops);
  const auto best = std::max_element(measured.begin(), measured.end());
  if (!(*best > 0)) throw invalid_argument("no ranked configuration of " + what + " was measured");
  out.optimum_gflops = *best;
  out.optimum = kept[size_t(best - measured.begin())]->config;

  const auto ranking =
      rank_by_prior(spec, candidates, recorded.problem, device, options.constants, options.model);
  const double optimum_predicted = [&] {
    for (const PriorRanked& r : ranking) {
      if (r.index == size_t(best - measured.begin())) return r.estimate.gflops;
    }
    return 0.0;
  }();
  out.optimum_rank = 1;
  for (const PriorRanked& r : ranking) {
    out.optimum_rank += r.estimate.gflops > optimum_predicted;
    out.optimum_ties += r.estimate.gflops == optimum_predicted;
  }
  --out.optimum_ties;  // itself
  for (size_t k : options.top) {
    // The first k, where a run of equal predictions straddles k (configurations differing only
    // in what the prior does not see) taken as a random part of that run: no order of the
    // journal decides.
    TopFraction t;
    t.k = k;
    double top = 0;
    size_t i = 0;
    while (i < ranking.size() && i < k) {
      size_t end = i;
      std::vector<double> run;
      while (end < ranking.size() && ranking[end].estimate.gflops == ranking[i].estimate.gflops) {
        run.push_back(measured[ranking[end].index]);
        ++end;
      }
      top = expected_best(run, std::min(k - i, run.size()), top);
      i = end;
    }
    t.model = top / out.optimum_gflops;
    t.random = random_top_fraction(measured, k);
    out.top.push_back(t);
  }
  for (size_t i = 0; i < std::min(options.show, ranking.size()); ++i) {
    const PriorRanked& r = ranking[i];
    out.first.push_back({i + 1, kept[r.index]->config, r.estimate.gflops, measured[r.index],
                         r.estimate.registers, r.estimate.spills, r.estimate.measured_registers});
  }
  return out;
}

std::vector<PriorSample> prior_samples(const RecordedProblem& recorded, const KernelSpec* spec,
                                       const DeviceModel& device, const ResourceTable* resources,
                                       RegisterSource registers) {
  std::vector<PriorSample> out;
  for (const RecordedConfiguration& r : recorded.configurations) {
    if (!(r.gflops > 0)) continue;
    if (resources && !resources->find(recorded.kernel, r.config)) continue;
    const ResourceUsage usage =
        usage_for(r, recorded.kernel, recorded.problem, spec, resources, registers).first;
    out.push_back({recorded.problem, r.config, r.gflops,
                   prior_features(spec, r.config, recorded.problem, usage, device)});
  }
  return out;
}

}  // namespace gemmtune
