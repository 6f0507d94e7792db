// SPDX-License-Identifier: Apache-2.0
// Evaluation in a separate worker process, so that a driver crash or a kernel that never ends
// costs one configuration instead of the whole search. The worker (`gemmtune worker`) builds its
// own evaluator and talks JSON lines over a socket. A worker that dies is restarted and the
// configuration tried once more alone (the culprit may have been a background compilation); dying
// again makes it kCrashed. A worker that does not answer in time is killed and the configuration
// is kTimeout. A fresh worker is started for the next configuration.
//
// Protocol, one JSON object per line. Worker → tuner first: {"ready": true, "description": "..."}
// or {"fatal": "message"}. Tuner → worker: {"op": "prepare", "problem": P, "configs": [C...]}
// (no answer) and {"op": "evaluate", "problem": P, "config": C, "stop_above_ms": T (optional,
// EvaluationHint)}, answered by {"result": R}.
// The worker exits when the socket closes.
#pragma once

#include <sys/types.h>

#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/eval/evaluator.hpp"

namespace gemmtune {

struct WorkerOptions {
  // The worker's command line; the channel is file descriptor 3 of the worker.
  std::vector<std::string> argv;
  // The template the worker measures (its --kernel): requests name it inside their problem.
  std::string kernel = kDefaultKernel;
  double eval_timeout_s = 120;   // per evaluation, compilation included
  double start_timeout_s = 120;  // from start to the "ready" line (device initialization)
};

class WorkerEvaluator : public Evaluator {
 public:
  explicit WorkerEvaluator(WorkerOptions options);
  ~WorkerEvaluator() override;

  Result evaluate(const Problem& problem, const Configuration& config) override;
  Result evaluate_hinted(const Problem& problem, const Configuration& config,
                         const EvaluationHint& hint) override;
  void prepare(const Problem& problem, const std::vector<Configuration>& upcoming) override;
  std::string description() const override;

  // Workers started so far (1 + restarts after crashes and timeouts).
  int starts() const { return starts_; }
  pid_t pid() const { return pid_; }

 private:
  enum class Read { kLine, kTimeout, kClosed };
  // Starts a worker, sending it the configurations to prepare when `resend_prepared`; throws
  // Error (device) when it does not come up.
  void start(bool resend_prepared);
  void ensure_started(bool resend_prepared);
  // One evaluation request; a dead or silent worker is stopped and reported in the Result.
  Result attempt(const nlohmann::json& problem, const Configuration& config,
                 const EvaluationHint& hint);
  // Ends the worker: closes the channel and kills it when `kill` (else waits briefly).
  std::string stop(bool kill);
  bool send(const nlohmann::json& j);
  Read read_line(double timeout_s, std::string* line);

  WorkerOptions options_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
  std::string description_;
  int starts_ = 0;
  int failed_starts_ = 0;
  // Prepared but not yet evaluated configurations, sent again to a restarted worker.
  std::deque<std::pair<nlohmann::json, nlohmann::json>> prepared_;
};

}  // namespace gemmtune
