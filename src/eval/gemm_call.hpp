// SPDX-License-Identifier: Apache-2.0
// One GEMM call of a kernel template on caller-provided buffers: the single place that turns a
// declaration, a configuration and a problem into launches. It builds or fetches the program
// (ProgramBuilder), checks the configuration against the problem and the device, binds the
// kernel contract's arguments (kernel_templates/README.md), pads where the launch declaration
// asks, runs split-K and its reduction (a reduce kernel, or in the main kernel with counters the
// call keeps zeroed), the fused epilogue and batches (strided or offsets).
//
// The caller speaks in its own terms, as CLBlast's Gemm does: storage order, transposes, m, n, k,
// alpha, beta, and per operand a buffer, an offset and a leading dimension. A row-major call is
// mapped onto the column-major kernel by swapping A and B (no data moves). beta == 0 never reads
// C. A compiled call is enqueued any number of times; it owns its cl_kernels, so one call object
// must not be enqueued from two threads at once (compile one per thread from the same builder).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/device/opencl.hpp"
#include "src/eval/program_builder.hpp"
#include "src/kernel/gemm_view.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/verify/batch_placement.hpp"

namespace gemmtune {

// Where the operands of a call lie, in the problem's terms (its order and transposes). Offsets,
// leading dimensions and strides count elements. A leading dimension of 0 means dense storage
// (the stored row length of a row-major matrix, the column length of a column-major one).
struct GemmBuffers {
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  int64_t a_offset = 0, b_offset = 0, c_offset = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  // A strided batch: elements between consecutive GEMMs of each operand.
  int64_t a_stride = 0, b_stride = 0, c_stride = 0;
  // An offsets batch: where GEMM e of each operand starts, added to the offsets above.
  std::vector<int64_t> a_offsets, b_offsets, c_offsets;
  // The epilogue's bias: N values, one per column of C, shared by a batch.
  cl_mem bias = nullptr;
};

// The operands of a batch laid out as `pa`, `pb`, `pc` say, dense leading dimensions: entries at
// their positions in the offsets layout, `stride` apart in the strided one.
GemmBuffers placed_buffers(const Problem& problem, cl_mem a, cl_mem b, cl_mem c,
                           const BatchPlacement& pa, const BatchPlacement& pb,
                           const BatchPlacement& pc);

class GemmCall {
 public:
  // The call of `config` of `spec` for `problem` (whose kernel field is not read), or why there
  // is none: `result.status` is kOk with the build's figures (compile_ms, binary_cached, usage),
  // else invalid, device_limit, unsupported or compile_failed with one line why. Throws only for
  // OpenCL failures of the device itself.
  struct Compiled {
    std::unique_ptr<GemmCall> call;
    Result result;
  };
  static Compiled compile(ProgramBuilder& builder, const KernelSpec& spec,
                          const Configuration& config, const Problem& problem);
  // Why no configuration of `spec` can compute `problem` on `device` (a precision the device
  // lacks, an epilogue or batch layout the template does not declare ...), before any build.
  static std::optional<Result> refusal(const KernelSpec& spec, const DeviceInfo& device,
                                       const Problem& problem, const Configuration& config = {});

  // Binds the caller's buffers: every launch's arguments, and the scratch buffers padding and
  // split-K need (allocated on first need, in the builder's context; a padded C that is not read
  // is filled with NaN through `queue`, so that a kernel reading it anyway shows; the counters of
  // an in-kernel split-K reduction are zeroed through `queue` when allocated, and every call
  // leaves them zeroed). A bind with the placement of the one before (offsets, leading
  // dimensions, strides; other buffers or the same) only sets the buffer arguments again, so
  // that repeated calls cost little. Throws
  // Error(kInvalidArgument) for a leading dimension smaller than its matrix, missing offsets of
  // an offsets batch or a missing bias.
  void bind(const GemmBuffers& buffers, cl::CommandQueue& queue);
  // Enqueues the launches of the call, in order, on `queue` (bind() first). `main_event` gets
  // the main kernel's event; `step_events` one event per launch.
  void enqueue(cl::CommandQueue& queue, cl::Event* main_event = nullptr,
               std::vector<cl::Event>* step_events = nullptr) const;

  // Which launch of the call is the template's main kernel.
  size_t main_step() const { return main_step_; }
  // Kernels the bound call enqueues: padding or alignment copies, the main kernel, a split-K
  // reduce kernel.
  size_t launches() const { return steps_.size(); }
  // The same before any device is at hand: the launches of `config` of `spec` for `problem` on
  // buffers placed as `placement` says (the evaluator's: dense, offset 0). Throws Error for a
  // configuration whose launch cannot be computed and the errors of bind().
  static size_t launches(const KernelSpec& spec, const Configuration& config,
                         const Problem& problem, const GemmBuffers& placement = {});
  // Whether the bound call runs helper kernels (padding copies) besides the template's own.
  bool helper_kernels() const { return helpers_; }
  const LaunchGeometry& geometry() const { return geometry_; }
  const KernelView& view() const { return view_; }

 private:
  GemmCall() = default;
  struct Step {
    cl::Kernel kernel;
    cl::NDRange global, local;
  };
  // Which of the caller's buffers a kernel argument takes.
  enum class UserBuffer { kNone, kA, kB, kC, kBias };
  struct UserArg {
    cl::Kernel kernel;
    cl_uint index;
    UserBuffer source;
  };
  static cl_mem user_buffer(const GemmBuffers& in, UserBuffer which);
  void bind_placement(const GemmBuffers& in, cl::CommandQueue& queue);
  struct Operand;
  // The operands of a bind as the kernel sees them and the copies the launch declaration asks
  // for: the one decision behind both bind() and launches().
  struct Plan;
  static Plan make_plan(const Problem& p, const KernelView& v, const LaunchGeometry& g,
                        const GemmBuffers& in);
  // Sets a memory argument, remembering it when it is one of the caller's buffers.
  void set_memory(cl::Kernel& kernel, cl_uint index, cl_mem buffer, UserBuffer source);
  void add_pad(const Operand& src, const Operand& dst);
  struct Scratch {
    cl::Buffer buffer;
    size_t bytes = 0;
  };
  cl_mem scratch(Scratch& s, int64_t elements, size_t element_size);
  void align_operand(Operand& o, Scratch& buffer, size_t element_size);
  void set_batch(cl::Kernel& kernel, cl_uint first, const Operand& a, const Operand& b,
                 const Operand& c);
  void add_kernels(const Operand& ka, const Operand& kb, const Operand& kc, const Operand& bias,
                   cl_mem work, cl_mem counters);
  cl_mem zeroed_counters(int64_t elements, cl::CommandQueue& queue);
  void set_scalar(cl::Kernel& kernel, cl_uint index, double value) const;

  ProgramBuilder* builder_ = nullptr;
  Problem problem_;
  KernelView view_;
  LaunchGeometry geometry_;
  cl::Program program_;
  cl::Kernel main_, reduce_;
  cl_uint contract_args_ = 0, batch_args_ = 0;
  // The template's runtime parameters' values, the kernel's arguments after the contract's.
  std::vector<cl_int> runtime_values_;
  std::vector<Step> steps_;
  std::vector<UserArg> user_args_;  // the caller's buffers among the steps' arguments
  GemmBuffers bound_;               // the placement of the last bind
  size_t main_step_ = 0;
  bool helpers_ = false;
  Scratch scratch_a_, scratch_b_, scratch_c_, workspace_, counters_, dummy_bias_;
  cl::Buffer offsets_;
};

}  // namespace gemmtune
