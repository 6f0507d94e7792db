// SPDX-License-Identifier: Apache-2.0
// How a GEMM problem maps onto the templates' uniform kernel contract (column-major,
// C = alpha * op(A) * op(B) + beta * C), and the launch geometry a template declares in the
// `launch` block of its json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune {

// The problem as the kernel sees it. A row-major problem C = op(A) op(B) is computed as the
// column-major C^T = op(B)^T op(A)^T: the A and B buffers, M and N, and the transposes swap,
// and no data moves.
struct KernelView {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  bool swap_ab = false;  // the kernel's A operand is the problem's B buffer
  int64_t batch = 1;     // GEMMs of this view computed by one launch
  BatchLayout batch_layout = BatchLayout::kStrided;

  // Stored (column-major) rows of each operand; they are also the leading dimensions, since
  // the evaluator stores matrices densely.
  int64_t a_rows() const { return trans_a ? k : m; }
  int64_t a_cols() const { return trans_a ? m : k; }
  int64_t b_rows() const { return trans_b ? n : k; }
  int64_t b_cols() const { return trans_b ? k : n; }
};

KernelView kernel_view(const Problem& problem);

// The context a launch is evaluated in: the element size of `precision` and the device's
// compute units.
Context launch_context(Precision precision, int64_t compute_units);

// Split-K declaration: `parameter` partial products in a workspace, summed by a reduce kernel or,
// `in_kernel`, by the main kernel itself (the last work-group of each tile, found through
// `counters` int counters per batch entry).
struct SplitK {
  std::string parameter;
  std::string reduce_entry;
  int64_t factor = 1;              // value of the parameter for this configuration
  int64_t workspace_elements = 0;  // 0 when the template declares no workspace
  std::vector<size_t> reduce_global, reduce_local;
  bool in_kernel = false;  // only where factor > 1
  int64_t counters = 0;    // per batch entry; 0 unless in_kernel

  // Whether the reduce kernel runs after the main one.
  bool reduce_launch() const { return factor > 1 && !in_kernel; }
};

struct LaunchGeometry {
  std::vector<size_t> global, local;  // one entry per dimension (1 to 3)
  // Sizes passed to the kernel: padded up to the declared multiples when `padded`.
  int64_t m = 0, n = 0, k = 0;
  bool padded = false;
  int64_t pad_m = 1, pad_n = 1, pad_k = 1;  // declared multiples (1 when not padded)
  int64_t align_ld = 1;  // the multiple A's and B's leading dimensions and offsets must be of
  std::optional<SplitK> split_k;
};

// Whether the template's launch block declares batching in `layout`:
// "batch": {"layouts": ["strided", "offsets"]}. Such a template takes the BATCH_LAYOUT define
// and arguments of kernel_templates/common.cl and reads its batch entry from the work-group
// index in dimension 2.
bool supports_batch(const KernelSpec& spec, BatchLayout layout);

// Whether the template declares every item of `epilogue`: "epilogue": ["bias", "relu", "gelu"]
// at the top of its json. Such a template takes the BIAS and ACTIVATION defines and a bias
// argument (kernel_templates/xgemm_fast.cl). An empty epilogue is always supported.
bool supports_epilogue(const KernelSpec& spec, const Epilogue& epilogue);

// Evaluates the launch block for a configuration: expressions over the parameters, derived
// values, ELEM_BYTES and the kernel-view sizes M, N, K (padded ones when "pad" is declared).
// A batched view (batch > 1) runs as one launch: dimension 2 of the declared geometry is
// multiplied by the batch (appended with local size 1 when only two are declared), so that
// every batch entry gets its own work-groups.
// Throws Error naming the template and the field for a malformed block or a value that is not
// positive.
LaunchGeometry launch_geometry(const KernelSpec& spec, const Configuration& config,
                               const Context& context, const KernelView& view);

// launch_geometry with no value where it throws: for callers that only weigh a configuration
// (the selection rules, the report's checks) and leave the reason to its own check where it runs.
std::optional<LaunchGeometry> try_launch_geometry(const KernelSpec& spec,
                                                  const Configuration& config,
                                                  const Context& context, const KernelView& view);

}  // namespace gemmtune
