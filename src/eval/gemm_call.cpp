// SPDX-License-Identifier: Apache-2.0
#include "src/eval/gemm_call.hpp"

#include <algorithm>
#include <iterator>
#include <limits>

#include <fmt/format.h>

#include "src/core/error.hpp"
#include "src/device/kernel_resources.hpp"
#include "src/eval/gemm_call_internal.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/verify/reference.hpp"

namespace gemmtune {

using namespace gemm_call_args;

GemmBuffers placed_buffers(const Problem& problem, cl_mem a, cl_mem b, cl_mem c,
                           const BatchPlacement& pa, const BatchPlacement& pb,
                           const BatchPlacement& pc) {
  GemmBuffers g;
  g.a = a;
  g.b = b;
  g.c = c;
  g.a_stride = pa.stride;
  g.b_stride = pb.stride;
  g.c_stride = pc.stride;
  if (problem.batch > 1 && problem.batch_layout == BatchLayout::kOffsets) {
    g.a_offsets = pa.positions;
    g.b_offsets = pb.positions;
    g.c_offsets = pc.positions;
  }
  return g;
}

std::optional<Result> GemmCall::refusal(const KernelSpec& spec, const DeviceInfo& device,
                                        const Problem& problem, const Configuration& config) {
  auto fail = [&](Status s, const std::string& why) { return Result::failure(config, s, why); };
  if (spec.backend() != Backend::kOpenCl) {
    return fail(Status::kUnsupported, "kernel " + spec.name() + " is not an OpenCL template");
  }
  if (problem.batch < 1) {
    return fail(Status::kUnsupported,
                "batch " + std::to_string(problem.batch) + " is not positive");
  }
  const Epilogue& epilogue = problem.epilogue;
  // Refused here, before any build, so that the answer is this line and not a build log.
  if (problem.precision == Precision::kFP16 && !device.has_fp16) {
    return fail(Status::kUnsupported,
                "precision 16 (half arithmetic) is not supported by this device: it lacks "
                "cl_khr_fp16 (16acc32 stores half and computes in float, and needs no extension)");
  }
  if (problem.precision == Precision::kFP64 && !device.has_fp64) {
    return fail(Status::kUnsupported,
                "precision 64 (double) is not supported by this device: it lacks cl_khr_fp64");
  }
  if (!supports_epilogue(spec, epilogue)) {
    return fail(Status::kUnsupported,
                "kernel " + spec.name() + " has no fused epilogue '" + to_string(epilogue) +
                    "' (its declaration lists no such \"epilogue\" item; xgemm_fast has bias, "
                    "relu and gelu)");
  }
  if (problem.batch > 1 && !supports_batch(spec, problem.batch_layout)) {
    return fail(Status::kUnsupported,
                "kernel " + spec.name() + " does not support batched problems in the " +
                    to_string(problem.batch_layout) +
                    " layout (its launch block declares no such batch layout)");
  }
  return std::nullopt;
}

namespace {

// Checks of the compiled kernel: its resources against the device, its arguments against the
// contract. Fills `r.usage`; returns the failure, if any.
std::optional<Result> check_kernel(const cl::Kernel& kernel, const KernelSpec& spec,
                                   const Device& device, const LaunchGeometry& g,
                                   const BuildOutcome& built, const Problem& problem,
                                   cl_uint extra_args, Result& r) {
  const auto& dev = device.device;
  // The driver's figures, and the registers and spills of the main kernel (not the split-K
  // reduce kernel) from ptxas's log or an AMDGPU program binary.
  r.usage = query_kernel_resources(dev, built.program, kernel, spec.entry_point(), built.log);
  auto fail = [&](Status s, const std::string& why) {
    Result f = Result::failure(r.config, s, why);
    f.usage = r.usage;
    f.compile_ms = r.compile_ms;
    f.binary_cached = r.binary_cached;
    return f;
  };
  size_t wg = 1;
  for (auto l : g.local) wg *= l;
  const size_t kernel_max_wg = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(dev);
  if (wg > kernel_max_wg) {
    return fail(Status::kDeviceLimit,
                fmt::format("the compiled kernel allows {} work-items per group, the "
                            "configuration needs {}",
                            kernel_max_wg, wg));
  }
  if (r.usage.local_mem_bytes &&
      *r.usage.local_mem_bytes > static_cast<int64_t>(device.info.local_mem_bytes)) {
    return fail(Status::kDeviceLimit,
                fmt::format("the compiled kernel needs {} bytes of local memory, the device has {}",
                            *r.usage.local_mem_bytes, device.info.local_mem_bytes));
  }
  const cl_uint nargs = kernel.getInfo<CL_KERNEL_NUM_ARGS>();
  const cl_uint contract = nargs - std::min(nargs, extra_args);
  if (contract != kContractArgs && contract != kContractArgsExtended &&
      contract != kContractArgsCounters) {
    return fail(Status::kInvalid,
                fmt::format("kernel {} takes {} arguments; the contract has {} (or {} with bias "
                            "and workspace, {} with split-K counters too), plus {} for the "
                            "template's runtime parameters and this batch layout",
                            spec.entry_point(), nargs, kContractArgs, kContractArgsExtended,
                            kContractArgsCounters, extra_args));
  }
  if (g.split_k && g.split_k->in_kernel && contract != kContractArgsCounters) {
    return fail(Status::kInvalid,
                fmt::format("kernel {} takes no split-K counters argument, so it cannot add the "
                            "split-K parts itself (launch.split_k.in_kernel)",
                            spec.entry_point()));
  }
  if (!problem.epilogue.none() && contract < kContractArgsExtended) {
    return fail(Status::kUnsupported, "kernel " + spec.entry_point() +
                                          " takes no bias argument, so it cannot apply the "
                                          "epilogue '" +
                                          to_string(problem.epilogue) + "'");
  }
  return std::nullopt;
}

}  // namespace

GemmCall::Compiled GemmCall::compile(ProgramBuilder& builder, const KernelSpec& spec,
                                     const Configuration& config, const Problem& problem) {
  Compiled out;
  auto failed = [&](Result r) {
    out.result = std::move(r);
    return std::move(out);
  };
  if (auto r = refusal(spec, builder.device().info, problem, config)) return failed(*r);
  const Context ctx = launch_context(problem.precision, builder.device().info.compute_units);
  if (auto why = spec.check(config, DeviceLimits{}, ctx)) {
    return failed(Result::failure(config, Status::kInvalid, *why));
  }
  if (auto why = spec.check(config, builder.limits(), ctx)) {
    return failed(Result::failure(config, Status::kDeviceLimit, *why));
  }
  auto call = std::unique_ptr<GemmCall>(new GemmCall());
  call->builder_ = &builder;
  call->problem_ = problem;
  call->view_ = kernel_view(problem);
  try {
    call->geometry_ = launch_geometry(spec, config, ctx, call->view_);
  } catch (const Error& e) {
    return failed(Result::failure(config, Status::kInvalid, e.what()));
  }
  const LaunchGeometry& g = call->geometry_;
  const auto& item_sizes = builder.limits().max_work_item_sizes;
  for (size_t d = 0; d < g.local.size() && d < item_sizes.size(); ++d) {
    if (static_cast<int64_t>(g.local[d]) > item_sizes[d]) {
      return failed(
          Result::failure(config, Status::kDeviceLimit,
                          fmt::format("local size {} in dimension {} exceeds the device's {}",
                                      g.local[d], d, item_sizes[d])));
    }
  }
  if (g.padded && problem.batch > 1) {
    return failed(Result::failure(config, Status::kUnsupported,
                                  "kernel " + spec.name() +
                                      " is padded by the host, which "
                                      "computes no batches"));
  }
  // The contract passes sizes, offsets and leading dimensions as 32-bit ints.
  if (std::max({g.m * g.k, g.k * g.n, g.m * g.n}) > kIntMax) {
    return failed(Result::failure(config, Status::kUnsupported,
                                  "matrices of more than 2^31 elements exceed the kernels' int "
                                  "indices"));
  }

  Result& r = out.result;
  r.config = config;
  const BuildOutcome built = builder.program(spec, problem, config);
  r.binary_cached = built.cached;
  r.compile_ms = built.compile_ms;
  if (!built.ok) {
    Result f = Result::failure(config, Status::kCompileFailed, trim_build_log(built.log));
    f.compile_ms = built.compile_ms;
    return failed(f);
  }
  call->program_ = built.program;
  try {
    call->main_ = cl::Kernel(built.program, spec.entry_point().c_str());
  } catch (const cl::Error& e) {
    return failed(Result::failure(
        config, Status::kCompileFailed,
        "the program has no kernel '" + spec.entry_point() + "' (" + cl_error_name(e.err()) + ")"));
  }
  call->batch_args_ = problem.batch == 1                              ? 0
                      : problem.batch_layout == BatchLayout::kOffsets ? kOffsetsBatchArgs
                                                                      : kStridedBatchArgs;
  for (const auto& p : spec.runtime_parameters()) {
    call->runtime_values_.push_back(
        static_cast<cl_int>(spec.value_of(p.name, config, ctx).value()));
  }
  const auto runtime_args = static_cast<cl_uint>(call->runtime_values_.size());
  if (auto f = check_kernel(call->main_, spec, builder.device(), g, built, problem,
                            runtime_args + call->batch_args_, r)) {
    return failed(*f);
  }
  const cl_uint nargs = call->main_.getInfo<CL_KERNEL_NUM_ARGS>();
  call->contract_args_ = nargs - runtime_args - call->batch_args_;
  if (g.split_k && g.split_k->reduce_launch()) {
    try {
      call->reduce_ = cl::Kernel(built.program, g.split_k->reduce_entry.c_str());
    } catch (const cl::Error&) {
      return failed(
          Result::failure(config, Status::kCompileFailed,
                          "the program has no reduce kernel '" + g.split_k->reduce_entry + "'"));
    }
  }
  r.status = Status::kOk;
  out.call = std::move(call);
  return out;
}

}  // namespace gemmtune
