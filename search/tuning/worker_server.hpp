// SPDX-License-Identifier: Apache-2.0
// The worker's end of the channel that WorkerEvaluator (worker_evaluator.hpp, with the protocol)
// talks to: `gemmtune worker` builds its own evaluator (OpenCL on a device, or a replay) and
// answers the tuner's requests until the channel closes.
#pragma once

#include <string>

#include "src/eval/evaluator_factory.hpp"

namespace gemmtune {

struct WorkerServeOptions {
  int fd = 3;               // the channel to the tuner
  std::string device;       // a device selector (device.hpp)
  std::string devices_dir;  // folder of device profiles; "" = found as usual (data_paths.hpp)
  std::string kernel;       // the declaration the device evaluator measures
  std::string replay;       // answer from a recorded space instead of a device
  double replay_delay_ms = 0;
  EvaluatorOptions eval;  // its templates_dir "" = found as usual
};

// Builds the evaluator, says "ready" (or "fatal" and throws), then answers "prepare" and
// "evaluate" requests until the channel closes. An evaluation that throws is answered as that
// configuration's failure; an unreadable or unknown request throws Error(kInternal).
void serve_worker(const WorkerServeOptions& options);

}  // namespace gemmtune
