// SPDX-License-Identifier: Apache-2.0
#include "src/device/device_set.hpp"

#include <algorithm>
#include <cctype>

#include "src/core/error.hpp"
#include "src/core/text.hpp"
#include "src/device/driver_diagnostics.hpp"

namespace gemmtune {

namespace {

constexpr char kAll[] = "all";

std::vector<std::string> split_selectors(const std::string& selector) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = selector.find(',', start);
    const std::string part = selector.substr(start, comma - start);
    if (part.empty()) throw invalid_argument("--device '" + selector + "' has an empty item");
    out.push_back(part);
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

void require_one_model(const std::vector<Device>& chosen) {
  const DeviceInfo& first = chosen.front().info;
  for (const auto& d : chosen) {
    const DeviceInfo& i = d.info;
    if (i.name != first.name || i.vendor != first.vendor ||
        i.driver_version != first.driver_version) {
      throw invalid_argument("--device: " + first.selector() + " is " + first.name + " (driver " +
                             first.driver_version + ") but " + i.selector() + " is " + i.name +
                             " (driver " + i.driver_version +
                             "); one search measures devices of one model only");
    }
  }
}

}  // namespace

bool names_several_devices(const std::string& selector) {
  return lower(selector) == kAll || selector.find(',') != std::string::npos;
}

std::vector<Device> select_devices_from(const std::vector<Device>& devices,
                                        const std::string& selector) {
  std::vector<Device> chosen;
  if (!names_several_devices(selector)) {
    chosen.push_back(select_device_from(devices, selector));  // "" is the default device
  } else if (lower(selector) == kAll) {
    const std::string type = select_device_from(devices, "").info.type;
    for (const auto& d : devices) {
      if (d.info.type == type) chosen.push_back(d);
    }
  } else {
    for (const auto& item : split_selectors(selector)) {
      Device d = select_device_from(devices, item);
      for (const auto& c : chosen) {
        if (c.info.selector() == d.info.selector()) {
          throw invalid_argument("--device '" + selector + "' names device " + d.info.selector() +
                                 " twice");
        }
      }
      chosen.push_back(std::move(d));
    }
  }
  require_one_model(chosen);
  return chosen;
}

std::vector<Device> select_devices(const std::string& selector, const ProfileSet* profiles) {
  std::vector<Device> devices = select_devices_from(list_devices(profiles), selector);
  for (const auto& d : devices) warn_device_notes(d.info);
  return devices;
}

}  // namespace gemmtune
