// SPDX-License-Identifier: Apache-2.0
// Several devices of one host measured by one search: a comma list of selectors, or "all".
#pragma once

#include <string>
#include <vector>

#include "src/device/device.hpp"

namespace gemmtune {

// The devices `selector` names: one selector as select_device() takes it, a comma list of them
// ("0:0,0:1"), or "all" (every device of the type the default device has: every GPU, else every
// CPU). A device named twice, or devices of different models (name, vendor or driver version),
// are refused: their timings would not be of one device, nor their binaries interchangeable.
std::vector<Device> select_devices(const std::string& selector, const ProfileSet* profiles);
std::vector<Device> select_devices_from(const std::vector<Device>& devices,
                                        const std::string& selector);

// Whether `selector` names more than one device (a comma list or "all").
bool names_several_devices(const std::string& selector);

}  // namespace gemmtune
