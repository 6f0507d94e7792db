// SPDX-License-Identifier: Apache-2.0
// Device-limit rules shared by KernelSpec::check and ParamSpace's pruning (internal to
// src/kernel).
#pragma once

#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

// A register cap of `value` cannot be applied: the device is known to have no way to apply one.
inline bool cap_refused(int64_t value, const DeviceLimits& limits) {
  return value != 0 && limits.register_cap_known && limits.register_cap_option.empty() &&
         !limits.register_cap_attribute;
}

// Whether a launch expression reads the problem's sizes (it cannot be checked without one).
inline bool reads_sizes(const Expression& e) {
  for (const auto& id : e.identifiers()) {
    if (id == "M" || id == "N" || id == "K") return true;
  }
  return false;
}

}  // namespace gemmtune
