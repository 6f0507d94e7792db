// SPDX-License-Identifier: Apache-2.0
// Locating the data folders (kernel_templates/, devices/) that are read at run time.
#pragma once

#include <string>

namespace gemmtune {

// The folder of the running executable.
std::string executable_dir();

// Finds `name` (e.g. "kernel_templates"): `override_dir` when given (must exist), else
// $GEMMTUNE_DATA_DIR/name, next to the binary, one level up (a build folder in the source tree),
// ../share/gemmtune/name (an installed tree), and last the source folder the build was configured
// from. Throws Error listing where it looked.
std::string find_data_dir(const std::string& name, const std::string& override_dir);

}  // namespace gemmtune
