// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "src/bench/suite_internal.hpp"
#include "src/core/error.hpp"
#include "src/eval/clblast_evaluator.hpp"
#include "src/eval/measure.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune::suite {

namespace {

struct Side {
  std::unique_ptr<SideCall> call;
  std::vector<double> wall, gpu, host;
  int calls = 0;  // per GPU-clock and host-cost sample: the N rule on the first whole-call time
  TimingClock gpu_clock = TimingClock::kQueued;
};

class SuiteRunner {
 public:
  SuiteRunner(ClEnv& env, const std::vector<NamedDatabase>& databases,
              const BenchSuiteOptions& options, const LibrarySession& library,
              const ClblastParameters* clblast_parameters)
      : env_(env),
        databases_(databases),
        options_(options),
        library_(library),
        clblast_parameters_(clblast_parameters) {
    measure_.queued_calls = options.queued_calls;
  }

  SuiteRow run_row(CaseData& d, bool epilogue) {
    SuiteRow row;
    row.shape = d.problem.shape;
    row.precision = d.problem.precision;
    row.batch = d.problem.batch;
    row.batch_layout = d.problem.batch_layout;
    row.epilogue = epilogue;

    std::optional<Side> g, l, b, t, copy;
    SideResult copy_result;  // the memory-bound row's copy, timed as the sides
    row.memory = memory_bound(d.problem_for(epilogue), env_.profile(), env_.device().info);
    if (row.memory) {
      try {
        auto call = copy_call(env_, row.memory->bytes);
        copy.emplace();
        copy->call = std::move(call);
      } catch (const std::exception& e) {
        spdlog::warn("{}: the copy it is measured against could not run: {}", row.label(),
                     e.what());
        row.memory.reset();
      }
    }
    const auto lacks = device_lacks(env_.device().info, row.precision);
    if (lacks) {
      row.gemmtune.message = *lacks;  // n/a: not a failure of the configuration
    } else {
      row.gemmtune.available = true;
      Side side;
      side.call = choose(d, epilogue, row);
      if (side.call) {
        if (verify_side(d, *side.call, epilogue, row.gemmtune)) g = std::move(side);
      } else {
        row.gemmtune.status = "failed";
      }
    }

    if (lacks || !library_.unavailable.empty()) {
      row.library.message = lacks ? *lacks : library_.unavailable;
    } else {
      row.library.available = true;
      l = verified_side(d, epilogue, row.library, [&] { return library_call(env_, d, epilogue); });
      if (row.library.available) row.library_choice = library_choice(env_, d, epilogue);
    }

    if (options_.clblast && clblast_linked()) {
      row.clblast.available = true;
      // Its first call compiles, and CLBlast prints compiler messages on stdout.
      const StdoutToStderr quiet;
      b = verified_side(d, epilogue, row.clblast, [&] {
        return clblast_call(env_, d, epilogue, clblast_parameters_, false);
      });
      if (clblast_parameters_) {
        row.clblast_tuned.available = true;
        t = verified_side(d, epilogue, row.clblast_tuned, [&] {
          return clblast_call(env_, d, epilogue, clblast_parameters_, true);
        });
      }
    }
    if (!options_.clblast || !clblast_linked()) {
      row.clblast.message =
          options_.clblast ? "CLBlast is not linked into this build" : "skipped on request";
    }

    // On the H100, gemmtune's call at 8x4096x4096 (a B of 64 MiB against a 50 MiB L2) ran at
    // 4.8-5.6 TFLOPS right after the copy and 7.2 right after CLBlast's call: each side is timed
    // after a call of its own (timing_schedule).
    auto step = [&](std::optional<Side>& side, SideResult& result, bool timed) {
      if (!side) return;
      try {
        if (!timed) {
          side->call->prepare();
          side->call->enqueue(nullptr);
          env_.queue().finish();
          return;
        }
        // A user's call asks for no profiling event, so the whole-call time is taken without
        // one; the GPU clock and the host cost come from samples of their own.
        side->wall.push_back(time_call(env_, *side->call));
        if (side->calls == 0) side->calls = env_.clock().calls_for(side->wall.back(), measure_);
        SideCall& call = *side->call;
        const QueuedClock::EnqueueCall enqueue = [&call](cl::CommandQueue&, cl::Event* last) {
          call.prepare();
          call.enqueue(last);
        };
        const auto gpu = env_.clock().device_sample(env_.queue(), side->calls, d.problem.flops(),
                                                    max_gflops(d.problem), enqueue);
        side->gpu.push_back(gpu.per_call_ms);
        if (gpu.clock != TimingClock::kQueued) side->gpu_clock = gpu.clock;
        side->host.push_back(
            env_.clock().host_sample(env_.queue(), side->calls, enqueue).per_call_ms);
      } catch (const std::exception& e) {
        fail(result, e);
        side.reset();
      }
    };
    const std::array<std::pair<std::optional<Side>*, SideResult*>, 5> sides = {
        {{&g, &row.gemmtune},
         {&l, &row.library},
         {&b, &row.clblast},
         {&t, &row.clblast_tuned},
         {&copy, &copy_result}}};
    for (const TimingStep& s :
         timing_schedule(static_cast<int>(sides.size()), options_.warmup, options_.reps)) {
      step(*sides[s.side].first, *sides[s.side].second, s.timed);
    }
    auto finish = [&](std::optional<Side>& side, SideResult& result) {
      if (!side) return;
      result.wall = summarize_times(side->wall, {});
      result.wall.clock = TimingClock::kWholeCall;
      result.wall.calls = 1;
      result.gflops = gflops_of(d.problem, result.wall.median_ms);
      result.gpu = summarize_times(side->gpu, {});
      result.gpu.clock = side->gpu_clock;
      result.gpu.calls = side->calls;
      if (side->gpu_clock != TimingClock::kQueued) {
        result.gpu.clock_note = env_.clock().distrust_reason();
      }
      result.gpu_gflops = gflops_of(d.problem, result.gpu.median_ms);
      result.host_ms = median(side->host);
    };
    for (const auto& [side, result] : sides) finish(*side, *result);
    if (row.memory) {
      if (copy_result.wall.median_ms > 0) {
        row.memory->copy_ms = copy_result.wall.median_ms;
      } else {
        row.memory.reset();  // the copy failed while timed: no yardstick
      }
    }
    if (row.clblast.ok() && row.clblast.gflops > 0) {
      if (row.gemmtune.ok()) row.ratio = row.gemmtune.gflops / row.clblast.gflops;
      if (row.library.ok()) row.library_ratio = row.library.gflops / row.clblast.gflops;
    }
    if (row.clblast.ok() && row.clblast.gpu_gflops > 0) {
      if (row.gemmtune.ok()) row.gpu_ratio = row.gemmtune.gpu_gflops / row.clblast.gpu_gflops;
      if (row.library.ok()) {
        row.library_gpu_ratio = row.library.gpu_gflops / row.clblast.gpu_gflops;
      }
      if (row.clblast_tuned.ok()) {
        row.clblast_tuned_gain = row.clblast_tuned.gflops / row.clblast.gflops;
      }
    }
    return row;
  }

 private:
  static void fail(SideResult& result, const std::exception& e) {
    result.status = "failed";
    result.verified = false;
    if (dynamic_cast<const NotAvailable*>(&e)) {
      result.available = false;
      result.status = "n/a";
      result.message = e.what();
    } else if (auto* cl = dynamic_cast<const cl::Error*>(&e)) {
      result.message =
          std::string("OpenCL error in ") + cl->what() + ": " + cl_error_name(cl->err());
    } else {
      result.message = e.what();
    }
  }

  bool verify_side(CaseData& d, SideCall& call, bool epilogue, SideResult& result) {
    try {
      const Verification v = verify_call(env_, d, call, epilogue);
      result.checked = d.reference(epilogue).coverage();
      result.max_error = v.max_error;
      result.tolerance = v.tolerance;
      result.verified = v.ok;
      result.status = v.ok ? "ok" : "wrong_result";
      result.message = v.message;
      return v.ok;
    } catch (const std::exception& e) {
      fail(result, e);
      return false;
    }
  }

  // A side's call, made by `make` and verified; none when either fails (`result` says why).
  template <typename Make>
  std::optional<Side> verified_side(CaseData& d, bool epilogue, SideResult& result, Make make) {
    try {
      Side side;
      side.call = make();
      if (verify_side(d, *side.call, epilogue, result)) return side;
    } catch (const std::exception& e) {
      fail(result, e);
    }
    return std::nullopt;
  }

  // The configuration to run: the library's first choice for the row's problem, from the same
  // databases (one chooser). When it fails here, the row reports the failure: the direct column
  // shows what the library's choice does, and takes no other configuration in its place.
  std::unique_ptr<SideCall> choose(CaseData& d, bool epilogue, SuiteRow& row) {
    const api::Choices choices =
        library_.choose(env_.device().info, env_.builder().limits(), d.problem_for(epilogue));
    if (choices.choices.empty()) {
      row.gemmtune.status = "failed";
      row.gemmtune.message = "the library has no configuration that runs this problem here";
      for (const auto& n : choices.notes) row.gemmtune.message += "; " + n;
      return nullptr;
    }
    const Choice& c = choices.choices.front();
    Candidate chosen;
    chosen.kernel = c.spec->name();
    chosen.parameters = c.config;
    chosen.origin = to_string(c.kind);
    chosen.tuned_shape = c.tuned_shape;
    if (!c.entry.empty() || c.kind == ChoiceKind::kOfflineChoice) chosen.database = c.origin;
    chosen.recorded_gflops = c.gflops;
    chosen.distance = c.distance;
    chosen.predicted_gflops = c.predicted_gflops;
    chosen.reason = c.reason;
    row.chosen = chosen;
    try {
      return tuned_call(env_, chosen, d, epilogue);
    } catch (const std::exception& e) {
      fail(row.gemmtune, e);
      return nullptr;
    }
  }

  ClEnv& env_;
  const std::vector<NamedDatabase>& databases_;
  // The most a row may imply: past it the GPU clock's events are not believed.
  double max_gflops(const Problem& p) const {
    return max_plausible_gflops(env_.device().info, env_.profile(), p.precision);
  }

  const BenchSuiteOptions& options_;
  MeasureSettings measure_;  // the N rule of the GPU-clock samples
  const LibrarySession& library_;
  const ClblastParameters* clblast_parameters_;
};

// The rows of each case, in the order they run: precisions, then batch layouts, then the

}  // namespace

std::vector<TimingStep> timing_schedule(int sides, int warmup, int reps) {
  std::vector<TimingStep> schedule;
  for (int round = 0; round < warmup + reps; ++round) {
    const bool timed = round >= warmup;
    for (int side = 0; side < sides; ++side) {
      schedule.push_back({side, false});
      if (timed) schedule.push_back({side, true});
    }
  }
  return schedule;
}

SuiteRow run_suite_row(ClEnv& env, const std::vector<NamedDatabase>& databases,
                       const BenchSuiteOptions& options, const LibrarySession& library,
                       const ClblastParameters* clblast_parameters, CaseData& d, bool epilogue) {
  return SuiteRunner(env, databases, options, library, clblast_parameters).run_row(d, epilogue);
}

}  // namespace gemmtune::suite
