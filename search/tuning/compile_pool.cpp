// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/compile_pool.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "search/tuning/channel.hpp"
#include "src/core/error.hpp"
#include "src/core/problem_key.hpp"
#include "src/core/timing_stats.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

namespace {

using Clock = std::chrono::steady_clock;

// Builds do not depend on the shape (the same binary serves every shape of a problem family) nor
// on the runtime parameters, so a configuration announced for two shapes, or two configurations
// that differ only in runtime parameters, are built once.
std::string job_key(const CompilePoolOptions& o, const Problem& problem,
                    const Configuration& config) {
  return o.kernel + "|" + ProblemKey(problem, kWithoutShape).to_string() + " " +
         to_string(KernelSpec::built_in(config, o.runtime_parameters));
}

}  // namespace

class CompilePool::Impl {
  // A member type: an unnamed namespace's type in a member would warn in a unity batch.
  enum class JobState { kQueued, kBuilding, kDone };

 public:
  explicit Impl(CompilePoolOptions options) : options_(std::move(options)) {
    procs_.resize(size_t(std::max(1, options_.processes)));
  }

  ~Impl() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
      }
      wake();
      thread_.join();
    }
    // Whatever a worker is still building is no longer wanted: the search is over.
    for (auto& p : procs_) end_child(p.child, true);
    for (int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
  }

  // Queues the configurations not seen before; false when the pool has stopped.
  bool queue(const Problem& problem, const std::vector<Configuration>& configs) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stats_.stopped) return false;
      const nlohmann::json pj = problem_json(problem, options_.kernel);
      for (const auto& c : configs) {
        const std::string key = job_key(options_, problem, c);
        if (!jobs_.emplace(key, JobState::kQueued).second) continue;
        queue_.emplace_back(
            key, nlohmann::json{{"problem", pj}, {"config", configuration_to_json(c)}}.dump());
      }
      if (!thread_.joinable()) {
        if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
          stop_pool(std::string("cannot create a pipe: ") + std::strerror(errno));
          return false;
        }
        thread_ = std::thread([this] { loop(); });
      }
    }
    wake();
    return true;
  }

  // Called before the evaluator measures a configuration: one still queued is taken back (the
  // evaluator builds it now rather than wait for a worker to reach it), one being built is waited
  // for, so that the evaluator finds it in the cache. Returns how long a worker took to build it,
  // when one did.
  std::optional<double> before_evaluate(const Problem& problem, const Configuration& config) {
    const std::string key = job_key(options_, problem, config);
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return std::nullopt;
    if (it->second == JobState::kQueued) {
      it->second = JobState::kDone;  // the dispatcher skips it
      ++stats_.taken_back;
      return std::nullopt;
    }
    if (it->second == JobState::kBuilding) {
      ++stats_.waited;
      const auto since = Clock::now();
      const bool finished =
          done_cv_.wait_for(lock, std::chrono::duration<double>(options_.wait_s), [&] {
            auto j = jobs_.find(key);
            return j == jobs_.end() || j->second != JobState::kBuilding;
          });
      stats_.wait_s += ms_since(since) / 1e3;
      if (!finished) {
        spdlog::debug("compile pool: {} still building after {} s; the evaluator builds it",
                      to_string(config), options_.wait_s);
      }
    }
    const auto built = build_ms_.find(key);
    if (built == build_ms_.end()) return std::nullopt;
    const double ms = built->second;
    build_ms_.erase(built);
    return ms;
  }

  // Whether a measurement of `config` would start without waiting for a worker's build.
  bool ready(const Problem& problem, const Configuration& config) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = jobs_.find(job_key(options_, problem, config));
    return it == jobs_.end() || it->second == JobState::kDone;
  }

  // The measurement made a program of a worker's build in `ms`.
  void loaded(double ms) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.load_s += ms / 1e3;
  }

  Stats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  struct Proc {
    ChildProcess child;
    std::string buffer;
    std::string job;  // the key being built, "" when idle
    Clock::time_point since;
    size_t finished = 0;
    std::string fatal;  // what the worker said before it gave up
  };

  void wake() {
    const char c = 1;
    if (wake_[1] >= 0) (void)!::write(wake_[1], &c, 1);
  }

  // The dispatcher: hands queued configurations to idle workers and collects their answers.
  void loop() {
    std::vector<pollfd> fds;
    std::vector<size_t> which;
    while (true) {
      fds.clear();
      which.clear();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return;
        dispatch();
        fds.push_back({wake_[0], POLLIN, 0});
        for (size_t i = 0; i < procs_.size(); ++i) {
          if (procs_[i].child.fd < 0) continue;
          fds.push_back({procs_[i].child.fd, POLLIN, 0});
          which.push_back(i);
        }
      }
      const int r = ::poll(fds.data(), fds.size(), 500);
      if (r < 0 && errno != EINTR) {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_pool(std::string("poll failed: ") + std::strerror(errno));
        return;
      }
      char drain[256];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t k = 1; r > 0 && k < fds.size(); ++k) {
        if (fds[k].revents != 0) receive(procs_[which[k - 1]]);
      }
      for (auto& p : procs_) {
        if (!p.job.empty() && std::chrono::duration<double>(Clock::now() - p.since).count() >
                                  options_.build_timeout_s) {
          died(p, fmt::format("no answer within {} s", options_.build_timeout_s));
        }
      }
    }
  }

  // Under the lock: starts workers where there is work and gives each idle one a configuration.
  void dispatch() {
    for (auto& p : procs_) {
      if (stats_.stopped) return;
      if (!p.job.empty()) continue;
      // The next configuration still wanted.
      while (!queue_.empty() && jobs_[queue_.front().first] != JobState::kQueued) {
        queue_.pop_front();
      }
      if (queue_.empty()) return;
      if (p.child.pid < 0 && !start(p)) continue;
      if (!write_line(p.child.fd, queue_.front().second)) {
        died(p, "its channel closed");
        continue;
      }
      p.job = queue_.front().first;
      p.since = Clock::now();
      jobs_[p.job] = JobState::kBuilding;
      queue_.pop_front();
    }
  }

  bool start(Proc& p) {
    try {
      // Requests on the worker's stdin, answers on its stdout.
      p.child = start_child(options_.argv, {0, 1});
      p.buffer.clear();
      p.finished = 0;
      p.fatal.clear();
      ++stats_.starts;
      return true;
    } catch (const std::exception& e) {
      failed_once(e.what());
      return false;
    }
  }

  // Under the lock: reads what a worker wrote; the end of its channel means it died.
  void receive(Proc& p) {
    char buf[65536];
    const ssize_t n = ::read(p.child.fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      died(p, p.fatal.empty() ? "it ended" : p.fatal);
      return;
    }
    p.buffer.append(buf, size_t(n));
    std::vector<std::string> lines;
    take_lines(p.buffer, &lines);
    for (const auto& line : lines) answer(p, line);
  }

  void answer(Proc& p, const std::string& line) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      spdlog::debug("compile pool: unreadable line from a worker: {}", line);
      return;
    }
    if (j.contains("fatal")) {
      p.fatal = j.value("fatal", "");
      return;
    }
    if (!j.contains("outcome") || p.job.empty()) return;  // "ready", or nothing asked
    const std::string outcome = j.value("outcome", "");
    if (outcome == "built") {
      ++stats_.built;
      build_ms_[p.job] = ms_since(p.since);
      stats_.build_s += j.value("ms", 0.0) / 1e3;
      stats_.driver_s += j.value("driver_ms", 0.0) / 1e3;
    } else if (outcome == "cached") {
      ++stats_.cached;
    } else if (outcome == "invalid") {
      ++stats_.invalid;
    } else if (outcome == "failed") {
      ++stats_.failed;
      spdlog::debug("compile pool: build failed: {}", j.value("message", ""));
    }
    finish(p);
    ++p.finished;
    failures_in_a_row_ = 0;
  }

  void finish(Proc& p) {
    if (p.job.empty()) return;
    jobs_[p.job] = JobState::kDone;
    p.job.clear();
    done_cv_.notify_all();
  }

  // Under the lock: a worker ended or stopped answering. Its configuration counts as failed here
  // (the evaluator builds it again and finds out for itself); the slot starts a new worker when
  // there is work.
  void died(Proc& p, const std::string& why) {
    const bool building = !p.job.empty();
    const std::string how = end_child(p.child, true);
    spdlog::debug("compile pool: a worker ended ({}; {})", why, how);
    if (building) ++stats_.failed;
    finish(p);
    if (p.finished == 0 || building) failed_once(why);
  }

  // Workers that keep failing mean the command line or the device is the problem, not a
  // configuration: the pool stops and the evaluator compiles as it did without one.
  void failed_once(const std::string& why) {
    if (++failures_in_a_row_ >= std::max(3, options_.processes)) stop_pool(why);
  }

  void stop_pool(const std::string& why) {
    if (stats_.stopped) return;
    stats_.stopped = true;
    spdlog::warn("compile pool stopped ({}); the evaluator compiles by itself", why);
    queue_.clear();
    for (auto& [key, state] : jobs_) state = JobState::kDone;
    for (auto& p : procs_) {
      end_child(p.child, true);
      p.job.clear();
    }
    done_cv_.notify_all();
  }

  CompilePoolOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable done_cv_;
  std::unordered_map<std::string, JobState> jobs_;
  // How long the workers took for the builds not yet measured, so that a result reports what its
  // configuration cost to build rather than the load of the binary the worker left.
  std::unordered_map<std::string, double> build_ms_;
  std::deque<std::pair<std::string, std::string>> queue_;  // key, request line
  std::vector<Proc> procs_;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  bool stopping_ = false;
  int failures_in_a_row_ = 0;
  Stats stats_;
};

CompilePool::CompilePool(std::unique_ptr<Evaluator> inner, CompilePoolOptions options)
    : inner_(std::move(inner)) {
  if (!inner_) throw Error(ErrorCode::kInternal, "compile pool without an evaluator");
  if (options.processes < 1 || options.argv.empty()) {
    throw Error(ErrorCode::kInternal, "compile pool without processes or worker command");
  }
  processes_ = options.processes;
  impl_ = std::make_unique<Impl>(std::move(options));
}

CompilePool::~CompilePool() = default;

namespace {

// The result of measuring a configuration that a worker may have built. Its compile_ms becomes
// the worker's build: what the configuration cost to build, not the load of the binary, which
// `loaded` is told of.
Result measure_built(Evaluator& inner, const Problem& problem, const Configuration& config,
                     const EvaluationHint& hint, std::optional<double> build_ms,
                     const std::function<void(double)>& loaded) {
  Result r = inner.evaluate_hinted(problem, config, hint);
  if (build_ms && r.binary_cached) {
    loaded(r.compile_ms);
    r.compile_ms = *build_ms;
  }
  return r;
}

}  // namespace

Result CompilePool::evaluate(const Problem& problem, const Configuration& config) {
  return evaluate_hinted(problem, config, {});
}

Result CompilePool::evaluate_hinted(const Problem& problem, const Configuration& config,
                                    const EvaluationHint& hint) {
  Impl* impl = impl_.get();
  return measure_built(*inner_, problem, config, hint, impl->before_evaluate(problem, config),
                       [impl](double ms) { impl->loaded(ms); });
}

namespace {

class SharedPoolEvaluator : public Evaluator {
 public:
  using Before = std::function<std::optional<double>(const Problem&, const Configuration&)>;
  using Ready = std::function<bool(const Problem&, const Configuration&)>;
  SharedPoolEvaluator(Before before, Ready ready, std::function<void(double)> loaded,
                      std::unique_ptr<Evaluator> inner, std::string pool)
      : before_(std::move(before)),
        ready_(std::move(ready)),
        loaded_(std::move(loaded)),
        inner_(std::move(inner)),
        pool_(std::move(pool)) {}
  Result evaluate(const Problem& problem, const Configuration& config) override {
    return evaluate_hinted(problem, config, {});
  }
  Result evaluate_hinted(const Problem& problem, const Configuration& config,
                         const EvaluationHint& hint) override {
    return measure_built(*inner_, problem, config, hint, before_(problem, config), loaded_);
  }
  bool ready(const Problem& problem, const Configuration& config) override {
    return ready_(problem, config);
  }
  std::string description() const override { return inner_->description() + " sharing " + pool_; }

 private:
  Before before_;
  Ready ready_;
  std::function<void(double)> loaded_;
  std::unique_ptr<Evaluator> inner_;
  std::string pool_;
};

}  // namespace

std::unique_ptr<Evaluator> CompilePool::share(std::unique_ptr<Evaluator> other) {
  Impl* impl = impl_.get();
  return std::make_unique<SharedPoolEvaluator>(
      [impl](const Problem& p, const Configuration& c) { return impl->before_evaluate(p, c); },
      [impl](const Problem& p, const Configuration& c) { return impl->ready(p, c); },
      [impl](double ms) { impl->loaded(ms); }, std::move(other),
      fmt::format("the {} compile processes", processes_));
}

void CompilePool::prepare(const Problem& problem, const std::vector<Configuration>& upcoming) {
  if (!impl_->queue(problem, upcoming)) inner_->prepare(problem, upcoming);
}

bool CompilePool::ready(const Problem& problem, const Configuration& config) {
  return impl_->ready(problem, config);
}

std::string CompilePool::description() const {
  return inner_->description() + fmt::format(" with {} compile processes", processes_);
}

CompilePool::Stats CompilePool::stats() const {
  return impl_->stats();
}

void to_json(nlohmann::json& j, const CompilePool::Stats& s) {
  j = {{"built", s.built},       {"cached", s.cached},         {"failed", s.failed},
       {"invalid", s.invalid},   {"taken_back", s.taken_back}, {"waited", s.waited},
       {"starts", s.starts},     {"stopped", s.stopped},       {"build_s", s.build_s},
       {"driver_s", s.driver_s}, {"wait_s", s.wait_s},         {"load_s", s.load_s}};
}

}  // namespace gemmtune
