// SPDX-License-Identifier: Apache-2.0
#include "src/api/assets.hpp"

#include <cstdlib>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "src/api/embedded.hpp"
#include "src/core/error.hpp"
#include "src/core/logging.hpp"

namespace gemmtune::api {

namespace {

Assets load_assets() {
  // A library must not print to the program's stdout; warnings (stale entries) go to stderr. A
  // program that set up gemmtune's logger itself (the command line, whose bench-suite calls the
  // library) keeps its level.
  if (!spdlog::get("gemmtune")) {
    const char* level = std::getenv("GEMMTUNE_LOG_LEVEL");
    try {
      setup_logging(level && *level ? level : "warn");
    } catch (const Error&) {
      setup_logging("warn");
    }
  }
  Assets assets;
  // A compiled-in file that no longer reads is a build's problem, not a reason to fail calls.
  auto add_database = [](std::vector<NamedDatabase>& to, const std::string& origin,
                         const std::string& text) {
    try {
      to.push_back({origin, Database::from_json(nlohmann::json::parse(text), origin)});
    } catch (const std::exception& e) {
      spdlog::warn("gemmtune: compiled-in database {} ignored: {}", origin, e.what());
    }
  };
  std::vector<DeviceProfile> profiles;
  std::vector<std::pair<std::string, nlohmann::json>> declarations;
  for (const EmbeddedFile& f : embedded_files()) {
    const std::string group = f.group, name = f.name, text(f.text, f.size);
    if (group == "kernel_templates") {
      assets.templates[name] = text;
      const bool json = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
      if (json) declarations.emplace_back(name, nlohmann::json::parse(text));
    } else if (group == "devices") {
      profiles.push_back(profile_from_json(nlohmann::json::parse(text), "devices/" + name));
      profiles.back().file = "devices/" + name;
    } else if (group == "databases") {
      add_database(assets.databases, "results/databases/" + name, text);
    }
  }
  for (const EmbeddedFile& f : embedded_databases()) {
    add_database(assets.embedded, std::string("embedded/") + f.name, std::string(f.text, f.size));
  }
  for (const auto& [name, j] : declarations) {
    KernelSpec spec = KernelSpec::from_json(j, "kernel_templates/" + name);
    // Only the templates gemmtune compiles itself run here (not CLBlast's).
    if (spec.backend() != Backend::kOpenCl) continue;
    assets.specs.emplace(spec.name(), std::move(spec));
  }
  assets.profiles = ProfileSet::from_profiles(std::move(profiles));
  return assets;
}

}  // namespace

const Assets& Assets::get() {
  // Never destroyed: calls may still be running in other threads while the program exits.
  static const Assets* assets = [] {
    auto* a = new Assets(load_assets());
    register_source_folder(kTemplatesFolder, &a->templates);
    return a;
  }();
  return *assets;
}

const KernelSpec* Assets::spec(const std::string& kernel) const {
  auto it = specs.find(kernel);
  return it == specs.end() ? nullptr : &it->second;
}

}  // namespace gemmtune::api
