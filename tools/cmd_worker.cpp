// gemmtune worker: the evaluation process that `gemmtune search` starts and watches. It builds its
// own evaluator (OpenCL on a device, or a replay) and answers JSON lines on file descriptor 3
// (protocol in search/tuning/worker_evaluator.hpp). Not meant to be run by hand.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <spdlog/spdlog.h>

#include "search/tuning/channel.hpp"
#include "src/core/error.hpp"
#include "src/device/device.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/eval/replay_evaluator.hpp"
#include "tools/commands.hpp"

namespace gemmtune::cli {

namespace {

struct WorkerSettings {
  int fd = 3;
  std::string device;
  std::string kernel;  // the declaration the device evaluator measures
  std::string replay;
  double replay_delay_ms = 0;
  EvaluatorOptions eval;
};

bool write_line(int fd, const nlohmann::json& j) {
  return gemmtune::write_line(fd, j.dump());
}

void run_worker(const GlobalOptions& options, const WorkerSettings& s) {
  std::unique_ptr<Evaluator> evaluator;
  try {
    if (!s.replay.empty()) {
      evaluator = std::make_unique<ReplayEvaluator>(s.replay, s.replay_delay_ms);
    } else {
      const auto profiles = load_profiles(options);
      const Device device = select_device(s.device, &profiles);
      if (s.kernel.empty()) throw invalid_argument("worker: --kernel or --replay is needed");
      evaluator = make_evaluator(s.kernel, device, profiles.match(device.info),
                                 evaluator_options(options, s.eval));
    }
  } catch (const std::exception& e) {
    write_line(s.fd, {{"fatal", e.what()}});
    throw;
  }
  if (!write_line(s.fd, {{"ready", true}, {"description", evaluator->description()}})) return;

  std::string buffer, line;
  while (read_line(s.fd, buffer, &line)) {
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(ErrorCode::kInternal, std::string("worker: unreadable request: ") + e.what());
    }
    const std::string op = request.value("op", "");
    const Problem problem = request.at("problem").get<Problem>();
    if (op == "prepare") {
      std::vector<Configuration> configs;
      for (const auto& c : request.at("configs")) configs.push_back(configuration_from_json(c));
      evaluator->prepare(problem, configs);
    } else if (op == "evaluate") {
      const Configuration config = configuration_from_json(request.at("config"));
      Result r;
      try {
        r = evaluator->evaluate(problem, config);
      } catch (const std::exception& e) {
        // The evaluator reports failures as results; anything thrown is still this
        // configuration's failure, not the worker's.
        r = Result::failure(config, Status::kRunFailed, e.what());
      }
      if (!write_line(s.fd, {{"result", r}})) return;
    } else {
      throw Error(ErrorCode::kInternal, "worker: unknown request '" + op + "'");
    }
  }
}

}  // namespace

void set_worker_command(CLI::App& app, GlobalOptions& options) {
  auto s = std::make_shared<WorkerSettings>();
  auto* cmd = app.add_subcommand("worker", "Evaluation process started by search (internal)");
  cmd->group("");  // hidden from --help
  cmd->add_option("--fd", s->fd, "File descriptor of the channel to the tuner");
  add_device_option(*cmd, s->device);
  cmd->add_option("--kernel", s->kernel, "Kernel the evaluator measures");
  cmd->add_option("--replay", s->replay, "Answer from a recorded space instead of a device");
  cmd->add_option("--replay-delay-ms", s->replay_delay_ms, "Sleep per replayed evaluation");
  add_measure_options(*cmd, s->eval, kTiming | kDataSeed | kCacheDir | kCompileThreads);
  cmd->callback([&options, s]() { run_worker(options, *s); });
}

}  // namespace gemmtune::cli
