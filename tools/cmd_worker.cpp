// SPDX-License-Identifier: Apache-2.0
// gemmtune worker: the evaluation process that `gemmtune search` starts and watches. It builds its
// own evaluator (OpenCL on a device, or a replay) and answers JSON lines on file descriptor 3
// (protocol in search/tuning/worker_evaluator.hpp; the loop in search/tuning/worker_server.cpp).
// Not meant to be run by hand.
#include <memory>

#include "search/tuning/worker_server.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

void set_worker_command(CLI::App& app, GlobalOptions& options) {
  auto s = std::make_shared<WorkerServeOptions>();
  auto* cmd = app.add_subcommand("worker", "Evaluation process started by search (internal)");
  cmd->group("");  // hidden from --help
  cmd->add_option("--fd", s->fd, "File descriptor of the channel to the tuner");
  add_device_option(*cmd, s->device);
  cmd->add_option("--kernel", s->kernel, "Kernel the evaluator measures");
  cmd->add_option("--replay", s->replay, "Answer from a recorded space instead of a device");
  cmd->add_option("--replay-delay-ms", s->replay_delay_ms, "Sleep per replayed evaluation");
  add_measure_options(*cmd, s->eval, kTiming | kDataSeed | kCacheDir | kCompileThreads);
  cmd->callback([&options, s]() {
    WorkerServeOptions serve = *s;
    serve.devices_dir = options.devices_dir;
    serve.eval.templates_dir = options.templates_dir;
    serve_worker(serve);
  });
}

}  // namespace gemmtune::cli
