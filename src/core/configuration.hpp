// SPDX-License-Identifier: Apache-2.0
// A configuration: one value for each tunable parameter of a kernel template, ordered by name so
// that equal configurations print and hash the same.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace gemmtune {

using Configuration = std::map<std::string, int64_t>;

// "MWG=64,NWG=64" (names sorted). Empty configuration gives "".
std::string to_string(const Configuration& config);

// Parses "MWG=64, NWG=64" (spaces allowed, ';' also separates). Throws Error naming the bad item.
Configuration parse_configuration(const std::string& text);

// Values of `overrides` replace those of `base`; names absent from `base` are an error when
// `strict` (the message names the unknown parameter).
Configuration merge_configuration(const Configuration& base, const Configuration& overrides,
                                  bool strict);

nlohmann::json configuration_to_json(const Configuration& config);
Configuration configuration_from_json(const nlohmann::json& j);

}  // namespace gemmtune
