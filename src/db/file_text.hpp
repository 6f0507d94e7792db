// SPDX-License-Identifier: Apache-2.0
// Whole-file reading for the recordings gemmtune replays: journals and other tools' result files
// may be gzip-compressed, and are read the same way either way.
#pragma once

#include <cstdint>
#include <string>

#include "src/core/json_util.hpp"

namespace gemmtune {

// The bytes of `path`, gzip data inflated (a plain file is read as it is), of at most `limit`
// bytes once inflated. Only a regular file is read (never a device, FIFO or folder). A .gz file in
// a build without zlib, an unreadable, oversized or irregular file or corrupt compressed data
// throws Error(kInvalidFile).
std::string read_file_text(const std::string& path, uint64_t limit = kMaxJournalBytes);

// Whether `s` ends with `suffix`.
bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace gemmtune
