#include "src/api/choice.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/eval/gemm_call.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/select/offline_start.hpp"
#include "src/select/selection.hpp"

namespace gemmtune::api {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The folders of system databases: $GEMMTUNE_SYSTEM_DATABASES when set (a test or a relocated
// installation), else share/gemmtune/databases beside the library's own file and under the
// prefix the build was configured to install to.
std::vector<std::string> system_folders() {
  if (const char* env = std::getenv("GEMMTUNE_SYSTEM_DATABASES")) return {env};
  std::vector<std::string> out;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&database_snapshot), &info) && info.dli_fname) {
    std::error_code ec;
    const fs::path lib = fs::weakly_canonical(info.dli_fname, ec);
    if (!ec) out.push_back((lib.parent_path().parent_path() / "share/gemmtune/databases").string());
  }
#ifdef GEMMTUNE_INSTALL_PREFIX
  out.push_back(std::string(GEMMTUNE_INSTALL_PREFIX) + "/share/gemmtune/databases");
#endif
  return out;
}

std::mutex snapshot_mutex;
std::shared_ptr<const DatabaseSnapshot> current;  // guarded by snapshot_mutex
uint64_t generation = 0;                          // guarded by snapshot_mutex
bool user_set = false;                            // SetDatabase was called with a path
std::string user_path;
std::optional<NamedDatabase> user_database;  // set in memory instead of a path

std::shared_ptr<const DatabaseSnapshot> make_snapshot(const std::string& user) {
  const Assets& assets = Assets::get();
  auto snap = std::make_shared<DatabaseSnapshot>();
  snap->generation = ++generation;
  std::vector<std::string> user_files, system_files;
  if (!user.empty() && !user_database) user_files.push_back(user);
  std::set<std::string> seen;
  for (const auto& dir : system_folders()) {
    std::error_code ec;
    const std::string canonical = fs::weakly_canonical(dir, ec).string();
    if (ec || !fs::is_directory(canonical, ec) || !seen.insert(canonical).second) continue;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(canonical, ec)) {
      if (e.path().extension() == ".json") files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    system_files.insert(system_files.end(), files.begin(), files.end());
  }
  // Reserved up front: the layers point into `owned`.
  snap->owned.reserve(user_files.size() + system_files.size() + 1);
  auto load = [&](const std::vector<std::string>& files, const std::string& source) {
    Layer layer{source, {}};
    for (const auto& f : files) {
      try {
        snap->owned.push_back({f, Database::load(f)});
        layer.databases.push_back(&snap->owned.back());
      } catch (const std::exception& e) {
        spdlog::warn("gemmtune: {} {} ignored: {}", source, f, e.what());
        snap->notes.push_back(source + " " + f + " ignored: " + e.what());
      }
    }
    snap->layers.push_back(std::move(layer));
  };
  load(user_files, "user database");
  if (user_database) {
    snap->owned.push_back(*user_database);
    snap->layers.back().databases.push_back(&snap->owned.back());
  }
  Layer embedded{"embedded database", {}};
  for (const auto& db : assets.embedded) embedded.databases.push_back(&db);
  snap->layers.push_back(std::move(embedded));
  load(system_files, "system database");
  Layer compiled{"compiled-in database", {}};
  for (const auto& db : assets.databases) compiled.databases.push_back(&db);
  snap->layers.push_back(std::move(compiled));
  return snap;
}

std::string env_database() {
  const char* env = std::getenv("GEMMTUNE_DB");
  return env ? env : "";
}

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

// Why `parameters` of `spec` are stale (a parameter or value the template no longer declares,
// or a constraint they break), or "".
std::string stale_reason(const KernelSpec& spec, const Configuration& parameters,
                         const Context& ctx) {
  for (const auto& [name, value] : parameters) {
    const Parameter* p = spec.find_parameter(name);
    if (!p) return "the template has no parameter " + name;
    if (std::find(p->values.begin(), p->values.end(), value) == p->values.end()) {
      return name + "=" + std::to_string(value) + " is not a declared value";
    }
  }
  if (auto why = spec.check(spec.complete(parameters), DeviceLimits{}, ctx)) return *why;
  return "";
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
  const EntryKey base = EntryKey::of(problem);
  both_orders(base, "");
  if (!base.epilogue.empty()) {
    EntryKey plain = base;
    plain.epilogue.clear();
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

std::shared_ptr<const DatabaseSnapshot> database_snapshot() {
  std::lock_guard<std::mutex> lock(snapshot_mutex);
  if (!current) current = make_snapshot(user_set ? user_path : env_database());
  return current;
}

void set_user_database(const std::string& path) {
  if (!path.empty()) Database::load(path);  // throws, changing nothing, when it does not read
  std::lock_guard<std::mutex> lock(snapshot_mutex);
  user_set = !path.empty();
  user_path = path;
  user_database.reset();
  current = make_snapshot(user_set ? user_path : env_database());
}

void set_user_database(const Database& db, const std::string& origin) {
  std::lock_guard<std::mutex> lock(snapshot_mutex);
  user_set = true;
  user_path = origin;
  user_database = NamedDatabase{origin, db};
  current = make_snapshot(user_path);
}

Choices choose(const DatabaseSnapshot& snapshot, const DeviceInfo& device,
               const DeviceLimits& limits, const Problem& problem) {
  const Assets& assets = Assets::get();
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  Choices out;
  out.notes = snapshot.notes;
  // Why `config` of `spec` cannot run `problem` here (device limits, no such batch layout or
  // epilogue in the template ...), or "".
  auto unusable = [&](const KernelSpec& spec, const Configuration& config) -> std::string {
    if (auto r = GemmCall::refusal(spec, device, problem, config)) return r->message;
    if (auto why = spec.check(config, limits, ctx)) return "exceeds this device: " + *why;
    return "";
  };
  static std::mutex warned_mutex;
  static std::set<std::string> warned;  // each stale entry is reported once per process
  const DeviceModel model = DeviceModel::of(assets.profiles.find(device.profile, device),
                                            device.compute_units, device.max_clock_mhz);
  SelectOptions options;
  options.specs = [&](const std::string& kernel) { return assets.spec(kernel); };
  options.unusable = [&](const SelectionCandidate& c) -> std::string {
    const KernelSpec* spec = assets.spec(c.kernel);
    if (!spec) return "kernel " + c.kernel + " is not in this library";
    if (const std::string why = stale_reason(*spec, c.parameters, ctx); !why.empty()) {
      return "stale (" + why + ")";
    }
    return unusable(*spec, spec->complete(c.parameters));
  };
  // The safe path, where a baseline is predicted to beat the database's choice.
  if (const KernelSpec* direct = assets.spec("xgemm_direct");
      direct && unusable(*direct, direct->defaults()).empty()) {
    options.safe_kernel = direct->name();
    options.safe_parameters = direct->defaults();
  }
  for (const Layer& layer : snapshot.layers) {
    for (const NamedDatabase* named : layer.databases) {
      const Database& db = named->database;
      if (const std::string why = device_mismatch(db, device); !why.empty()) {
        if (layer.source != "compiled-in database") {
          out.notes.push_back(named->origin + " not used: " + why);
        }
        continue;
      }
      CandidatePool pool;
      pool.add_database(db, named->origin);
      for (const Lookup& lookup : lookups(problem, db)) {
        const Selection s =
            select_configuration(pool.candidates(), lookup.key, problem, model, options);
        for (const auto& note : s.notes) {
          if (note.find("passed over: stale (") != std::string::npos) {
            std::lock_guard<std::mutex> lock(warned_mutex);
            if (warned.insert(note).second) spdlog::warn("gemmtune: {}", note);
          }
          out.notes.push_back(note);
        }
        if (!s.chosen) continue;
        const RankedCandidate& r = *s.chosen;
        const KernelSpec* spec = assets.spec(r.kernel);
        Choice c{spec,          spec->complete(r.parameters),
                 layer.source,  named->origin,
                 r.from.entry,  s.kind == Selection::Kind::kExact,
                 r.distance,    lookup.relaxed,
                 r.from.gflops, r.estimate.gflops,
                 s.reason,      s.rejected};
        if (s.kind == Selection::Kind::kSafePath) {
          c.source = "compiled-in default";
          c.origin = "template defaults";
          c.entry.clear();
          c.gflops = 0;
          c.reason = named->origin + ": " + s.reason;
        }
        out.choices.push_back(std::move(c));
        break;  // the most specific lookup with a usable entry decides for this database
      }
    }
  }
  // An untuned device whose profile carries starting configurations (chosen offline, never
  // measured) runs one of them before a template's defaults.
  if (auto start = offline_start(
          assets.profiles.find(device.profile, device), problem, model,
          [&](const std::string& kernel) { return assets.spec(kernel); }, unusable)) {
    out.choices.push_back(Choice{start->spec, start->config, start->source, start->origin, "",
                                 false, 0, "", 0, start->predicted_gflops, start->reason, {}});
  }
  for (const char* kernel : {"xgemm_fast", "xgemm_direct"}) {
    const KernelSpec* spec = assets.spec(kernel);
    if (!spec) continue;
    const Configuration config = spec->defaults();
    if (const std::string why = unusable(*spec, config); !why.empty()) {
      out.notes.push_back(std::string("the defaults of ") + kernel + " passed over: " + why);
      continue;
    }
    out.choices.push_back(
        Choice{spec,
               config,
               "compiled-in default",
               "template defaults",
               "",
               false,
               0,
               "",
               0,
               0,
               std::string("template defaults of ") + kernel + ": no database entry applies",
               {}});
  }
  return out;
}

}  // namespace gemmtune::api
