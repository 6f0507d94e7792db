// Whole-file reading for the recordings gemmtune replays: journals and other tools' result files
// may be gzip-compressed, and are read the same way either way.
#pragma once

#include <string>

namespace gemmtune {

// The bytes of `path`, gzip data inflated (a plain file is read as it is). A .gz file in a build
// without zlib, an unreadable file or corrupt compressed data throws Error(kInvalidFile).
std::string read_file_text(const std::string& path);

// Whether `s` ends with `suffix`.
bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace gemmtune
