// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/progress.hpp"

#include <fmt/format.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace gemmtune {

ProgressReporter::ProgressReporter(bool terminal, std::string label, double flops)
    : terminal_(terminal), label_(std::move(label)), flops_(flops) {
  if (terminal_) {
    // A logger of its own whose lines return to the start and clear instead of ending.
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    sink->set_formatter(std::make_unique<spdlog::pattern_formatter>(
        "\r\033[K%v", spdlog::pattern_time_type::local, std::string()));
    status_ = std::make_shared<spdlog::logger>("progress", sink);
    status_->set_level(spdlog::level::info);
    status_->flush_on(spdlog::level::info);
  }
  last_ = std::chrono::steady_clock::now() - std::chrono::hours(1);
}

ProgressReporter::~ProgressReporter() {
  finish();
}

std::string ProgressReporter::short_config(const Configuration& c, size_t width) {
  std::string s = to_string(c);
  if (s.size() > width && width > 3) s = s.substr(0, width - 3) + "...";
  return s;
}

std::string ProgressReporter::duration(double seconds) {
  const auto s = int64_t(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string ProgressReporter::line(const TuneProgress& p) const {
  std::string best = "none yet";
  if (p.best) {
    best = fmt::format("{:.1f} GFLOPS {}", p.best->gflops, short_config(p.best->config, 60));
  }
  return fmt::format("{} {}/{} evaluated, {} failed, best {} | {} elapsed, ~{} left", label_,
                     p.done, p.limit, p.failed, best, duration(p.elapsed_s),
                     duration(p.remaining_s));
}

void ProgressReporter::update(const TuneProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (terminal_) {
    if (since < 0.2 && !p.new_best && p.done != p.limit) return;
    last_line_ = line(p);
    status_->info(last_line_);
    shown_ = true;
    last_ = now;
    return;
  }
  if (p.new_best && p.best) {
    spdlog::info("{} [{}/{}] new best {:.2f} GFLOPS ({:.4f} ms): {}", label_, p.done, p.limit,
                 p.best->gflops, p.best->time.median_ms, to_string(p.best->config));
  }
  if (since >= 10 || p.done == p.limit) {
    spdlog::info(line(p));
    last_ = now;
  }
}

void ProgressReporter::finish() {
  if (terminal_ && shown_) {
    // The last state stays on screen, ended by a newline so that later output starts fresh.
    for (auto& sink : status_->sinks()) {
      sink->set_formatter(std::make_unique<spdlog::pattern_formatter>(
          "\r\033[K%v", spdlog::pattern_time_type::local, std::string("\n")));
    }
    status_->info(last_line_);
    shown_ = false;
  }
}

}  // namespace gemmtune
