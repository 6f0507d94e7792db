// SPDX-License-Identifier: Apache-2.0
// spdlog is configured once, by the CLI's main; library code only calls spdlog::info etc.
#pragma once

#include <string>

namespace gemmtune {

// level: "trace", "debug", "info", "warn", "error", "off". Logs go to stderr so that stdout
// carries only tables and --json output.
void setup_logging(const std::string& level);

}  // namespace gemmtune
