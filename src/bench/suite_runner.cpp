#include <algorithm>

#include "src/bench/suite_internal.hpp"
#include "src/core/error.hpp"
#include "src/eval/clblast_evaluator.hpp"
#include "src/eval/measure.hpp"
#include "src/kernel/gemm_view.hpp"

namespace gemmtune::suite {

namespace {

struct Side {
  std::unique_ptr<SideCall> call;
  std::vector<double> wall, kernel;
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
        clblast_parameters_(clblast_parameters) {}

  SuiteRow run_row(CaseData& d, bool epilogue) {
    SuiteRow row;
    row.shape = d.problem.shape;
    row.precision = d.problem.precision;
    row.batch = d.problem.batch;
    row.batch_layout = d.problem.batch_layout;
    row.epilogue = epilogue;

    std::optional<Side> g, l, b, t;
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

    // Interleaved: gemmtune, library, CLBlast, gemmtune, ... first untimed, then timed.
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
        // one; the kernel-only time comes from a second, separate call with an event.
        side->wall.push_back(time_call(env_, *side->call, false).first);
        if (side->call->kernel_events()) {
          side->kernel.push_back(time_call(env_, *side->call, true).second);
        }
      } catch (const std::exception& e) {
        fail(result, e);
        side.reset();
      }
    };
    for (int i = 0; i < options_.warmup + options_.reps; ++i) {
      const bool timed = i >= options_.warmup;
      step(g, row.gemmtune, timed);
      step(l, row.library, timed);
      step(b, row.clblast, timed);
      step(t, row.clblast_tuned, timed);
    }
    auto finish = [&](std::optional<Side>& side, SideResult& result) {
      if (!side) return;
      result.wall = summarize_times(side->wall, side->kernel);
      if (!side->call->kernel_events()) result.wall.kernel_median_ms = 0;
      result.gflops = gflops_of(d.problem, result.wall.median_ms);
      result.kernel_gflops = gflops_of(d.problem, result.wall.kernel_median_ms);
    };
    finish(g, row.gemmtune);
    finish(l, row.library);
    finish(b, row.clblast);
    finish(t, row.clblast_tuned);
    if (row.clblast.ok() && row.clblast.gflops > 0) {
      if (row.gemmtune.ok()) row.ratio = row.gemmtune.gflops / row.clblast.gflops;
      if (row.library.ok()) row.library_ratio = row.library.gflops / row.clblast.gflops;
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

  // The kernels a row may draw from: the fused-epilogue ones for an epilogue row, else the
  // suite's, less those whose launch block declares no batch in the row's layout.
  std::vector<std::string> kernels_for(const Problem& p, bool epilogue) {
    if (epilogue) return epilogue_kernels(env_);
    std::vector<std::string> out;
    for (const auto& k : options_.kernels) {
      if (p.batch == 1 || supports_batch(env_.spec(k), p.batch_layout)) out.push_back(k);
    }
    return out;
  }

  // The configuration to run: the entry of the problem's shape, else the selection model's
  // choice, else the template defaults, reported as untuned. (Several candidates, each verified
  // and briefly timed here, come only from the defaults of several kernels.)
  std::unique_ptr<SideCall> choose(CaseData& d, bool epilogue, SuiteRow& row) {
    const std::vector<std::string> kernels = kernels_for(d.problem, epilogue);
    const DeviceInfo& info = env_.device().info;
    std::vector<Candidate> candidates =
        suite_candidates(databases_, kernels, d.problem,
                         DeviceModel::of(env_.profile(), info.compute_units, info.max_clock_mhz),
                         [this](const std::string& k) -> const KernelSpec* {
                           try {
                             return &env_.spec(k);
                           } catch (const Error&) {
                             return nullptr;
                           }
                         });
    if (candidates.empty()) {
      for (const auto& kernel : kernels) {
        Candidate c;
        c.kernel = kernel;
        c.parameters = env_.spec(kernel).defaults();
        c.origin = "defaults";
        c.tuned_shape = row.shape;
        candidates.push_back(c);
      }
    }
    if (candidates.size() == 1) {
      row.chosen = candidates.front();
      try {
        return tuned_call(env_, candidates.front(), d, epilogue);
      } catch (const std::exception& e) {
        fail(row.gemmtune, e);
        return nullptr;
      }
    }
    std::unique_ptr<SideCall> best;
    double best_ms = 0;
    std::string failures;
    for (const auto& c : candidates) {
      CandidateTrial trial;
      trial.candidate = c;
      try {
        auto call = tuned_call(env_, c, d, epilogue);
        const Verification v = verify_call(env_, d, *call, epilogue);
        if (!v.ok) {
          trial.status = "wrong_result";
          trial.message = v.message;
        } else {
          call->enqueue(nullptr);  // warm-up
          env_.queue().finish();
          std::vector<double> wall;
          for (int i = 0; i < options_.select_reps; ++i) {
            wall.push_back(time_call(env_, *call, false).first);
          }
          trial.status = "ok";
          trial.median_ms = summarize_times(wall, wall).median_ms;
          trial.gflops = gflops_of(d.problem, trial.median_ms);
          if (!best || trial.median_ms < best_ms) {
            best = std::move(call);
            best_ms = trial.median_ms;
            row.chosen = c;
          }
        }
      } catch (const std::exception& e) {
        SideResult scratch;
        fail(scratch, e);
        trial.status = "failed";
        trial.message = scratch.message;
      }
      if (trial.status != "ok") {
        failures += (failures.empty() ? "" : "; ") + c.kernel + ": " + first_line(trial.message);
      }
      row.trials.push_back(trial);
    }
    if (!best) {
      row.gemmtune.status = "failed";
      row.gemmtune.message = "no candidate configuration ran correctly (" + failures + ")";
    }
    return best;
  }

  ClEnv& env_;
  const std::vector<NamedDatabase>& databases_;
  const BenchSuiteOptions& options_;
  const LibrarySession& library_;
  const ClblastParameters* clblast_parameters_;
};

// The rows of each case, in the order they run: precisions, then batch layouts, then the

}  // namespace

SuiteRow run_suite_row(ClEnv& env, const std::vector<NamedDatabase>& databases,
                       const BenchSuiteOptions& options, const LibrarySession& library,
                       const ClblastParameters* clblast_parameters, CaseData& d, bool epilogue) {
  return SuiteRunner(env, databases, options, library, clblast_parameters).run_row(d, epilogue);
}

}  // namespace gemmtune::suite
