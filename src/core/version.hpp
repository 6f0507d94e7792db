// SPDX-License-Identifier: Apache-2.0
#pragma once

#ifndef GEMMTUNE_VERSION
#define GEMMTUNE_VERSION "0.0.0"
#endif

namespace gemmtune {
inline const char* version() { return GEMMTUNE_VERSION; }
}  // namespace gemmtune
