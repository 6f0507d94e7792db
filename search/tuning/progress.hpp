// SPDX-License-Identifier: Apache-2.0
// Search progress for people: one line rewritten in place on a terminal, plain log lines (each new
// best and a periodic summary) otherwise.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "search/tuning/tuner.hpp"

namespace spdlog {
class logger;
}

namespace gemmtune {

class ProgressReporter {
 public:
  // `terminal`: whether stderr is a terminal; `label` names the problem (e.g. the shape).
  ProgressReporter(bool terminal, std::string label, double flops);
  ~ProgressReporter();
  void update(const TuneProgress& p);
  // Ends the in-place line so that later output starts on a fresh line.
  void finish();

  // "MWG=64,NWG=32" shortened to `width` characters.
  static std::string short_config(const Configuration& c, size_t width);
  static std::string duration(double seconds);  // "1h02m", "3m05s", "12s"

 private:
  std::string line(const TuneProgress& p) const;
  bool terminal_;
  std::string label_;
  double flops_;
  std::shared_ptr<spdlog::logger> status_;
  std::chrono::steady_clock::time_point last_;
  bool shown_ = false;
  std::string last_line_;
};

}  // namespace gemmtune
