// xgemm_fast: a register-blocked GEMM for GPUs with large thread tiles, double-buffered local
// memory with register-staged prefetch, strided fragments, padding or XOR swizzle of local memory,
// grouped work-group rasterization, split-K and a fused bias/activation epilogue.
//
// Column-major view: C(M x N) = alpha * op(A) * op(B) + beta * C, op selected by TRANSA/TRANSB.
// Row-major problems arrive through the row-major swap on the host. Edges are guarded in the
// kernel, so any M, N, K runs without padding or copies.
//
// The parts, in the order the kernel needs them (the host expands the #include lines):
//   xgemm_fast_params.cl    tunables and their defaults, problem options, derived sizes
//   common.cl               element types for PRECISION, converting loads/stores, batch arguments
//   xgemm_fast_layout.cl    vector and DOT2 types, global and local-memory addressing
//   xgemm_fast_loads.cl     global memory -> registers -> local memory, one K tile at a time
//   xgemm_fast_loops.cl     the main loop: through local memory (plain or DOT2), or from global
//   xgemm_fast_epilogue.cl  alpha, beta, bias and activation; stores to C or the split-K workspace
// and below, the GEMM kernel and the split-K reduction.

#include "xgemm_fast_params.cl"
// Split-K shares dimension 2 with the batch: SPLITK work-groups per batch entry.
#define GT_BATCH_GROUPS_Z SPLITK
#include "common.cl"
#include "xgemm_fast_layout.cl"
#include "xgemm_fast_loads.cl"
#include "xgemm_fast_loops.cl"
#include "xgemm_fast_epilogue.cl"

// With a required work-group size NVIDIA's compiler sizes registers by it and ignores a register
// cap (measured: 160 registers with and without -cl-nv-maxrregcount=128), so the attribute is
// declared only without a cap.
#if REGCAP == 0
__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC, 1)))
#else
__kernel
#endif
void XgemmFast(const int M, const int N, const int K, const real_arg alpha_arg,
               const real_arg beta_arg, const __global mreal* restrict A, const int a_offset,
               const int lda, const __global mreal* restrict B, const int b_offset,
               const int ldb, __global mreal* C, const int c_offset, const int ldc,
               const __global mreal* restrict bias, __global real* restrict work GT_BATCH_ARGS) {
#if LDS
  // Aligned for the vector reads; half tiles (16acc32) are declared as ushort, see common.cl.
#if GT_HALF_MEMORY
  __local ushort As_bits[STAGES * KWG * ASTRIDE] __attribute__((aligned(64)));
  __local ushort Bs_bits[STAGES * KWG * BSTRIDE] __attribute__((aligned(64)));
  __local half* const As = (__local half*)As_bits;
  __local half* const Bs = (__local half*)Bs_bits;
#else
  __local real As[STAGES * KWG * ASTRIDE] __attribute__((aligned(64)));
  __local real Bs[STAGES * KWG * BSTRIDE] __attribute__((aligned(64)));
#endif
#endif
  const real alpha = (real)alpha_arg;
  const real beta = (real)beta_arg;
  // This work-group's batch entry (the only one without batching); its split-K partial sums
  // follow those of the entries before it in the workspace.
  const int a_shift = a_offset + GT_BATCH_A, b_shift = b_offset + GT_BATCH_B;
  A += a_shift;
  B += b_shift;
  // Wide global loads need vector-aligned addresses: buffers start aligned, so the leading
  // dimension and the offset decide (once, for the whole work-group).
  const int a_vec = lda % GLV == 0 && a_shift % GLV == 0;
  const int b_vec = ldb % GLV == 0 && b_shift % GLV == 0;
  C += c_offset + GT_BATCH_C;
#if SPLITK > 1
  work += (size_t)GT_BATCH_INDEX * SPLITK * M * N;
#endif

  const int tx = get_local_id(0), ty = get_local_id(1);

  // Tile coordinates, optionally rasterized in groups of GROUPM tile rows for cache reuse.
  int tile_m = get_group_id(0), tile_n = get_group_id(1);
#if GROUPM > 1
  {
    const int tiles_m = get_num_groups(0), tiles_n = get_num_groups(1);
    const int linear = tile_n * tiles_m + tile_m;
    const int per_group = GROUPM * tiles_n;
    const int first_m = (linear / per_group) * GROUPM;
    const int rows = min(tiles_m - first_m, GROUPM);
    const int in_group = linear % per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows;
  }
#endif
  const int m0 = tile_m * MWG, n0 = tile_n * NWG;

  // The K range of this work-group (all of K unless split).
#if SPLITK > 1
  const int split = get_group_id(2) % SPLITK;
  const int kchunk = ((K + SPLITK - 1) / SPLITK + KWG - 1) / KWG * KWG;
  const int kbegin = split * kchunk;
  const int kend = min(K, kbegin + kchunk);
#else
  const int split = 0;
  const int kbegin = 0;
  const int kend = K;
#endif

  // Accumulators are VWM-wide vectors along M: explicit vector math for CPUs, and the same
  // scalar FMAs on GPUs.
  accM acc[MWI / VWM][NWI];
#pragma unroll
  for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
    for (int j = 0; j < NWI; ++j) acc[i][j] = ACC_ZERO;
  }

#if LDS
  loop_local(A, lda, B, ldb, M, N, kbegin, kend, m0, n0, tx, ty, a_vec, b_vec, As, Bs, acc);
#else
  loop_global(A, lda, B, ldb, M, N, kbegin, kend, m0, n0, tx, ty, acc);
#endif

  store_results(acc, M, N, m0, n0, tx, ty, alpha, beta, C, ldc, bias, work, split);
}

// Split-K reduction: sums the SPLITK partial products and applies alpha, beta and the epilogue.
// One work-item per element of C, M fastest so that reads and writes coalesce.
// Batched, it runs with the batch entry as dimension 2 (one work-group per entry there) and
// takes the GEMM kernel's batch arguments.
#undef GT_BATCH_GROUPS_Z
#define GT_BATCH_GROUPS_Z 1
__kernel void XgemmFastReduce(const int M, const int N, const real_arg alpha_arg,
                              const real_arg beta_arg, __global mreal* C, const int c_offset,
                              const int ldc, const __global mreal* restrict bias,
                              const __global real* restrict work GT_BATCH_ARGS) {
  const int gm = get_global_id(0), gn = get_global_id(1);
  if (gm >= M || gn >= N) return;
  const real alpha = (real)alpha_arg;
  const real beta = (real)beta_arg;
  C += c_offset + GT_BATCH_C;
  work += (size_t)GT_BATCH_INDEX * SPLITK * M * N;
  real sum = ZERO;
  for (int s = 0; s < SPLITK; ++s) sum += work[(size_t)s * M * N + gm + (size_t)gn * M];
  store_output(alpha * sum, beta, C, ldc, bias, gm, gn);
}
