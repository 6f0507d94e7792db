// SPDX-License-Identifier: Apache-2.0
// The worker's serve loop: JSON lines on the channel to the tuner (worker_evaluator.hpp).
#include "search/tuning/worker_server.hpp"

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/tuning/channel.hpp"
#include "src/core/data_paths.hpp"
#include "src/core/error.hpp"
#include "src/device/device.hpp"
#include "src/eval/replay_evaluator.hpp"

namespace gemmtune {

namespace {

bool write_json_line(int fd, const nlohmann::json& j) {
  return write_line(fd, j.dump());
}

// The evaluator and the template it measures, which requests must name.
struct ServedEvaluator {
  std::unique_ptr<Evaluator> evaluator;
  std::string kernel;
};

ServedEvaluator worker_evaluator(const WorkerServeOptions& s) {
  if (!s.replay.empty()) {
    auto replay = std::make_unique<ReplayEvaluator>(s.replay, s.replay_delay_ms);
    std::string kernel = replay->kernel();
    return {std::move(replay), std::move(kernel)};
  }
  const auto profiles = ProfileSet::load_dir(find_data_dir("devices", s.devices_dir));
  // The search that started this process has said what the device's notes are.
  const Device device = select_device_from(list_devices(&profiles), s.device);
  if (s.kernel.empty()) throw invalid_argument("worker: --kernel or --replay is needed");
  EvaluatorOptions eval = s.eval;
  eval.templates_dir = find_data_dir("kernel_templates", eval.templates_dir);
  return {make_evaluator(s.kernel, device, profiles.match(device.info), eval), s.kernel};
}

}  // namespace

void serve_worker(const WorkerServeOptions& s) {
  ServedEvaluator served;
  try {
    served = worker_evaluator(s);
  } catch (const std::exception& e) {
    write_json_line(s.fd, {{"fatal", e.what()}});
    throw;
  }
  Evaluator* evaluator = served.evaluator.get();
  if (!write_json_line(s.fd, {{"ready", true}, {"description", evaluator->description()}})) return;

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
    // The request names the kernel inside its problem; a worker measures its own only.
    const std::string kernel = kernel_in_problem_json(request.at("problem"));
    const bool ours = kernel == served.kernel;
    if (op == "prepare") {
      if (!ours) continue;
      std::vector<Configuration> configs;
      for (const auto& c : request.at("configs")) configs.push_back(configuration_from_json(c));
      evaluator->prepare(problem, configs);
    } else if (op == "evaluate") {
      const Configuration config = configuration_from_json(request.at("config"));
      EvaluationHint hint;
      hint.stop_above_ms = request.value("stop_above_ms", 0.0);
      Result r;
      try {
        r = ours ? evaluator->evaluate_hinted(problem, config, hint)
                 : Result::failure(
                       config, Status::kUnsupported,
                       "this evaluator measures kernel " + served.kernel + ", not " + kernel);
      } catch (const std::exception& e) {
        // The evaluator reports failures as results; anything thrown is still this
        // configuration's failure, not the worker's.
        r = Result::failure(config, Status::kRunFailed, e.what());
      }
      if (!write_json_line(s.fd, {{"result", r}})) return;
    } else {
      throw Error(ErrorCode::kInternal, "worker: unknown request '" + op + "'");
    }
  }
}

}  // namespace gemmtune
