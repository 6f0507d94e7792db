#include "src/select/chooser.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "src/core/text.hpp"
#include "src/select/offline_start.hpp"

namespace gemmtune {

namespace {

// Why a database does not apply to `device`, or "" when it does: the same device name, or the
// same profile (an architecture; "generic" says nothing about the hardware).
std::string device_mismatch(const Database& db, const DeviceInfo& device) {
  if (lower(db.device.name) == lower(device.name)) return "";
  if (!db.device.profile.empty() && db.device.profile != "generic" &&
      db.device.profile == device.profile) {
    return "";
  }
  return "it was tuned on " + db.device.name + " (profile " + db.device.profile + ")";
}

// The keys to look up in one database, most specific first: the problem's own; the same kernel
// view in the other storage order (a column-major m x n problem is the row-major n x m one with
// the transposes swapped); without the epilogue (a template that fuses it runs the same tiles);
// other batch counts of the same batch layout, nearest first, then a single GEMM.
struct Lookup {
  EntryKey key;
  std::string relaxed;
};

std::vector<Lookup> lookups(const Problem& problem, const Database& db) {
  std::vector<Lookup> out;
  auto both_orders = [&](EntryKey key, const std::string& relaxed) {
    out.push_back({key, relaxed});
    EntryKey flipped = key;
    flipped.order = key.order == Order::kRowMajor ? Order::kColMajor : Order::kRowMajor;
    std::swap(flipped.shape.m, flipped.shape.n);
    flipped.layout = std::string{key.layout[1], key.layout[0]};
    out.push_back(
        {flipped, relaxed.empty() ? std::string("storage order") : relaxed + ", storage order"});
  };
  // The kernel is what the lookup chooses: selection compares the key's problem family only.
  const EntryKey base = EntryKey::of(kDefaultKernel, problem);
  both_orders(base, "");
  if (!base.epilogue.none()) {
    EntryKey plain = base;
    plain.epilogue = Epilogue{};
    both_orders(plain, "epilogue");
  }
  if (base.batch > 1) {
    std::set<int64_t> counts;
    for (const auto& e : db.entries()) {
      if (e.key.batch > 1 && e.key.batch != base.batch && e.key.batch_layout == base.batch_layout) {
        counts.insert(e.key.batch);
      }
    }
    std::vector<int64_t> sorted(counts.begin(), counts.end());
    auto far = [&](int64_t b) { return std::abs(std::log(double(b) / double(base.batch))); };
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](int64_t x, int64_t y) { return far(x) < far(y); });
    for (int64_t b : sorted) {
      EntryKey other = base;
      other.batch = b;
      both_orders(other, "batch count");
    }
    EntryKey single = base;
    single.batch = 1;
    single.batch_layout = BatchLayout::kStrided;
    both_orders(single, "batch count");
  }
  return out;
}

}  // namespace

const std::vector<std::string>& fallback_kernels() {
  static const std::vector<std::string> kernels = {"xgemm_fast", "xgemm_direct"};
  return kernels;
}

std::string stale_reason(const KernelSpec& spec, const Configuration& parameters,
                         Precision precision) {
  for (const auto& [name, value] : parameters) {
    const Parameter* p = spec.find_parameter(name);
    if (!p) return "the template has no parameter " + name;
    if (std::find(p->values.begin(), p->values.end(), value) == p->values.end()) {
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
  const DeviceModel model = DeviceModel::of(profile, device.compute_units, device.max_clock_mhz);
  SelectOptions options;
  options.specs = specs;
  options.unusable = [&](const SelectionCandidate& c) -> std::string {
    const KernelSpec* spec = specs ? specs(c.kernel) : nullptr;
    if (!spec) return "kernel " + c.kernel + " is not in this library";
    if (const std::string why = stale_reason(*spec, c.parameters, problem.precision);
        !why.empty()) {
      return "stale (" + why + ")";
    }
    return refused(*spec, spec->complete(c.parameters));
  };
  // The safe path, where a baseline is predicted to beat the database's choice.
  if (const KernelSpec* safe = specs ? specs(kSafePathKernel) : nullptr;
      safe && refused(*safe, safe->defaults()).empty()) {
    options.safe_kernel = safe->name();
    options.safe_parameters = safe->defaults();
  }
  for (const ChooserLayer& layer : layers) {
    if (!layer.database) continue;
    const Database& db = *layer.database;
    if (const std::string why = device_mismatch(db, device); !why.empty()) {
      if (layer.note_mismatch) out.notes.push_back(layer.origin + " not used: " + why);
      continue;
    }
    CandidatePool pool;
    pool.add_database(db, layer.origin);
    for (const Lookup& lookup : lookups(problem, db)) {
      const Selection s =
          select_configuration(pool.candidates(), lookup.key, problem, model, options);
      out.notes.insert(out.notes.end(), s.notes.begin(), s.notes.end());
      if (!s.chosen) continue;
      const RankedCandidate& r = *s.chosen;
      const KernelSpec* spec = specs(r.kernel);
      Choice c{spec,
               spec->complete(r.parameters),
               layer.source,
               layer.origin,
               r.from.entry,
               s.kind == Selection::Kind::kExact,
               r.distance,
               lookup.relaxed,
               r.from.gflops,
               r.estimate.gflops,
               s.reason,
               s.rejected,
               to_string(s.kind),
               r.from.problem.shape};
      if (s.kind == Selection::Kind::kSafePath) {
        c.source = "compiled-in default";
        c.origin = "template defaults";
        c.entry.clear();
        c.gflops = 0;
        c.reason = layer.origin + ": " + s.reason;
        c.tuned_shape = problem.shape;
      }
      out.choices.push_back(std::move(c));
      break;  // the most specific lookup with a usable entry decides for this database
    }
  }
  // An untuned device whose profile carries starting configurations (chosen offline, never
  // measured) runs one of them before a template's defaults.
  if (auto start = offline_start(profile, problem, model, specs, refused)) {
    out.choices.push_back(Choice{start->spec,
                                 start->config,
                                 start->source,
                                 start->origin,
                                 "",
                                 false,
                                 0,
                                 "",
                                 0,
                                 start->predicted_gflops,
                                 start->reason,
                                 {},
                                 "offline choice",
                                 problem.shape});
  }
  // A template's own configuration, after everything measured: its defaults, then its declared
  // fallback (a single work-item, little local memory), which runs where every kernel before it
  // exceeds the device's per-kernel limits that only a build reveals (Mesa's rusticl on a CPU
  // allows 32 work-items a kernel while its device says 1024).
  auto add_own = [&](const KernelSpec& spec, const Configuration& config, const char* origin,
                     const std::string& reason, const char* kind) {
    if (const std::string why = refused(spec, config); !why.empty()) {
      out.notes.push_back("the " + std::string(kind) + " of " + spec.name() +
                          " passed over: " + why);
      return;
    }
    out.choices.push_back(Choice{&spec,
                                 config,
                                 "compiled-in default",
                                 origin,
                                 "",
                                 false,
                                 0,
                                 "",
                                 0,
                                 0,
                                 reason,
                                 {},
                                 kind,
                                 problem.shape});
  };
  for (const std::string& kernel : fallback_kernels()) {
    if (const KernelSpec* spec = specs ? specs(kernel) : nullptr) {
      add_own(*spec, spec->defaults(), "template defaults",
              "template defaults of " + kernel + ": no database entry applies", "defaults");
    }
  }
  for (const std::string& kernel : fallback_kernels()) {
    const KernelSpec* spec = specs ? specs(kernel) : nullptr;
    if (!spec || !spec->fallback() || *spec->fallback() == spec->defaults()) continue;
    add_own(*spec, *spec->fallback(), "template fallback",
            "fallback of " + kernel +
                ": the configurations before it do not fit this device's "
                "kernels",
            "fallback");
  }
  return out;
}

}  // namespace gemmtune
