// SPDX-License-Identifier: Apache-2.0
// gemmtune devices: every OpenCL platform and device, with the profile each matched.
#include <iostream>

#include <fmt/format.h>

#include "src/device/device.hpp"
#include "src/device/driver_diagnostics.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

std::string mib(uint64_t bytes) {
  return fmt::format("{:.0f} MiB", bytes / 1048576.0);
}
std::string kib(uint64_t bytes) {
  return fmt::format("{:.0f} KiB", bytes / 1024.0);
}

void print_table(const std::vector<Device>& devices) {
  if (devices.empty()) {
    std::cout << "No OpenCL device found.\n";
    return;
  }
  for (const auto& d : devices) {
    const auto& i = d.info;
    std::cout << fmt::format("[{}] {} ({})\n", i.selector(), i.name, i.type);
    std::cout << fmt::format("    platform       {} ({})\n", i.platform_name, i.platform_version);
    std::cout << fmt::format("    vendor         {}\n", i.vendor);
    std::cout << fmt::format("    driver         {}\n", i.driver_version);
    std::cout << fmt::format("    OpenCL C       {}\n", i.opencl_c_version);
    std::cout << fmt::format("    compute units  {} at {} MHz\n", i.compute_units, i.max_clock_mhz);
    std::cout << fmt::format("    memory         global {}, local {}, max alloc {}\n",
                             mib(i.global_mem_bytes), kib(i.local_mem_bytes),
                             mib(i.max_alloc_bytes));
    std::cout << fmt::format("    work-group     max {}\n", i.max_work_group_size);
    std::cout << fmt::format("    fp16 {}  fp64 {}  subgroups {}\n", i.has_fp16 ? "yes" : "no",
                             i.has_fp64 ? "yes" : "no", i.has_subgroups ? "yes" : "no");
    std::cout << fmt::format("    profile        {}\n", i.profile);
    for (const auto& note : device_notes(i))
      std::cout << fmt::format("    note           {}\n", note);
  }
}

}  // namespace

void set_devices_command(CLI::App& app, GlobalOptions& options) {
  auto* cmd = app.add_subcommand("devices", "List OpenCL platforms and devices");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  cmd->callback([&options, json]() {
    const auto profiles = load_profiles(options);
    const auto devices = list_devices(&profiles);
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& d : devices) {
        nlohmann::json j = d.info;
        j["extensions"] = extension_list(d.info);
        if (const auto notes = device_notes(d.info); !notes.empty()) j["notes"] = notes;
        out.push_back(j);
      }
      std::cout << out.dump(2) << "\n";
    } else {
      print_table(devices);
    }
  });
}

}  // namespace gemmtune::cli
