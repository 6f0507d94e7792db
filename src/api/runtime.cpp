// SPDX-License-Identifier: Apache-2.0
#include "src/api/runtime.hpp"

#include <algorithm>
#include <list>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/core/problem_key.hpp"
#include "src/eval/program_builder.hpp"

namespace gemmtune::api {

namespace {

// Compiled calls kept per queue: a program's distinct shapes (and alpha, beta) are few.
constexpr size_t kCallsPerQueue = 64;

struct Plan {
  Choices choices;
  size_t usable = 0;  // the first choice not known to fail (guarded by DeviceState::mutex)
};

struct DeviceState {
  Device device;
  std::unique_ptr<ProgramBuilder> builder;
  std::mutex mutex;  // guards what follows
  uint64_t generation = 0;
  // The choices do not depend on the scaling: one plan serves every alpha and beta.
  std::map<ProblemKey, std::shared_ptr<Plan>> plans;
};

// What tells one compiled call from another: the problem's whole identity (the kernel is the
// choice's). ProblemKey formats nothing and allocates nothing, so a call that hits the cache
// costs a comparison of fields.
using CallKey = ProblemKey;

struct QueueState {
  cl::CommandQueue queue;
  std::shared_ptr<DeviceState> device;
  std::mutex mutex;  // guards what follows, and every use of the calls' kernels
  uint64_t generation = 0;
  std::list<std::pair<CallKey, std::unique_ptr<GemmCall>>> calls;  // most recent first
};

struct Registry {
  std::mutex mutex;
  std::map<std::pair<cl_context, cl_device_id>, std::shared_ptr<DeviceState>> devices;
  std::map<cl_command_queue, std::shared_ptr<QueueState>> queues;
};

Registry& registry() {
  // Never destroyed: releasing OpenCL objects while the program exits may find the driver gone.
  static Registry* r = new Registry;
  return *r;
}

template <typename T>
T queue_info(cl_command_queue queue, cl_command_queue_info what) {
  T value{};
  const cl_int err = clGetCommandQueueInfo(queue, what, sizeof(T), &value, nullptr);
  if (err != CL_SUCCESS) {
    throw ApiError(StatusCode::kInvalidArgument,
                   "the queue is not a valid OpenCL command queue (" + cl_error_name(err) + ")");
  }
  return value;
}

std::shared_ptr<DeviceState> make_device(cl_context context, cl_device_id id) {
  const Assets& assets = Assets::get();
  auto state = std::make_shared<DeviceState>();
  bool found = false;
  for (auto& d : list_devices(&assets.profiles)) {
    if (d.device() == id) {
      state->device = d;
      found = true;
      break;
    }
  }
  if (!found) {
    throw ApiError(StatusCode::kUnsupported,
                   "the queue's device is not a device of any OpenCL platform (a sub-device?)");
  }
  const DeviceProfile* profile =
      assets.profiles.find(state->device.info.profile, state->device.info);
  state->builder = std::make_unique<ProgramBuilder>(state->device, cl::Context(context, true),
                                                    profile, kTemplatesFolder, "", 1);
  return state;
}

std::shared_ptr<QueueState> queue_state(cl_command_queue queue) {
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (auto it = r.queues.find(queue); it != r.queues.end()) return it->second;
  }
  const auto context = queue_info<cl_context>(queue, CL_QUEUE_CONTEXT);
  const auto device = queue_info<cl_device_id>(queue, CL_QUEUE_DEVICE);
  const auto properties = queue_info<cl_command_queue_properties>(queue, CL_QUEUE_PROPERTIES);
  if (properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) {
    // A call's launches (padding, kernel, split-K reduction) depend on each other in order.
    throw ApiError(StatusCode::kUnsupported, "out-of-order command queues are not supported");
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto it = r.queues.find(queue); it != r.queues.end()) return it->second;
  auto& dev = r.devices[{context, device}];
  if (!dev) dev = make_device(context, device);
  auto state = std::make_shared<QueueState>();
  state->queue = cl::CommandQueue(queue, true);
  state->device = dev;
  r.queues[queue] = state;
  return state;
}

std::shared_ptr<Plan> plan_of(DeviceState& dev, const Problem& problem) {
  const auto snapshot = database_snapshot();
  std::lock_guard<std::mutex> lock(dev.mutex);
  if (dev.generation != snapshot->generation) {
    dev.plans.clear();
    dev.generation = snapshot->generation;
  }
  auto& plan = dev.plans[ProblemKey(problem, kWithoutScaling)];
  if (!plan) {
    plan = std::make_shared<Plan>();
    plan->choices = choose(*snapshot, dev.device.info, dev.builder->limits(), problem);
  }
  return plan;
}

std::unique_ptr<GemmCall> compile_call(DeviceState& dev, Plan& plan, const Problem& problem) {
  size_t start;
  {
    std::lock_guard<std::mutex> lock(dev.mutex);
    start = plan.usable;
  }
  std::vector<std::string> failures;
  for (size_t i = start; i < plan.choices.choices.size(); ++i) {
    const Choice& c = plan.choices.choices[i];
    GemmCall::Compiled compiled = GemmCall::compile(*dev.builder, *c.spec, c.config, problem);
    if (compiled.call) {
      std::lock_guard<std::mutex> lock(dev.mutex);
      plan.usable = std::max(plan.usable, i);
      return std::move(compiled.call);
    }
    failures.push_back(fmt::format("{} {} ({}): {}", c.spec->name(), to_string(c.config), c.source,
                                   compiled.result.message));
  }
  {
    std::lock_guard<std::mutex> lock(dev.mutex);
    plan.usable = plan.choices.choices.size();
  }
  std::string message = "no configuration runs this call on " + dev.device.info.name;
  for (const auto& f : failures) message += "; " + f;
  if (plan.choices.choices.empty()) {
    for (const auto& n : plan.choices.notes) message += "; " + n;
  }
  // Nothing to choose from at all: the device or the templates cannot do it (e.g. fp64).
  throw ApiError(
      plan.choices.choices.empty() ? StatusCode::kUnsupported : StatusCode::kNoConfiguration,
      message);
}

}  // namespace

void run(cl_command_queue queue, const Problem& problem, const GemmBuffers& buffers,
         cl_event* event) {
  const auto qs = queue_state(queue);
  const CallKey key(problem);
  const uint64_t generation = database_snapshot()->generation;
  std::lock_guard<std::mutex> lock(qs->mutex);
  if (qs->generation != generation) {
    qs->calls.clear();
    qs->generation = generation;
  }
  auto it = std::find_if(qs->calls.begin(), qs->calls.end(),
                         [&](const auto& c) { return c.first == key; });
  if (it != qs->calls.end()) {
    qs->calls.splice(qs->calls.begin(), qs->calls, it);
  } else {
    auto plan = plan_of(*qs->device, problem);
    qs->calls.emplace_front(key, compile_call(*qs->device, *plan, problem));
    while (qs->calls.size() > kCallsPerQueue) qs->calls.pop_back();
  }
  GemmCall& call = *qs->calls.front().second;
  call.bind(buffers, qs->queue);
  std::vector<cl::Event> events;
  call.enqueue(qs->queue, nullptr, event ? &events : nullptr);
  if (event) {
    // The last launch completes last on an in-order queue; the caller owns the handle.
    cl_event last = events.back()();
    clRetainEvent(last);
    *event = last;
  }
}

Explained explain(cl_command_queue queue, const Problem& problem) {
  const auto qs = queue_state(queue);
  DeviceState& dev = *qs->device;
  auto plan = plan_of(dev, problem);
  Explained out;
  out.device = dev.device.info;
  out.notes = plan->choices.notes;
  std::lock_guard<std::mutex> lock(dev.mutex);
  if (plan->choices.choices.empty()) {
    std::string message =
        "no configuration of any kernel runs this problem on " + dev.device.info.name;
    for (const auto& n : plan->choices.notes) message += "; " + n;
    throw ApiError(StatusCode::kUnsupported, message);
  }
  const size_t i = std::min(plan->usable, plan->choices.choices.size() - 1);
  out.choice = plan->choices.choices[i];
  for (size_t j = 0; j < i; ++j) {
    const Choice& c = plan->choices.choices[j];
    out.notes.push_back(c.origin + ": " + c.spec->name() + " " + to_string(c.config) +
                        " did not build or run on this device");
  }
  return out;
}

void warm_up(cl_command_queue queue, const Problem& problem) {
  const auto qs = queue_state(queue);
  auto plan = plan_of(*qs->device, problem);
  // The compiled call is not kept: its program stays in the builder (memory and disk), and the
  // first real call makes its own kernels.
  compile_call(*qs->device, *plan, problem);
}

void clear_all() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.queues.clear();
  r.devices.clear();
}

}  // namespace gemmtune::api
