// SPDX-License-Identifier: Apache-2.0
#include "src/core/configuration.hpp"

#include <cctype>
#include <sstream>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {
std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}
}  // namespace

std::string to_string(const Configuration& config) {
  std::ostringstream out;
  bool first = true;
  for (const auto& [name, value] : config) {
    if (!first) out << ',';
    out << name << '=' << value;
    first = false;
  }
  return out.str();
}

Configuration parse_configuration(const std::string& text) {
  Configuration config;
  std::string item;
  std::string normalized = text;
  for (auto& c : normalized) {
    if (c == ';') c = ',';
  }
  // No text is no parameter; an empty item between separators is a slip ("MWG=64,,").
  if (trim(normalized).empty()) return config;
  normalized += ',';  // so that a separator at the end leaves an empty last item
  std::istringstream in(normalized);
  while (std::getline(in, item, ',')) {
    item = trim(item);
    if (item.empty()) {
      throw invalid_argument("'" + text + "' has an empty item (two separators in a row, or one " +
                             "at an end)");
    }
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw invalid_argument("parameter '" + item + "' has no value (expected NAME=VALUE)");
    }
    const std::string name = trim(item.substr(0, eq));
    const std::string value = trim(item.substr(eq + 1));
    if (name.empty()) throw invalid_argument("parameter item '" + item + "' has no name");
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
        throw invalid_argument("parameter name '" + name + "' has an invalid character");
      }
    }
    size_t used = 0;
    long long parsed = 0;
    try {
      parsed = std::stoll(value, &used, 10);
    } catch (const std::exception&) {
      used = 0;
    }
    if (value.empty() || used != value.size()) {
      throw invalid_argument("parameter " + name + " has a non-integer value '" + value + "'");
    }
    if (config.count(name)) throw invalid_argument("parameter " + name + " is given twice");
    config[name] = parsed;
  }
  return config;
}

Configuration merge_configuration(const Configuration& base, const Configuration& overrides,
                                  bool strict) {
  Configuration merged = base;
  for (const auto& [name, value] : overrides) {
    if (strict && !base.count(name)) throw invalid_argument("unknown parameter " + name);
    merged[name] = value;
  }
  return merged;
}

nlohmann::json configuration_to_json(const Configuration& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : config) j[name] = value;
  return j;
}

Configuration configuration_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw invalid_argument("a configuration must be a JSON object");
  Configuration config;
  for (const auto& [name, value] : j.items()) {
    if (!value.is_number_integer()) {
      throw invalid_argument("configuration value of " + name + " is not an integer");
    }
    config[name] = value.get<int64_t>();
  }
  return config;
}

}  // namespace gemmtune
