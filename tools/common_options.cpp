#include "tools/common_options.hpp"

#include "src/core/data_paths.hpp"
#include "src/core/logging.hpp"

namespace gemmtune::cli {

void add_global_options(CLI::App& app, GlobalOptions& options) {
  app.add_flag("-v,--verbose", options.verbose, "Log debug detail (binary cache hits, timings)");
  app.add_flag("-q,--quiet", options.quiet, "Log only errors");
  app.add_option("--log-level", options.log_level, "trace, debug, info, warn, error or off");
  app.add_option("--templates", options.templates_dir, "Folder of kernel templates");
  app.add_option("--devices", options.devices_dir, "Folder of device profiles");
}

void apply_logging(const GlobalOptions& options) {
  std::string level = "info";
  if (options.verbose) level = "debug";
  if (options.quiet) level = "error";
  if (!options.log_level.empty()) level = options.log_level;
  setup_logging(level);
}

std::string templates_dir(const GlobalOptions& options) {
  return find_data_dir("kernel_templates", options.templates_dir);
}

std::string devices_dir(const GlobalOptions& options) {
  return find_data_dir("devices", options.devices_dir);
}

ProfileSet load_profiles(const GlobalOptions& options) {
  return ProfileSet::load_dir(devices_dir(options));
}

void add_device_option(CLI::App& cmd, std::string& selector) {
  cmd.add_option("-d,--device", selector,
                 "Device: profile name (gfx1012), name substring (H200, pthread) or P:D indices; "
                 "default: first GPU, else first CPU");
}

}  // namespace gemmtune::cli
