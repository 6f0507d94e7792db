// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared across the layers.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace gemmtune {

// `s` in lower case (ASCII): selectors, profile and format names compare case-insensitively.
inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace gemmtune
