// SPDX-License-Identifier: Apache-2.0
// What gemmtune can tell from what an OpenCL driver prints: a build log that shows a fault of the
// driver rather than of the configuration, and a device that the driver describes in a way that
// means trouble. Each diagnosis is one line that names what happened and the way out, because the
// raw logs (a missing libclc file, an LLVM stack dump) do not say what a user can do about them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/device/device.hpp"

namespace gemmtune {

// The driver fault that a failed build's log (or the error text of the build) shows, as one line,
// or nullopt when it shows none that gemmtune knows: Mesa Clover without the libclc bitcode of
// the card's ISA, or an OpenCL compiler that crashed (LLVM ERROR, a stack dump, a signal); else
// the first of the device's notes (device_notes), which may be why it failed.
std::optional<std::string> diagnose_build_failure(const std::string& log, const DeviceInfo& device);
// `log` with its diagnosis as the first line, where it has one.
std::string diagnosed_build_log(const std::string& log, const DeviceInfo& device);

// Notes on a device, one line each, empty when there is nothing to say: a device of OpenCL 1.1 or
// older (gemmtune needs 1.2), or a device name whose ISA disagrees with the card it names, as
// ROCm's HSA_OVERRIDE_GFX_VERSION (`gfx_override`, "" when unset) makes it.
std::vector<std::string> device_notes(const DeviceInfo& device, const std::string& gfx_override);
// The same, the override read from this process's environment.
std::vector<std::string> device_notes(const DeviceInfo& device);
// Logs each note on `device` as a warning: for the commands that open a device for a user.
void warn_device_notes(const DeviceInfo& device);

}  // namespace gemmtune
