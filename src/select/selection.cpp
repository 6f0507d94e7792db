// SPDX-License-Identifier: Apache-2.0
#include "src/select/selection.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "src/core/problem_key.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune {

namespace {

// Whatever kernel measured it.
bool in_family(const Problem& measured, const EntryKey& family) {
  return ProblemKey(measured, kFamily) == ProblemKey(family.problem(), kFamily);
}

bool same_view(const Problem& a, const Problem& b) {
  const KernelView x = kernel_view(a), y = kernel_view(b);
  return x.m == y.m && x.n == y.n && x.k == y.k && x.batch == y.batch;
}

std::string where(const Measurement& m) {
  return m.source == MeasurementSource::kDatabase ? m.origin + " entry " + m.entry
                                                  : m.origin + " (" + m.entry + ")";
}

std::string label(const std::string& kernel, const Configuration& parameters) {
  return kernel + " " + to_string(parameters);
}

// The measurement of `c` in the family nearest to `target` (the faster one on a tie).
const Measurement* nearest_measurement(const SelectionCandidate& c, const EntryKey& family,
                                       const Problem& target, double* distance) {
  const Measurement* best = nullptr;
  for (const auto& m : c.measurements) {
    if (!in_family(m.problem, family)) continue;
    const double d = log_distance(m.problem, target);
    if (!best || d < *distance || (d == *distance && m.gflops > best->gflops)) {
      best = &m;
      *distance = d;
    }
  }
  return best;
}

TileGeometry geometry(const SpecLookup& specs, const std::string& kernel,
                      const Configuration& parameters, const Measurement& m,
                      const DeviceModel& device) {
  return TileGeometry::of(specs ? specs(kernel) : nullptr, parameters, m.problem.precision, m.usage,
                          device);
}

}  // namespace

SelectionCandidate& CandidatePool::candidate(const std::string& kernel,
                                             const Configuration& parameters) {
  const auto key = std::make_pair(kernel, to_string(parameters));
  auto it = index_.find(key);
  if (it == index_.end()) {
    it = index_.emplace(key, candidates_.size()).first;
    candidates_.push_back({kernel, parameters, {}});
  }
  return candidates_[it->second];
}

void CandidatePool::add(const std::string& kernel, const Configuration& parameters, Measurement m) {
  candidate(kernel, parameters).measurements.push_back(std::move(m));
}

void CandidatePool::add_database(const Database& db, const std::string& origin) {
  for (const auto& e : db.entries()) {
    if (e.status != Status::kOk || e.gflops <= 0) continue;
    Measurement m;
    m.problem = e.key.problem();
    m.gflops = e.gflops;
    m.source = MeasurementSource::kDatabase;
    m.origin = origin;
    m.entry = e.key.to_string();
    m.usage = e.usage;
    m.baseline = e.baseline;
    add(e.key.kernel, e.parameters, std::move(m));
  }
  // A configuration measured at many shapes is looked up once, not once a shape: a lookup reads
  // every row of every database.
  for (const auto& mc : db.measurements()) {
    auto& to = candidate(mc.family.kernel, mc.parameters).measurements;
    to.reserve(to.size() + mc.gflops.size());
    const Problem family = mc.family.problem();
    for (const auto& [shape, gflops] : mc.gflops) {
      Measurement m;
      m.problem = family;
      m.problem.shape = shape;
      m.gflops = gflops;
      m.source = MeasurementSource::kDatabase;
      m.origin = origin;
      m.entry = "measured at " + shape.to_string();
      to.push_back(std::move(m));
    }
  }
}

std::string to_string(MeasurementSource source) {
  return source == MeasurementSource::kJournal ? "journal" : "database";
}

std::string to_string(Selection::Kind kind) {
  switch (kind) {
    case Selection::Kind::kNone:
      return "none";
    case Selection::Kind::kExact:
      return "exact";
    case Selection::Kind::kMeasured:
      return "measured";
    case Selection::Kind::kModel:
      return "model";
    case Selection::Kind::kSafePath:
      return "safe path";
  }
  return "none";
}

namespace {

using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;

// A floor under the model's predictions before their log is taken (a prediction is positive).
constexpr double kLeastGflops = 1e-9;
// The most the model's change from a measured shape to the problem counts, as a log (a factor of
// 2 either way): a transfer it gets badly wrong (a tiny shape's launch cost read as a slow rate)
// cannot outweigh what was measured. Held out on the H100 and H200 sets, unbounded transfer weights
// of 0.75 and more picked a configuration at 0.15 of the best at one shape.
constexpr double kMostTransferChange = 0.6931471805599453;  // log(2)

// MeasuredRule: among the usable candidates (`ranked`), the one that ran fastest relative to the
// fastest there, on average over the nearest shapes at which at least rule.min_configs of them
// were measured, each shape's figure corrected by rule.transfer_weight x the model's change from
// it to the problem, that mean ranked with rule.model_weight x log(the model's prediction at the
// problem); nullopt where there are none within rule.max_distance.
std::optional<RankedCandidate> pick_by_measurements(
    const std::vector<SelectionCandidate>& candidates, const std::vector<RankedCandidate>& ranked,
    const EntryKey& family, const Problem& target, const DeviceModel& device,
    const SelectOptions& options) {
  const MeasuredRule& rule = options.measured;
  if (rule.neighbours <= 0) return std::nullopt;
  std::map<std::string, size_t> usable;  // by label, into `ranked`
  for (size_t i = 0; i < ranked.size(); ++i) {
    usable.emplace(label(ranked[i].kernel, ranked[i].parameters), i);
  }
  // shape -> usable candidate -> its fastest measurement there
  std::map<ShapeKey, std::map<size_t, const Measurement*>> at;
  std::map<ShapeKey, Problem> problems;
  for (const auto& c : candidates) {
    const auto u = usable.find(label(c.kernel, c.parameters));
    if (u == usable.end()) continue;
    for (const auto& m : c.measurements) {
      if (!in_family(m.problem, family)) continue;
      const ShapeKey key{m.problem.shape.m, m.problem.shape.n, m.problem.shape.k};
      const Measurement*& g = at[key][u->second];
      if (!g || m.gflops > g->gflops) g = &m;
      problems.emplace(key, m.problem);
    }
  }
  std::vector<std::pair<double, ShapeKey>> near;
  for (const auto& [key, per] : at) {
    if (int64_t(per.size()) >= rule.min_configs) {
      near.emplace_back(log_distance(problems.at(key), target), key);
    }
  }
  std::sort(near.begin(), near.end());
  if (near.empty() || near.front().first > rule.max_distance) return std::nullopt;
  if (int64_t(near.size()) > rule.neighbours) near.resize(size_t(rule.neighbours));
  std::map<ShapeKey, double> fastest;
  for (const auto& [d, key] : near) {
    for (const auto& [i, m] : at[key]) fastest[key] = std::max(fastest[key], m->gflops);
  }
  // Each shape's weight in the mean, and their sum: the same for every candidate.
  std::vector<double> weight;
  double weights = 0;
  for (const auto& [d, key] : near) {
    weight.push_back(std::exp(-rule.decay * d));
    weights += weight.back();
  }
  std::optional<size_t> best;
  double best_rank = 0, best_mean = 0, best_change = 0;
  for (const auto& nearest : at[near.front().second]) {
    const size_t i = nearest.first;
    double sum = 0, changes = 0;  // the weighted logs of the speeds and of the model's changes
    bool everywhere = true;
    for (size_t n = 0; n < near.size(); ++n) {
      const ShapeKey& key = near[n].second;
      const auto& per = at[key];
      const auto f = per.find(i);
      everywhere = f != per.end();
      if (!everywhere) break;
      const Measurement& m = *f->second;
      sum += weight[n] * std::log(m.gflops / fastest[key]);
      if (rule.transfer_weight > 0) {
        const TileGeometry g =
            geometry(options.specs, ranked[i].kernel, ranked[i].parameters, m, device);
        const double there =
            transfer(g, m.problem, m.gflops, target, device, options.constants).gflops;
        const double change = std::log(std::max(there, kLeastGflops) / m.gflops);
        changes += weight[n] * std::clamp(change, -kMostTransferChange, kMostTransferChange);
      }
    }
    if (!everywhere) continue;
    const double mean = sum / weights, change = changes / weights;
    const double rank =
        mean + rule.transfer_weight * change +
        rule.model_weight * std::log(std::max(ranked[i].estimate.gflops, kLeastGflops));
    if (!best || rank > best_rank) {
      best = i;
      best_rank = rank;
      best_mean = mean;
      best_change = change;
    }
  }
  if (!best) return std::nullopt;
  RankedCandidate r = ranked[*best];
  const auto& [nm, nn, nk] = near.front().second;
  r.reason = fmt::format(
      "ran at {:.0f}% of the fastest measured, on average over the {} measured shapes nearest "
      "(the nearest {} at log distance {:.2f}{}){}; the model predicts {:.0f} GFLOPS here{}",
      100 * std::exp(best_mean), near.size(), Shape{nm, nn, nk}.to_string(), near.front().first,
      rule.decay > 0 ? ", the nearer weighing more" : "",
      rule.transfer_weight > 0
          ? fmt::format(
                ", and the model puts it {:+.0f}% from those shapes to this one (weight {:g})",
                100 * (std::exp(best_change) - 1), rule.transfer_weight)
          : "",
      r.estimate.gflops,
      rule.model_weight > 0
          ? fmt::format(", which counts in the ranking at weight {:g}", rule.model_weight)
          : "");
  return r;
}

}  // namespace

Selection select_configuration(const std::vector<SelectionCandidate>& candidates,
                               const EntryKey& family, const Problem& target,
                               const DeviceModel& device, const SelectOptions& options) {
  const ModelConstants& c = options.constants;
  Selection out;
  std::optional<RankedCandidate> exact;
  // The baseline measured nearest to the target, and the geometry it is predicted with.
  const Measurement* baseline = nullptr;
  double baseline_distance = 0;
  std::string baseline_kernel;
  Configuration baseline_parameters;
  for (const auto& cand : candidates) {
    for (const auto& m : cand.measurements) {
      if (!m.baseline || !in_family(m.problem, family)) continue;
      const double d = log_distance(m.problem, target);
      if (!baseline || d < baseline_distance ||
          (d == baseline_distance && m.baseline->gflops > baseline->baseline->gflops)) {
        baseline = &m;
        baseline_distance = d;
        baseline_kernel = cand.kernel;
        baseline_parameters = cand.parameters;
      }
    }
  }

  for (const auto& cand : candidates) {
    double distance = 0;
    const Measurement* m = nearest_measurement(cand, family, target, &distance);
    if (!m) continue;
    if (options.unusable) {
      if (const std::optional<Note> why = options.unusable(cand)) {
        out.notes.push_back({why->kind, where(*m) + ": " + label(cand.kernel, cand.parameters) +
                                            " passed over: " + why->text});
        continue;
      }
    }
    RankedCandidate r;
    r.kernel = cand.kernel;
    r.parameters = cand.parameters;
    r.from = *m;
    r.distance = distance;
    const TileGeometry g = geometry(options.specs, cand.kernel, cand.parameters, *m, device);
    // The model knows an untiled kernel's cost only on shapes of its kind: a small side of C.
    const bool transfers =
        g.tiled || std::min(target.shape.m, target.shape.n) <= options.skinny_side;
    r.estimate = transfer(g, m->problem, m->gflops, target, device, c);
    r.score = r.estimate.gflops * std::exp(-c.distance_penalty * std::sqrt(distance));
    r.reason = fmt::format(
        "predicted {:.0f} GFLOPS from {:.0f} measured at {} ({}, log distance "
        "{:.2f}): {}",
        r.estimate.gflops, m->gflops, m->problem.shape.to_string(), where(*m), distance,
        r.estimate.describe(device));
    // An entry tuned for this very problem is taken as measured (the fastest such).
    for (const auto& em : cand.measurements) {
      if (em.source != MeasurementSource::kDatabase || !in_family(em.problem, family) ||
          !same_view(em.problem, target)) {
        continue;
      }
      if (!exact || em.gflops > exact->from.gflops) {
        exact = r;
        exact->from = em;
        exact->distance = 0;
        exact->estimate.gflops = em.gflops;
        exact->score = em.gflops;
        exact->reason =
            fmt::format("tuned for this shape: {} measured {:.0f} GFLOPS", where(em), em.gflops);
      }
    }
    if (!transfers && !(exact && exact->kernel == r.kernel && exact->parameters == r.parameters)) {
      out.notes.push_back({Note::Kind::kOutsideModel,
                           where(*m) + ": " + label(cand.kernel, cand.parameters) +
                               " passed over: its kernel has no work-group tile, so the model "
                               "predicts it only where M or N is at most " +
                               std::to_string(options.skinny_side)});
      continue;
    }
    out.ranked.push_back(std::move(r));
  }
  std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const auto& a, const auto& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.from.gflops != b.from.gflops) return a.from.gflops > b.from.gflops;
    return label(a.kernel, a.parameters) < label(b.kernel, b.parameters);
  });
  if (out.ranked.empty()) {
    out.reason = "no candidate of this problem's family can run here";
    return out;
  }

  if (exact) {
    out.kind = Selection::Kind::kExact;
    out.chosen = exact;
  } else if (auto measured =
                 pick_by_measurements(candidates, out.ranked, family, target, device, options)) {
    out.kind = Selection::Kind::kMeasured;
    out.chosen = measured;
  } else {
    out.kind = Selection::Kind::kModel;
    out.chosen = out.ranked.front();
  }
  out.reason = out.chosen->reason;

  if (baseline) {
    const std::string& safe_kernel =
        options.safe_kernel.empty() ? baseline_kernel : options.safe_kernel;
    const Configuration& safe_parameters =
        options.safe_kernel.empty() ? baseline_parameters : options.safe_parameters;
    const TileGeometry g = geometry(options.specs, safe_kernel, safe_parameters, *baseline, device);
    const double predicted =
        transfer(g, baseline->problem, baseline->baseline->gflops, target, device, c).gflops;
    out.baseline_gflops = predicted;
    out.baseline_source = fmt::format("{} measured {:.0f} GFLOPS at {} ({})",
                                      baseline->baseline->by, baseline->baseline->gflops,
                                      baseline->problem.shape.to_string(), where(*baseline));
    if (out.chosen->estimate.gflops < predicted) {
      const std::string lost =
          fmt::format("{} predicted {:.0f} GFLOPS loses to the baseline's {:.0f} ({})",
                      label(out.chosen->kernel, out.chosen->parameters),
                      out.chosen->estimate.gflops, predicted, out.baseline_source);
      auto winner = std::find_if(out.ranked.begin(), out.ranked.end(),
                                 [&](const auto& r) { return r.estimate.gflops >= predicted; });
      if (out.kind != Selection::Kind::kExact && winner != out.ranked.end()) {
        out.chosen = *winner;
        out.reason = lost + "; another candidate is predicted to win: " + winner->reason;
      } else if (!options.safe_kernel.empty()) {
        RankedCandidate safe;
        safe.kernel = options.safe_kernel;
        safe.parameters = options.safe_parameters;
        safe.from = *baseline;
        safe.distance = baseline_distance;
        safe.estimate.gflops = predicted;
        safe.score = predicted;
        safe.reason = "safe path (" + safe.kernel + " template defaults): " + lost;
        out.kind = Selection::Kind::kSafePath;
        out.chosen = safe;
        out.reason = safe.reason;
      } else {
        out.reason += "; " + lost + ", and there is no safe path to take";
      }
    } else {
      out.reason += fmt::format("; beats the baseline's predicted {:.0f} GFLOPS", predicted);
    }
  }

  for (const auto& r : out.ranked) {
    if (out.rejected.size() == options.alternatives) break;
    if (r.kernel == out.chosen->kernel && r.parameters == out.chosen->parameters) continue;
    out.rejected.push_back(
        fmt::format("{} (score {:.0f}): {}", label(r.kernel, r.parameters), r.score, r.reason));
  }
  return out;
}

}  // namespace gemmtune
