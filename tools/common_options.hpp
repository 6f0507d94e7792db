// Options shared by several subcommands, defined once.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"

namespace gemmtune::cli {

struct GlobalOptions {
  bool verbose = false;
  bool quiet = false;
  std::string log_level;
  std::string templates_dir;  // --templates
  std::string devices_dir;    // --devices
};

void add_global_options(CLI::App& app, GlobalOptions& options);
// Applies -v/--quiet/--log-level; called once, after parsing, before any subcommand runs.
void apply_logging(const GlobalOptions& options);

// Resolves the data folders (honouring the overrides).
std::string templates_dir(const GlobalOptions& options);
std::string devices_dir(const GlobalOptions& options);
ProfileSet load_profiles(const GlobalOptions& options);

// --device SELECTOR on a subcommand.
void add_device_option(CLI::App& cmd, std::string& selector);

}  // namespace gemmtune::cli
