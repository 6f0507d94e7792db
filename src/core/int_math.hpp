// SPDX-License-Identifier: Apache-2.0
// Integer arithmetic the layers share.
#pragma once

#include <cstdint>

namespace gemmtune {

// ceil(a / b) for b > 0 (tiles over a dimension, allocation granules); 0 for b <= 0.
inline int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

}  // namespace gemmtune
