// SPDX-License-Identifier: Apache-2.0
#include "src/select/chooser.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "src/core/text.hpp"
#include "src/select/aligned_copy.hpp"
#include "src/select/half_loads.hpp"
#include "src/select/offline_start.hpp"
#include "src/select/producer_rows.hpp"
#include "src/select/split_k_fit.hpp"

namespace gemmtune {

namespace {

// Why a database does not apply to `device`, or "" when it does: the same device name, unless the
// two profiles name different hardware (a device declared another card with
// GEMMTUNE_DEVICE_PROFILE is not the one that was tuned), or the same profile (an architecture;
// "generic" says nothing about the hardware).
// Whether `db` was tuned on a device of `device`'s name (its own model, not only its profile).
bool tuned_on(const Database& db, const DeviceInfo& device) {
  return lower(db.device.name) == lower(device.name);
}

std::string device_mismatch(const Database& db, const DeviceInfo& device) {
  auto known = [](const std::string& profile) { return !profile.empty() && profile != "generic"; };
  const bool other_hardware =
      known(db.device.profile) && known(device.profile) && db.device.profile != device.profile;
  if (tuned_on(db, device) && !other_hardware) return "";
  if (known(db.device.profile) && db.device.profile == device.profile) return "";
  return "it was tuned on " + db.device.name + " (profile " + db.device.profile + ")";
}

// `layers` with, among consecutive layers of one source, the databases tuned on this very device
// (by name) before those of devices that only share its profile: an H200's own database decides
// for the H200 before the H100's, whatever order the files sort in.
std::vector<ChooserLayer> own_device_first(const std::vector<ChooserLayer>& layers,
                                           const DeviceInfo& device) {
  auto own = [&](const ChooserLayer& l) { return l.database && tuned_on(*l.database, device); };
  std::vector<ChooserLayer> out = layers;
  for (auto begin = out.begin(); begin != out.end();) {
    auto end = std::find_if(begin, out.end(),
                            [&](const ChooserLayer& l) { return l.source != begin->source; });
    std::stable_partition(begin, end, own);
    begin = end;
  }
  return out;
}

// One key to look up in a layer, and what of the problem it relaxes.
struct Lookup {
  EntryKey key;
  std::vector<Relaxation> relaxed;
};

// The keys `r` makes of `key`, in order: the other storage order (a column-major m x n problem is
// the row-major n x m one with the transposes swapped); no epilogue; the other batch counts of
// the same batch layout measured in `candidates`, nearest first, then a single GEMM.
std::vector<EntryKey> relaxed_keys(const EntryKey& key, Relaxation r,
                                   const std::vector<SelectionCandidate>& candidates) {
  switch (r) {
    case Relaxation::kStorageOrder: {
      EntryKey flipped = key;
      flipped.order = key.order == Order::kRowMajor ? Order::kColMajor : Order::kRowMajor;
      std::swap(flipped.shape.m, flipped.shape.n);
      flipped.layout = std::string{key.layout[1], key.layout[0]};
      return {flipped};
    }
    case Relaxation::kEpilogue: {
      if (key.epilogue.none()) return {};
      EntryKey plain = key;
      plain.epilogue = Epilogue{};
      return {plain};
    }
    case Relaxation::kBatchCount: {
      if (key.batch <= 1) return {};
      std::set<int64_t> counts;
      for (const auto& c : candidates) {
        for (const auto& m : c.measurements) {
          if (m.problem.batch > 1 && m.problem.batch != key.batch &&
              m.problem.batch_layout == key.batch_layout) {
            counts.insert(m.problem.batch);
          }
        }
      }
      std::vector<int64_t> sorted(counts.begin(), counts.end());
      auto far = [&](int64_t b) { return std::abs(std::log(double(b) / double(key.batch))); };
      std::stable_sort(sorted.begin(), sorted.end(),
                       [&](int64_t x, int64_t y) { return far(x) < far(y); });
      std::vector<EntryKey> out;
      for (int64_t b : sorted) {
        out.push_back(key);
        out.back().batch = b;
      }
      out.push_back(key);
      out.back().batch = 1;
      out.back().batch_layout = BatchLayout::kStrided;
      return out;
    }
  }
  return {};
}

// The keys to look up in one layer, most specific first: the problem's own, then each of the
// policy's relaxations in its order applied to every lookup before it (its keys one after
// another: another batch count in both storage orders before the next count).
std::vector<Lookup> lookups(const Problem& problem,
                            const std::vector<SelectionCandidate>& candidates,
                            const std::vector<Relaxation>& relaxations) {
  // The kernel is what the lookup chooses: selection compares the key's problem family only.
  std::vector<Lookup> out = {{EntryKey::of(kDefaultKernel, problem), {}}};
  for (Relaxation r : relaxations) {
    std::vector<std::vector<Lookup>> by_key;  // [i]: the i-th key of `r` of every lookup so far
    for (const Lookup& before : out) {
      const std::vector<EntryKey> keys = relaxed_keys(before.key, r, candidates);
      if (by_key.size() < keys.size()) by_key.resize(keys.size());
      for (size_t i = 0; i < keys.size(); ++i) {
        Lookup l{keys[i], before.relaxed};
        l.relaxed.push_back(r);
        by_key[i].push_back(std::move(l));
      }
    }
    for (auto& group : by_key) out.insert(out.end(), group.begin(), group.end());
  }
  return out;
}

std::string describe(const std::vector<Relaxation>& relaxed) {
  std::string out;
  for (Relaxation r : relaxed) out += (out.empty() ? "" : ", ") + to_string(r);
  return out;
}

}  // namespace

std::string to_string(ChoiceKind kind) {
  switch (kind) {
    case ChoiceKind::kExact:
      return "exact";
    case ChoiceKind::kMeasured:
      return "measured";
    case ChoiceKind::kModel:
      return "model";
    case ChoiceKind::kSafePath:
      return "safe path";
    case ChoiceKind::kOfflineChoice:
      return "offline choice";
    case ChoiceKind::kFallback:
      return "fallback";
    case ChoiceKind::kDefaults:
      break;
  }
  return "defaults";
}

std::string stale_reason(const KernelSpec& spec, const Configuration& parameters,
                         Precision precision) {
  for (const auto& [name, value] : parameters) {
    const Parameter* p = spec.find_parameter(name);
    if (!p) return "the template has no parameter " + name;
    if (!p->accepts(value)) {
      return name + "=" + std::to_string(value) + " is not a declared value";
    }
  }
  const Context ctx{{"ELEM_BYTES", element_bytes(precision)}};
  if (auto why = spec.check(spec.complete(parameters), DeviceLimits{}, ctx)) return *why;
  return "";
}

Choices choose_configurations(const std::vector<ChooserLayer>& layers, const Problem& problem,
                              const DeviceInfo& device, const DeviceProfile* profile,
                              const SpecLookup& specs, const Refusal& unusable) {
  Choices out;
  auto refused = [&](const KernelSpec& spec, const Configuration& config) -> std::string {
    return unusable ? unusable(spec, config) : "";
  };
  const SelectionPolicy policy = SelectionPolicy::of(profile);
  const DeviceModel model = DeviceModel::of(profile, device.compute_units, device.max_clock_mhz);
  SelectOptions options;
  options.constants = policy.model;
  options.measured = policy.measured;
  options.skinny_side = policy.skinny_side;
  options.specs = specs;
  options.unusable = [&](const SelectionCandidate& c) -> std::optional<Note> {
    const KernelSpec* spec = specs ? specs(c.kernel) : nullptr;
    if (!spec) return Note{Note::Kind::kUnusable, "kernel " + c.kernel + " is not in this library"};
    if (const std::string why = stale_reason(*spec, c.parameters, problem.precision);
        !why.empty()) {
      return Note{Note::Kind::kStale, "stale (" + why + ")"};
    }
    if (std::string why = refused(*spec, spec->complete(c.parameters)); !why.empty()) {
      return Note{Note::Kind::kUnusable, std::move(why)};
    }
    return std::nullopt;
  };
  // The safe path, where a baseline is predicted to beat the database's choice.
  if (const KernelSpec* safe =
          specs && !policy.safe_path_kernel.empty() ? specs(policy.safe_path_kernel) : nullptr;
      safe && refused(*safe, safe->defaults()).empty()) {
    options.safe_kernel = safe->name();
    options.safe_parameters = safe->defaults();
  }
  for (const ChooserLayer& layer : own_device_first(layers, device)) {
    if (!layer.database) continue;
    const Database& db = *layer.database;
    if (const std::string why = device_mismatch(db, device); !why.empty()) {
      if (layer.note_mismatch) {
        out.notes.push_back({Note::Kind::kOtherDevice, layer.origin + " not used: " + why});
      }
      continue;
    }
    CandidatePool pool;
    pool.add_database(db, layer.origin);
    if (layer.more) {
      for (const auto& c : layer.more->candidates()) {
        for (const auto& m : c.measurements) pool.add(c.kernel, c.parameters, m);
      }
    }
    for (const Lookup& lookup : lookups(problem, pool.candidates(), policy.relaxations)) {
      auto s = std::make_shared<Selection>(
          select_configuration(pool.candidates(), lookup.key, problem, model, options));
      out.notes.insert(out.notes.end(), s->notes.begin(), s->notes.end());
      if (!s->chosen) continue;
      const RankedCandidate& r = *s->chosen;
      Choice c;
      c.spec = specs(r.kernel);
      c.config = c.spec->complete(r.parameters);
      c.source = layer.source;
      c.origin = layer.origin;
      c.entry = r.from.entry;
      c.exact = s->kind == Selection::Kind::kExact;
      c.distance = r.distance;
      c.relaxed = describe(lookup.relaxed);
      c.gflops = r.from.gflops;
      c.predicted_gflops = r.estimate.gflops;
      c.reason = s->reason;
      c.alternatives = s->rejected;
      c.kind = s->kind == Selection::Kind::kExact      ? ChoiceKind::kExact
               : s->kind == Selection::Kind::kSafePath ? ChoiceKind::kSafePath
               : s->kind == Selection::Kind::kMeasured ? ChoiceKind::kMeasured
                                                       : ChoiceKind::kModel;
      c.tuned_shape = r.from.problem.shape;
      if (c.kind == ChoiceKind::kMeasured || c.kind == ChoiceKind::kModel) {
        // The policy's rules for a configuration served where it was not measured, each taken
        // where it changes something that the template and the device still take.
        auto adopt = [&](Configuration config, const std::string& note) {
          if (note.empty() || !refused(*c.spec, config).empty() ||
              !stale_reason(*c.spec, config, problem.precision).empty()) {
            return false;
          }
          c.config = std::move(config);
          c.reason += "; " + note;
          return true;
        };
        // The split first, since the producer rows depend on the work-groups it makes; but not
        // where the producer rows serve the pick as it is: the split's weighing cannot see what
        // they gain, and another split may leave too many work-groups for them.
        ProducerRowsDecision rows =
            decide_producer_rows(*c.spec, c.config, problem, model, policy.producer_rows);
        if (rows.note.empty()) {
          SplitKFitDecision split = decide_split_k(*c.spec, c.config, r.from.usage, problem,
                                                   c.predicted_gflops, model, policy.split_k);
          if (adopt(std::move(split.config), split.note)) {
            rows = decide_producer_rows(*c.spec, c.config, problem, model, policy.producer_rows);
          }
        }
        // The producer form with the K-major B tile where the device takes it, else without.
        if (!rows.k_major_b ||
            !adopt(std::move(*rows.k_major_b), rows.note + "; " + rows.k_major_b_note)) {
          adopt(std::move(rows.config), rows.note);
        }
        AlignedCopyDecision copy =
            decide_aligned_copy(*c.spec, c.config, problem, model, policy.aligned_copy);
        adopt(std::move(copy.config), copy.note);
        HalfLoadsDecision half = decide_half_loads(*c.spec, c.config, problem, policy.half_loads);
        adopt(std::move(half.config), half.note);
      }
      if (c.kind == ChoiceKind::kSafePath) {
        c.source = "compiled-in default";
        c.origin = "template defaults";
        c.entry.clear();
        c.gflops = 0;
        c.reason = layer.origin + ": " + s->reason;
        c.tuned_shape = problem.shape;
      }
      c.selection = std::move(s);
      out.choices.push_back(std::move(c));
      break;  // the most specific lookup with a usable entry decides for this database
    }
  }
  // An untuned device whose profile carries starting configurations (chosen offline, never
  // measured) runs one of them before a template's defaults.
  if (auto start = offline_start(profile, problem, model, policy.model, specs, refused)) {
    Choice c;
    c.spec = start->spec;
    c.config = start->config;
    c.source = start->source;
    c.origin = start->origin;
    c.predicted_gflops = start->predicted_gflops;
    c.reason = start->reason;
    c.kind = ChoiceKind::kOfflineChoice;
    c.tuned_shape = problem.shape;
    out.choices.push_back(std::move(c));
  }
  // A default template's own configuration, after everything measured: `what` ("defaults" or
  // "fallback") of it, passed over with a note where the device refuses it.
  auto add_own = [&](const KernelSpec& spec, const Configuration& config, const std::string& what,
                     const std::string& origin, const std::string& reason, ChoiceKind kind) {
    if (const std::string why = refused(spec, config); !why.empty()) {
      out.notes.push_back({Note::Kind::kDefaultsUnusable,
                           "the " + what + " of " + spec.name() + " passed over: " + why});
      return;
    }
    Choice c;
    c.spec = &spec;
    c.config = config;
    c.source = "compiled-in default";
    c.origin = origin;
    c.reason = reason;
    c.kind = kind;
    c.tuned_shape = problem.shape;
    out.choices.push_back(std::move(c));
  };
  for (const std::string& kernel : policy.default_kernels) {
    if (const KernelSpec* spec = specs ? specs(kernel) : nullptr) {
      add_own(*spec, spec->defaults(), "defaults", "template defaults",
              "template defaults of " + kernel + ": no database entry applies",
              ChoiceKind::kDefaults);
    }
  }
  // Last, the templates' declared fallbacks (a single work-item, little local memory): what runs
  // where every configuration above exceeds the device's per-kernel limits, which only a build
  // reveals (Mesa's rusticl on a CPU allows 32 work-items a kernel while its device says 1024).
  for (const std::string& kernel : policy.default_kernels) {
    const KernelSpec* spec = specs ? specs(kernel) : nullptr;
    if (!spec || !spec->fallback() || *spec->fallback() == spec->defaults()) continue;
    add_own(*spec, *spec->fallback(), "fallback", "template fallback",
            "fallback of " + kernel + ": the configurations before it do not fit this device",
            ChoiceKind::kFallback);
  }
  return out;
}

}  // namespace gemmtune
