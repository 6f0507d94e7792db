// SPDX-License-Identifier: Apache-2.0
#include "src/core/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"

namespace gemmtune {

void setup_logging(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") {
    throw invalid_argument("unknown log level '" + level +
                           "' (expected trace, debug, info, warn, error or off)");
  }
  auto logger = spdlog::get("gemmtune");
  if (!logger) {
    logger = spdlog::stderr_color_mt("gemmtune");
    logger->set_pattern("%^[%l]%$ %v");
    spdlog::set_default_logger(logger);
  }
  spdlog::set_level(lvl);
}

}  // namespace gemmtune
