// SPDX-License-Identifier: Apache-2.0
// What the files of `gemmtune db` share: its subcommands are set up in cmd_db.cpp (show, merge),
// cmd_db_lookup.cpp (lookup) and cmd_db_journals.cpp (add-measurements, calibrate).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/device/device.hpp"
#include "src/select/selection.hpp"
#include "tools/common_options.hpp"

namespace gemmtune::cli {

void set_db_lookup(CLI::App& db_cmd, const GlobalOptions& options);
void set_db_add_measurements(CLI::App& db_cmd);
void set_db_calibrate(CLI::App& db_cmd, const GlobalOptions& options);

// Templates by name from the --templates folder, each read once; null for a kernel without a
// declaration there (its parameters then give the tiles).
SpecLookup template_lookup(const std::string& templates);

// The device the journals were measured on, as their first headers record it; journals of
// different devices would fit one model to two machines, so they are refused.
DeviceInfo journals_device(const std::vector<std::string>& journals);

}  // namespace gemmtune::cli
