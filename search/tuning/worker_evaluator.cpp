// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/worker_evaluator.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/tuning/channel.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

WorkerEvaluator::WorkerEvaluator(WorkerOptions options) : options_(std::move(options)) {
  if (options_.argv.empty()) throw Error(ErrorCode::kInternal, "worker command line is empty");
}

WorkerEvaluator::~WorkerEvaluator() {
  stop(false);
}

std::string WorkerEvaluator::description() const {
  return description_.empty() ? "worker process" : description_ + " (in a worker process)";
}

void WorkerEvaluator::start(bool resend_prepared) {
  // The channel is the worker's file descriptor 3.
  ChildProcess child = start_child(options_.argv, {3});
  pid_ = child.pid;
  fd_ = child.fd;
  buffer_.clear();
  ++starts_;

  std::string line;
  const Read got = read_line(options_.start_timeout_s, &line);
  std::string problem;
  if (got == Read::kLine) {
    try {
      const auto j = nlohmann::json::parse(line);
      if (j.value("ready", false)) {
        description_ = j.value("description", "");
        failed_starts_ = 0;
        // A restarted worker compiles again what its predecessor was asked to prepare.
        if (!resend_prepared) return;
        for (const auto& [problem_json, config_json] : prepared_) {
          send({{"op", "prepare"}, {"problem", problem_json}, {"configs", {config_json}}});
        }
        return;
      }
      problem = j.value("fatal", "unexpected first message " + line);
    } catch (const nlohmann::json::exception&) {
      problem = "unreadable first message: " + line;
    }
  } else if (got == Read::kTimeout) {
    problem = fmt::format("no ready message within {} s", options_.start_timeout_s);
  } else {
    problem = "it ended before it was ready";
  }
  const std::string how = stop(true);
  throw Error(ErrorCode::kDevice, "the evaluation worker did not start: " + problem +
                                      (how.empty() ? "" : " (" + how + ")"));
}

std::string WorkerEvaluator::stop(bool kill) {
  ChildProcess child{pid_, fd_};
  pid_ = -1;
  fd_ = -1;
  return end_child(child, kill);
}

bool WorkerEvaluator::send(const nlohmann::json& j) {
  return write_line(fd_, j.dump());
}

WorkerEvaluator::Read WorkerEvaluator::read_line(double timeout_s, std::string* line) {
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Read::kLine;
    }
    const double left = timeout_s - seconds_since(t0);
    if (left <= 0) return Read::kTimeout;
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, int(std::min(left * 1000, 1000.0)) + 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      return Read::kClosed;
    }
    if (r == 0) continue;
    char buf[65536];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::kClosed;
    buffer_.append(buf, size_t(n));
  }
}

void WorkerEvaluator::prepare(const Problem& problem, const std::vector<Configuration>& upcoming) {
  nlohmann::json configs = nlohmann::json::array();
  const nlohmann::json pj = problem_json(problem, options_.kernel);
  for (const auto& c : upcoming) {
    configs.push_back(configuration_to_json(c));
    prepared_.emplace_back(pj, configuration_to_json(c));
  }
  // Only a hint: a worker that is not running gets the list when it starts.
  if (pid_ >= 0) send({{"op", "prepare"}, {"problem", pj}, {"configs", configs}});
}

void WorkerEvaluator::ensure_started(bool resend_prepared) {
  if (pid_ >= 0) return;
  try {
    start(resend_prepared);
  } catch (const Error&) {
    // Several failed starts in a row mean the device, not a configuration, is the problem.
    if (++failed_starts_ >= 3) throw;
    spdlog::warn("the evaluation worker did not start; trying again");
    start(resend_prepared);
  }
}

Result WorkerEvaluator::evaluate(const Problem& problem, const Configuration& config) {
  return evaluate_hinted(problem, config, {});
}

Result WorkerEvaluator::evaluate_hinted(const Problem& problem, const Configuration& config,
                                        const EvaluationHint& hint) {
  const nlohmann::json pj = problem_json(problem, options_.kernel);
  const nlohmann::json cj = configuration_to_json(config);
  for (auto it = prepared_.begin(); it != prepared_.end(); ++it) {
    if (it->first == pj && it->second == cj) {
      prepared_.erase(it);
      break;
    }
  }
  ensure_started(true);
  Result r = attempt(pj, config, hint);
  if (r.status != Status::kCrashed) return r;
  // The worker may have died compiling another configuration in the background: try this one
  // again alone in a fresh worker before blaming it.
  spdlog::warn("{}: the worker died ({}); trying it again alone", to_string(config), r.message);
  ensure_started(false);
  Result again = attempt(pj, config, hint);
  if (again.status == Status::kCrashed) {
    spdlog::warn("{}: the worker died again; recorded as crashed", to_string(config));
  }
  // The configurations still to come are compiled again by the next worker.
  if (pid_ >= 0) {
    for (const auto& [problem_json, config_json] : prepared_) {
      send({{"op", "prepare"}, {"problem", problem_json}, {"configs", {config_json}}});
    }
  }
  return again;
}

Result WorkerEvaluator::attempt(const nlohmann::json& pj, const Configuration& config,
                                const EvaluationHint& hint) {
  nlohmann::json request = {
      {"op", "evaluate"}, {"problem", pj}, {"config", configuration_to_json(config)}};
  if (hint.stop_above_ms > 0) request["stop_above_ms"] = hint.stop_above_ms;
  std::string line;
  Read got = Read::kClosed;
  if (send(request)) {
    got = read_line(options_.eval_timeout_s, &line);
  }
  if (got == Read::kLine) {
    try {
      const auto j = nlohmann::json::parse(line);
      if (j.contains("result")) {
        Result r = j["result"].get<Result>();
        r.config = config;
        return r;
      }
      const std::string fatal = j.value("fatal", line);
      stop(true);
      return Result::failure(config, Status::kRunFailed, "worker failed: " + fatal);
    } catch (const std::exception& e) {
      stop(true);
      return Result::failure(config, Status::kRunFailed,
                             std::string("unreadable answer from the worker: ") + e.what());
    }
  }
  if (got == Read::kTimeout) {
    stop(true);
    spdlog::warn("{}: no result within {} s; worker killed and restarted", to_string(config),
                 options_.eval_timeout_s);
    return Result::failure(config, Status::kTimeout,
                           fmt::format("no result within {} s (the kernel or the driver hangs); "
                                       "worker restarted",
                                       options_.eval_timeout_s));
  }
  const std::string how = stop(false);
  return Result::failure(config, Status::kCrashed, "the worker process died (" + how + ")");
}

}  // namespace gemmtune
