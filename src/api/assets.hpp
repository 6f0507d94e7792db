// SPDX-License-Identifier: Apache-2.0
// What the library carries compiled in (src/api/embedded.hpp), parsed once: the kernel templates
// as a source folder in memory, their declarations, the device profiles and the checked-in
// databases.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/db/database.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune::api {

// The name ProgramBuilder is given as its templates folder: load_kernel_source resolves it to
// the compiled-in table (register_source_folder), never to the file system.
constexpr const char* kTemplatesFolder = "<gemmtune library>/kernel_templates";

struct NamedDatabase {
  std::string origin;  // where it came from, for Explain: a path, or "results/databases/<file>"
  Database database;
};

struct Assets {
  SourceTable templates;
  std::map<std::string, KernelSpec> specs;  // the OpenCL templates, by kernel name
  ProfileSet profiles;
  std::vector<NamedDatabase> databases;  // compiled in from results/databases/
  std::vector<NamedDatabase> embedded;   // compiled in from GEMMTUNE_EMBED_DATABASES

  // Parsed on first use; also sets up logging (GEMMTUNE_LOG_LEVEL, default warn, to stderr).
  static const Assets& get();
  const KernelSpec* spec(const std::string& kernel) const;
};

}  // namespace gemmtune::api
