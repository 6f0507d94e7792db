// SPDX-License-Identifier: Apache-2.0
#include "src/api/choice.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "src/core/configured.hpp"
#include "src/core/error.hpp"
#include "src/eval/gemm_call.hpp"
#include "src/select/chooser.hpp"

namespace gemmtune::api {

namespace fs = std::filesystem;

namespace {

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
  if (const std::string prefix = configured::install_prefix(); !prefix.empty()) {
    out.push_back(prefix + "/share/gemmtune/databases");
  }
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

Refusal call_refusal(const DeviceInfo& device, const DeviceLimits& limits, const Problem& problem) {
  return [device, limits, problem](const KernelSpec& spec,
                                   const Configuration& config) -> std::string {
    if (auto r = GemmCall::refusal(spec, device, problem, config)) return r->message;
    const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
    if (auto why = spec.check(config, limits, ctx)) return "exceeds this device: " + *why;
    return "";
  };
}

Choices choose(const DatabaseSnapshot& snapshot, const DeviceInfo& device,
               const DeviceLimits& limits, const Problem& problem) {
  const Assets& assets = Assets::get();
  std::vector<ChooserLayer> layers;
  for (const Layer& layer : snapshot.layers) {
    for (const NamedDatabase* named : layer.databases) {
      // The compiled-in databases are every device's: another device's is no news.
      layers.push_back(
          {layer.source, named->origin, &named->database, layer.source != "compiled-in database"});
    }
  }
  gemmtune::Choices chosen = choose_configurations(
      layers, problem, device, assets.profiles.find(device.profile, device),
      [&](const std::string& kernel) { return assets.spec(kernel); },
      call_refusal(device, limits, problem));
  Choices out{std::move(chosen.choices), snapshot.notes};
  static std::mutex warned_mutex;
  static std::set<std::string> warned;  // each stale entry is reported once per process
  for (const Note& note : chosen.notes) {
    out.notes.push_back(note.text);
    if (note.kind != Note::Kind::kStale) continue;
    std::lock_guard<std::mutex> lock(warned_mutex);
    if (warned.insert(note.text).second) spdlog::warn("gemmtune: {}", note.text);
  }
  return out;
}

}  // namespace gemmtune::api
