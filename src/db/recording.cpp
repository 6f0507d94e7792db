// SPDX-License-Identifier: Apache-2.0
#include "src/db/recording.hpp"

#include <algorithm>
#include <sstream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/db/file_text.hpp"

namespace gemmtune {

namespace {

// The first line of `text` that is not blank.
std::string first_record(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  }
  return "";
}

bool journal_text(const std::string& text) {
  const auto j = nlohmann::json::parse(first_record(text), nullptr, false);
  if (!j.is_object()) return false;
  const std::string type = j.value("type", "");
  return type == "header" || type == "result";
}

// Where the last whole entry of a Kernel Tuner cache's "cache" object ends (one past its closing
// brace), or 0 when none is whole. A scan of the JSON structure: depth, strings and escapes.
size_t end_of_last_cache_entry(const std::string& text) {
  int depth = 0;
  bool in_string = false, escaped = false, in_cache = false;
  size_t string_start = 0, end = 0;
  std::string member;  // the last name read at the top level
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (depth == 1) member = text.substr(string_start, i - string_start);
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      string_start = i + 1;
    } else if (c == '{' || c == '[') {
      if (depth == 1) in_cache = c == '{' && member == "cache";
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
      if (in_cache && depth == 2 && c == '}') end = i + 1;
      if (depth <= 1) in_cache = false;
    }
  }
  return end;
}

// 1-based line of byte `offset`.
size_t line_of(const std::string& text, size_t offset) {
  return 1 + size_t(std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n'));
}

// The document of a JSON file; a Kernel Tuner cache cut short is closed after its last whole
// entry (it is written entry by entry, so a killed run leaves one cut mid-entry).
nlohmann::ordered_json parse_document(const std::string& path, const std::string& text) {
  try {
    return nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::out_of_range& e) {
    // Not a file cut short (that is a syntax error): a figure such as 1e999 that no double holds.
    throw invalid_file(path, describe_out_of_range(text, e));
  } catch (const nlohmann::json::parse_error& e) {
    const bool at_end = e.byte >= text.size();
    const size_t cut = at_end ? end_of_last_cache_entry(text) : 0;
    if (cut == 0) {
      throw invalid_file(path, "line " + std::to_string(line_of(text, e.byte)) +
                                   ": not valid JSON" + (at_end ? " (the file ends early)" : ""));
    }
    spdlog::warn(
        "{}: the file ends at line {} in the middle of an entry (a run still writing, or "
        "stopped); read up to its last whole entry",
        path, line_of(text, text.size()));
    return nlohmann::ordered_json::parse(text.substr(0, cut) + "}}");
  }
}

}  // namespace

namespace {
constexpr const char* kKernelTunerCache = "a Kernel Tuner cache file";
constexpr const char* kT4Results = "T4 results";
}  // namespace

std::string recording_document_kind(const nlohmann::ordered_json& doc) {
  if (!doc.is_object()) return "";
  if (doc.contains("cache") && doc.contains("tune_params")) return kKernelTunerCache;
  if (doc.contains("results") && doc.contains("schema_version")) return kT4Results;
  return "";
}

bool is_journal_file(const std::string& path) {
  return journal_text(read_file_text(path));
}

Journal read_recording(const std::string& path) {
  const std::string text = read_file_text(path);
  if (journal_text(text)) return read_journal(path);
  // In file order: a cache lists its entries in the order they were measured.
  const nlohmann::ordered_json doc = parse_document(path, text);
  try {
    const std::string kind = recording_document_kind(doc);
    if (kind == kKernelTunerCache) return kernel_tuner_cache_journal(path, doc);
    if (kind == kT4Results) return t4_results_journal(path, doc);
  } catch (const nlohmann::ordered_json::exception& e) {
    // A field of the wrong type: nlohmann names the type expected.
    throw invalid_file(path, e.what());
  }
  throw invalid_file(path,
                     "is neither a gemmtune journal, a Kernel Tuner cache file (with \"cache\" and "
                     "\"tune_params\") nor T4 results (with \"results\" and \"schema_version\")");
}

}  // namespace gemmtune
