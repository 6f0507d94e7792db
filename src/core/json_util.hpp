// Reading and writing JSON files: errors name the file, the position and what was expected;
// writes are atomic (temporary file in the same folder, then rename).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gemmtune {

nlohmann::json read_json_file(const std::string& path);
// Parses `text`; a syntax error names `origin` and the byte position.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

// Writes `content` to `path` through a temporary file and rename, so that readers never see a
// partial file and a killed writer leaves the old file intact.
void write_file_atomic(const std::string& path, const std::string& content);
void write_json_atomic(const std::string& path, const nlohmann::json& j);

std::string read_text_file(const std::string& path);

std::string require_string(const nlohmann::json& j, const std::string& field,
                           const std::string& origin);
double require_number(const nlohmann::json& j, const std::string& field, const std::string& origin);

}  // namespace gemmtune
