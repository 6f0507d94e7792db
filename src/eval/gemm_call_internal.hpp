// SPDX-License-Identifier: Apache-2.0
// What the two halves of GemmCall (gemm_call.cpp: checking and compiling a kernel;
// gemm_call_bind.cpp: binding buffers and enqueueing) share: the kernels' argument contract.
#pragma once

#include <cstdint>
#include <limits>

#include "src/device/opencl.hpp"

namespace gemmtune::gemm_call_args {

// The contract's argument count, with a bias vector and a workspace appended, and with the
// counters of an in-kernel split-K reduction after those.
inline constexpr cl_uint kContractArgs = 14;
inline constexpr cl_uint kContractArgsExtended = 16;
inline constexpr cl_uint kContractArgsCounters = 17;
inline constexpr cl_uint kBiasArg = 14, kWorkArg = 15, kCountersArg = 16;
// Arguments a batched kernel takes after those (kernel_templates/common.cl): three strides, or
// one array of offsets.
inline constexpr cl_uint kStridedBatchArgs = 3;
inline constexpr cl_uint kOffsetsBatchArgs = 1;

// Sizes and offsets the kernels take as int.
inline constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

}  // namespace gemmtune::gemm_call_args
