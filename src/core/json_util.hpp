// SPDX-License-Identifier: Apache-2.0
// Reading and writing JSON files: errors name the file, the position and what was expected;
// writes are atomic (temporary file in the same folder, then rename) and keep the file's mode;
// a file without write permission is refused, never replaced behind its owner's back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gemmtune {

// A field that may be missing or null: nullopt then.
template <typename T>
std::optional<T> optional_field(const nlohmann::json& j, const char* name) {
  if (!j.contains(name) || j[name].is_null()) return std::nullopt;
  return j[name].get<T>();
}

// The most gemmtune reads of one file: a JSON document (a database, a profile, a template) and a
// journal or evaluation cache (after decompression). Larger files are refused, not read, so that
// a wrong path cannot make a command or a program linking the library take all memory.
constexpr uint64_t kMaxDocumentBytes = uint64_t{256} << 20;  // 256 MiB
constexpr uint64_t kMaxJournalBytes = uint64_t{1} << 30;     // 1 GiB

// Opens `path` for reading as a regular file: a folder, a device (/dev/zero), a FIFO or a socket
// is refused with Error(kInvalidFile) at once, without blocking. Returns the file descriptor.
int open_regular_file(const std::string& path);
// For a descriptor opened with O_NONBLOCK: closes it and throws Error(kInvalidFile) naming `path`
// unless it is a regular file, then makes it blocking.
void require_regular_file(int fd, const std::string& path);

// Reads a regular file of at most `limit` bytes; errors name the file.
std::string read_text_file(const std::string& path, uint64_t limit = kMaxDocumentBytes);

nlohmann::json read_json_file(const std::string& path);
// Parses `text`; a syntax error names `origin` and the byte position, a number too large for a
// double (1e999) names the field that holds it.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);
// What is wrong with `text` when parsing it threw `e` (a number out of range): the field, line and
// column of the number ("field 'gflops' at line 3, column 12: number 1e999 is out of range").
std::string describe_out_of_range(const std::string& text, const nlohmann::json::exception& e);

// Writes `content` to `path` through a temporary file and rename, so that readers never see a
// partial file and a killed writer leaves the old file intact.
void write_file_atomic(const std::string& path, const std::string& content);
void write_json_atomic(const std::string& path, const nlohmann::json& j);

// Removes the temporary files that killed writers of `path` left (write_file_atomic's, of a
// process that no longer runs, written over ten minutes ago), which would otherwise stay beside
// the file forever. Scans the folder: for files written rarely (databases), not for caches.
void remove_stale_temporaries(const std::string& path);

// Throws Error(kInvalidFile) naming `path` when write_file_atomic could not write it: a folder, a
// file without write permission, or a parent folder that cannot be created or written. For
// commands that would otherwise find out only after hours of measuring.
void check_writable_file(const std::string& path);

std::string require_string(const nlohmann::json& j, const std::string& field,
                           const std::string& origin);

}  // namespace gemmtune
