// SPDX-License-Identifier: Apache-2.0
// What the configure step recorded about the machine that built gemmtune: the source folder, the
// install prefix and where the offline AMD compiler and bitcode were found. Each is empty where
// nothing was recorded; every use has other places to look first.
#pragma once

#include <string>

namespace gemmtune::configured {

// The source folder the build was configured from (the data folders' last resort).
std::string source_dir();
// CMAKE_INSTALL_PREFIX (where an installed library's system databases live).
std::string install_prefix();
// The clang with an AMDGPU backend found at configure time.
std::string amd_clang();
// The folder of the ROCm device libraries' bitcode found at configure time.
std::string amd_bitcode();

}  // namespace gemmtune::configured
