// SPDX-License-Identifier: Apache-2.0
// CMakeLists.txt gives this file alone the recorded values as definitions: a changed value
// recompiles one small object, and the files that use the values stay in their unity batches.
#include "src/core/configured.hpp"

#ifndef GEMMTUNE_CONFIGURED_SOURCE_DIR
#define GEMMTUNE_CONFIGURED_SOURCE_DIR ""
#endif
#ifndef GEMMTUNE_CONFIGURED_INSTALL_PREFIX
#define GEMMTUNE_CONFIGURED_INSTALL_PREFIX ""
#endif
#ifndef GEMMTUNE_CONFIGURED_AMD_CLANG
#define GEMMTUNE_CONFIGURED_AMD_CLANG ""
#endif
#ifndef GEMMTUNE_CONFIGURED_AMD_BITCODE
#define GEMMTUNE_CONFIGURED_AMD_BITCODE ""
#endif

namespace gemmtune::configured {

std::string source_dir() {
  return GEMMTUNE_CONFIGURED_SOURCE_DIR;
}

std::string install_prefix() {
  return GEMMTUNE_CONFIGURED_INSTALL_PREFIX;
}

std::string amd_clang() {
  return GEMMTUNE_CONFIGURED_AMD_CLANG;
}

std::string amd_bitcode() {
  return GEMMTUNE_CONFIGURED_AMD_BITCODE;
}

}  // namespace gemmtune::configured
