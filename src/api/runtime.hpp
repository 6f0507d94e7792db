// SPDX-License-Identifier: Apache-2.0
// The state behind the calls: per (context, device) a ProgramBuilder (programs in memory and in
// the binary cache) and the configuration plans of the problems seen; per queue the compiled
// GemmCalls (the one call path of src/eval), each with its own cl_kernels, padding buffers and
// split-K workspace. A queue's calls are bound and enqueued under its lock, so no cl_kernel is
// ever used by two threads at once; queues and contexts in use are retained until ClearCache.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "gemmtune/gemmtune.hpp"
#include "src/api/choice.hpp"
#include "src/eval/gemm_call.hpp"

namespace gemmtune::api {

// A failure with the status the API returns for it.
class ApiError : public std::runtime_error {
 public:
  ApiError(StatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  StatusCode code() const { return code_; }

 private:
  StatusCode code_;
};

// Runs `problem` on `buffers` through `queue`; `event` (may be null) gets an event that completes
// with the call's last launch.
void run(cl_command_queue queue, const Problem& problem, const GemmBuffers& buffers,
         cl_event* event);

// The choice a call of `problem` on `queue` would run (the one that compiled before, else the
// first), with the device and the notes.
struct Explained {
  DeviceInfo device;
  Choice choice;
  std::vector<std::string> notes;
};
Explained explain(cl_command_queue queue, const Problem& problem);

// Compiles `problem`'s call on `queue`'s device (its program then lies in memory and on disk).
void warm_up(cl_command_queue queue, const Problem& problem);

// Drops every state (see ClearCache).
void clear_all();

}  // namespace gemmtune::api
