// SPDX-License-Identifier: Apache-2.0
// The pieces of the benchmark suite shared by its files (not an interface of the library): the
// device environment both sides run in, one row's data, the two sides' calls, and how a call is
// verified and timed.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/api/choice.hpp"
#include "src/bench/bench_suite.hpp"
#include "src/device/opencl.hpp"
#include "src/eval/gemm_call.hpp"
#include "src/eval/program_builder.hpp"
#include "src/eval/queued_clock.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/chooser.hpp"
#include "src/verify/batch_placement.hpp"
#include "src/verify/reference.hpp"

namespace gemmtune::suite {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// The epilogue of the suite's epilogue rows, in Problem::epilogue's form.
constexpr Epilogue kSuiteEpilogue{true, Activation::kRelu};

// Every GEMM of the call counts: a batched row's rate is 2MNK x batch over the call's time.
double gflops_of(const Problem& p, double ms);

// Why the device cannot compute a precision at all, so that the gemmtune side is n/a rather than
// a failure.
std::optional<std::string> device_lacks(const DeviceInfo& info, Precision p);

// A side that cannot run the row at all (CLBlast has no such routine, or refuses the precision
// on this device): its column says n/a with the reason, which is not a failure.
class NotAvailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device, one context and one profiling queue shared by gemmtune's calls and CLBlast's.
class ClEnv {
 public:
  ClEnv(const Device& device, const DeviceProfile* profile, const BenchSuiteOptions& options);

  cl::Context& context() { return context_; }
  cl::CommandQueue& queue() { return queue_; }
  ProgramBuilder& builder() { return builder_; }
  QueuedClock& clock() { return clock_; }
  const Device& device() const { return device_; }
  const DeviceProfile* profile() const { return profile_; }
  // The declaration of `kernel`, loaded once.
  const KernelSpec& spec(const std::string& kernel);

 private:
  const Device& device_;
  const DeviceProfile* profile_;
  std::string templates_dir_;
  cl::Context context_;
  cl::CommandQueue queue_;
  ProgramBuilder builder_;
  QueuedClock clock_;
  std::map<std::string, KernelSpec> specs_;
};

// The suite's kernels whose templates declare the epilogue rows' epilogue.
std::vector<std::string> epilogue_kernels(ClEnv& env);

// One row's inputs: host copies for the reference, device buffers shared by both sides.
class CaseData {
 public:
  // `epilogue_too`: the case also has an epilogue row, whose bias the inputs then hold.
  CaseData(ClEnv& env, const Problem& p, const BenchSuiteOptions& options, bool epilogue_too);

  Problem problem;  // row-major, NN, alpha 1, beta 0, in the row's precision and batch
  HostMatrices host;
  BatchPlacement pa, pb, pc;
  std::vector<unsigned char> nan;  // one NaN element of the precision: the fill of C
  cl::Buffer a_buf, b_buf, c_buf, bias_buf;

  // The row's problem, with the suite's epilogue in an epilogue row.
  Problem problem_for(bool epilogue) const;
  // The buffers as a GEMM call takes them.
  GemmBuffers buffers(bool epilogue) const;
  size_t c_bytes() const { return static_cast<size_t>(pc.total()) * nan.size(); }
  // Made when a side is first verified: a row whose sides are both n/a needs none.
  const Reference& reference(bool epilogue);

 private:
  const BenchSuiteOptions& options_;
  std::unique_ptr<Reference> references_[2];  // plain, epilogue
};

// A clblast-json export's parameters beside CLBlast's own for the device, read before anything
// overrides them: the CLBlast column and the tuned one switch between the two before each call,
// so that both are timed interleaved in one process.
struct ClblastParameters {
  std::string kernel;  // "Xgemm" or "XgemmDirect"
  Precision precision = Precision::kFP32;
  std::unordered_map<std::string, size_t> tuned, stock;
  std::string description;  // "Xgemm, FP32: KWG=16 ..."
};
// Reads the export at `path` and CLBlast's parameters for `device`; checks that CLBlast takes the
// export's. Throws Error naming the file for a bad one or a CLBlast refusal.
ClblastParameters load_clblast_parameters(const cl::Device& device, const std::string& path);

// One side's call of a row, prepared once and enqueued many times.
class SideCall {
 public:
  virtual ~SideCall() = default;
  // Enqueues every kernel of the call; with `last`, the event of its last launch goes there (the
  // end of the call on the in-order queue: the GPU clock's mark).
  virtual void enqueue(cl::Event* last) = 0;
  // What must precede each call and is not part of its time (CLBlast's parameter set).
  virtual void prepare() {}
};

// gemmtune's call of a candidate configuration. Throws Error when the configuration cannot run.
std::unique_ptr<SideCall> tuned_call(ClEnv& env, const Candidate& candidate, CaseData& d,
                                     bool epilogue);
// CLBlast's routine on the same buffers (see suite_clblast.cpp), with its stock parameters, or
// with `parameters`' tuned ones when `tuned`; with `parameters`, each call first installs its own
// set. Throws NotAvailable when CLBlast has no such routine or precision here, Error for another
// failure.
std::unique_ptr<SideCall> clblast_call(ClEnv& env, CaseData& d, bool epilogue,
                                       const ClblastParameters* parameters = nullptr,
                                       bool tuned = false);
// libgemmtune's call of the row through its public interface (gemmtune::Gemm and its epilogue and
// batched forms) on the same queue and buffers. Its enqueue throws NotAvailable for a precision
// the library has no call for, Error when the call fails.
std::unique_ptr<SideCall> library_call(ClEnv& env, CaseData& d, bool epilogue);
// A device-to-device copy of `bytes` / 2 bytes between two buffers of its own
// (clEnqueueCopyBuffer): it moves `bytes`, the yardstick of a memory-bound row (MemoryBound).
std::unique_ptr<SideCall> copy_call(ClEnv& env, double bytes);
// What the library runs for the row on the suite's queue (gemmtune::Explain); none when it
// cannot say (the call's own failure says why).
std::optional<LibraryChoice> library_choice(ClEnv& env, CaseData& d, bool epilogue);
// For its lifetime, the library's user database is the suite's databases (merged into one when
// several, as `gemmtune db merge` would: an application sets one); then it has none again and
// its cached calls are released.
class LibrarySession {
 public:
  explicit LibrarySession(const std::vector<NamedDatabase>& databases);
  ~LibrarySession();
  LibrarySession(const LibrarySession&) = delete;
  LibrarySession& operator=(const LibrarySession&) = delete;

  // The library's choices for `problem` on the device (the limits of its program builder): its
  // chooser over its databases, the direct column's configuration being the first. Where the
  // databases could not be merged, the suite's databases stand as separate user databases.
  api::Choices choose(const DeviceInfo& device, const DeviceLimits& limits,
                      const Problem& problem) const;

  // Per database with entries that this build's compiled-in templates no longer accept (the
  // chooser passes them over as stale): how many, and the first one's reason, in one line.
  std::vector<std::string> stale_entries() const;

  std::string database;     // what the library was given ("" none)
  std::string unavailable;  // why the library column cannot run ("" when it can)

 private:
  std::vector<NamedDatabase> databases_;
};

// Runs a call once on C filled with NaN (beta is 0, so C must not be read) and checks it: the
// matrices against the reference, and the gaps between a batch's matrices for writes.
Verification verify_call(ClEnv& env, CaseData& d, SideCall& call, bool epilogue);

// Whole-call wall time on the host: from the enqueue to the return of clFinish.
double time_call(ClEnv& env, SideCall& call);

// One call of one side in the order the sides are timed: `side` indexes the row's sides.
struct TimingStep {
  int side = 0;
  bool timed = false;
};

// The order of a row's calls: `warmup` untimed rounds, then `reps` timed ones, the sides
// interleaved in each round, and each timed call right after an untimed call of its own side, as
// in an application that calls one GEMM repeatedly (and as scripts/bench-cublas.py times cuBLAS).
// The sides read the same A and B, so what one leaves in the device's cache, or evicts, would
// otherwise count for or against the next.
std::vector<TimingStep> timing_schedule(int sides, int warmup, int reps);

// Measures one row of the suite: chooses gemmtune's configuration, verifies every side and times
// them interleaved (see bench_suite.hpp for what the times mean). `library` is the session the
// library column runs in.
// `clblast_parameters`, when given, adds the tuned CLBlast column.
SuiteRow run_suite_row(ClEnv& env, const std::vector<NamedDatabase>& databases,
                       const BenchSuiteOptions& options, const LibrarySession& library,
                       const ClblastParameters* clblast_parameters, CaseData& d, bool epilogue);

}  // namespace gemmtune::suite
