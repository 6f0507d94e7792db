// SPDX-License-Identifier: Apache-2.0
// xgemm_skinny: GEMM where one side of C is small (a few rows or a few columns: vector times
// matrix, matrix times a few vectors). Such a GEMM does about 2 flops per element of the large
// operand, so it is bound by reading that operand once; the kernel streams it with vector loads
// and reads the small operand through the cache.
//
// In the kernel's column-major view, SIDE picks the small side: SIDE=0, M is small and
// C (M x N) = op(A) op(B) streams B; SIDE=1, N is small and the kernel computes the transposed
// product C^T (N x M) = op(B)^T op(A)^T, streaming A. Below, R is the small side (rows of the
// computed product), J the large one (its columns), S the streamed operand (K x J) and V the
// small one (R x K). Any shape is computed correctly with either SIDE: R is walked in blocks of MB
// rows, each block re-reading S, so the wrong SIDE is only slow.
//
// A work-group of WGJ x WGK work-items owns NWG = WGJ * NWI columns of the product and one of
// SPLITK parts of K: its WGK K-slices accumulate partial sums in registers, which are then summed
// in local memory. With SPLITK = 1 the work-group writes C; above 1 it writes its part's sums to
// the workspace, and the parts are added into C by XgemmSkinnyReduce (KREDUCE = 0, a second
// launch) or by the last of the SPLITK work-groups of these columns (KREDUCE = 1, one launch; see
// splitk_last.cl). Splitting K is what gives a matrix times one vector enough work-groups to keep
// every compute unit reading (N / NWG alone is a few dozen work-groups for N = 4096).
// A work-item owns NWI columns and MB rows (MB x NWI accumulators) and loads S in vectors of VW
// along S's contiguous dimension: along K when S is stored with K contiguous (vectors of
// consecutive k per column, work-items of one column side by side along K), along J otherwise
// (vectors of consecutive columns, work-items side by side along J). The vectors are loaded
// aligned when S's offset and leading dimension are multiples of VW, element-aligned otherwise;
// vectors that cross the end of K or J are loaded element by element. The values below are the
// defaults of xgemm_skinny.json.

#ifndef SIDE
#define SIDE 0  // 0: M is small (B streamed); 1: N is small (A streamed)
#endif
#ifndef WGJ
#define WGJ 16  // work-items along the large side J
#endif
#ifndef WGK
#define WGK 16  // K-slices (work-items along K) per work-group
#endif
#ifndef NWI
#define NWI 4  // columns of J per work-item
#endif
#ifndef VW
#define VW 4  // vector width of the loads of S
#endif
#ifndef MB
#define MB 4  // rows of R per register block
#endif
#ifndef KU
#define KU 2  // unroll factor of the K loop
#endif
#ifndef SPLITK
#define SPLITK 1  // parts of K, each a work-group of its own (dimension 1 of the launch)
#endif
#ifndef KREDUCE
#define KREDUCE 0  // parts added by 0: XgemmSkinnyReduce (a second launch), 1: the last work-group
#endif

#include "common.cl"
#include "splitk_last.cl"

#ifndef TRANSA
#define TRANSA 0
#endif
#ifndef TRANSB
#define TRANSB 0
#endif

#define NWG (WGJ * NWI)  // columns per work-group
#define WGS (WGJ * WGK)  // work-items per work-group

// Output o of a block of MB rows: its row in the block and its column in the work-group, so that
// neighbouring work-items store neighbouring elements of C.
#if SIDE == 0
#define BLOCK_ROW(o) ((o) % MB)
#define BLOCK_COL(o) ((o) / MB)
#else
#define BLOCK_ROW(o) ((o) / NWG)
#define BLOCK_COL(o) ((o) % NWG)
#endif
// Element (row, j) of the computed product within a part of the workspace: element (m, n) of C,
// column-major M x N.
#if SIDE == 0
#define PART_INDEX(row, j) ((row) + (size_t)(j)*M)
#else
#define PART_INDEX(row, j) ((j) + (size_t)(row)*M)
#endif

// C = alpha * sum + beta * C at `cp`; beta == 0 reads no C (it may hold NaN then).
inline void store_c(const real sum, const real_arg alpha, const real_arg beta, __global mreal* cp) {
  real out = (real)alpha * sum;
  if (beta != (real_arg)0) out += (real)beta * GT_LOAD(cp);
  GT_STORE(out, cp);
}

// Which dimension of S (K x J) and of V (R x K) is contiguous in memory.
#if SIDE == 0
#define S_CONTIG_J (TRANSB == 1)  // S = op(B): B stored N x K
#define V_CONTIG_K (TRANSA == 1)  // V = op(A): A stored K x M
#else
#define S_CONTIG_J (TRANSA == 0)  // S = op(A)^T: A stored M x K
#define V_CONTIG_K (TRANSB == 0)  // V = op(B)^T: B stored K x N
#endif

// Offsets of element (k, j) of S and (i, k) of V from their first element.
#if S_CONTIG_J
#define S_IDX(k, j) ((j) + (k)*lds)
#else
#define S_IDX(k, j) ((k) + (j)*lds)
#endif
#if V_CONTIG_K
#define V_IDX(i, k) ((k) + (i)*ldv)
#else
#define V_IDX(i, k) ((i) + (k)*ldv)
#endif

#define realV GT_CAT(real, VW)
#define MLOAD_V(p) GT_CAT(GT_MLOAD_, VW)(p)
#define MLOADA_V(p) GT_CAT(GT_MLOADA_, VW)(p)
#define VSTORE_V(v, p) GT_CAT(GT_VSTORE_, VW)(v, p)

// VW consecutive elements of S from `p` into the private array `dst`.
#define LOAD_S_VECTOR(dst, p)                            \
  do {                                                   \
    const realV t_ = aligned ? MLOADA_V(p) : MLOAD_V(p); \
    VSTORE_V(t_, dst);                                   \
  } while (0)

// The MB rows of V of this block, clamped to the last row: rows past R compute values that are
// never stored.
#define ROW(i) min(r0 + (i), R - 1)

#if S_CONTIG_J
// Step k: one row of S, NWI columns as NWI/VW vectors; vector v of a work-item covers the
// columns (v * WGJ + tj) * VW + e of the group, so that work-items read side by side.
#define COL(c) ((((c) / VW) * WGJ + tj) * VW + (c) % VW)
#define STEP(k)                                                        \
  do {                                                                 \
    real vv[MB];                                                       \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) {                   \
      vv[i] = GT_LOAD(vgm + V_IDX(ROW(i), (k)));                       \
    }                                                                  \
    _Pragma("unroll") for (int v = 0; v < NWI / VW; ++v) {             \
      const int j = j0 + (v * WGJ + tj) * VW;                          \
      real sv[VW];                                                     \
      if (j + VW <= J) {                                               \
        LOAD_S_VECTOR(sv, sgm + S_IDX((k), j));                        \
      } else {                                                         \
        _Pragma("unroll") for (int e = 0; e < VW; ++e) {               \
          sv[e] = j + e < J ? GT_LOAD(sgm + S_IDX((k), j + e)) : ZERO; \
        }                                                              \
      }                                                                \
      _Pragma("unroll") for (int i = 0; i < MB; ++i) {                 \
        _Pragma("unroll") for (int e = 0; e < VW; ++e) {               \
          acc[i][v * VW + e] += vv[i] * sv[e];                         \
        }                                                              \
      }                                                                \
    }                                                                  \
  } while (0)
#else
// Steps k .. k+VW-1 (all inside K): per column one vector of S along K; column c of a work-item
// is column c * WGJ + tj of the group, clamped to the last column (never stored past J).
#define COL(c) ((c)*WGJ + tj)
#define STEP(k)                                          \
  do {                                                   \
    real vv[MB][VW];                                     \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) {     \
      V_ROW_LOAD(vv[i], ROW(i), (k));                    \
    }                                                    \
    _Pragma("unroll") for (int c = 0; c < NWI; ++c) {    \
      const int jc = min(j0 + COL(c), J - 1);            \
      real sv[VW];                                       \
      LOAD_S_VECTOR(sv, sgm + S_IDX((k), jc));           \
      _Pragma("unroll") for (int i = 0; i < MB; ++i) {   \
        _Pragma("unroll") for (int e = 0; e < VW; ++e) { \
          acc[i][c] += vv[i][e] * sv[e];                 \
        }                                                \
      }                                                  \
    }                                                    \
  } while (0)
// The same for the last, partial vector of K: element by element, k + e < K only.
#define STEP_TAIL(k)                                      \
  do {                                                    \
    for (int e = 0; e < VW && (k) + e < k_end; ++e) {     \
      real vv[MB];                                        \
      _Pragma("unroll") for (int i = 0; i < MB; ++i) {    \
        vv[i] = GT_LOAD(vgm + V_IDX(ROW(i), (k) + e));    \
      }                                                   \
      _Pragma("unroll") for (int c = 0; c < NWI; ++c) {   \
        const int jc = min(j0 + COL(c), J - 1);           \
        const real s = GT_LOAD(sgm + S_IDX((k) + e, jc)); \
        _Pragma("unroll") for (int i = 0; i < MB; ++i) {  \
          acc[i][c] += vv[i] * s;                         \
        }                                                 \
      }                                                   \
    }                                                     \
  } while (0)
// VW consecutive k of one row of V: a vector where V is contiguous along K.
#if V_CONTIG_K
#define V_ROW_LOAD(dst, i, k)                        \
  do {                                               \
    const realV t_ = MLOAD_V(vgm + V_IDX((i), (k))); \
    VSTORE_V(t_, dst);                               \
  } while (0)
#else
#define V_ROW_LOAD(dst, i, k)                        \
  do {                                               \
    _Pragma("unroll") for (int e = 0; e < VW; ++e) { \
      dst[e] = GT_LOAD(vgm + V_IDX((i), (k) + e));   \
    }                                                \
  } while (0)
#endif
#endif

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1))) void xgemm_skinny(
    const int M, const int N, const int K, const real_arg alpha, const real_arg beta,
    const __global mreal* restrict A, const int a_offset, const int lda,
    const __global mreal* restrict B, const int b_offset, const int ldb, __global mreal* C,
    const int c_offset, const int ldc, const __global mreal* restrict bias,
    __global real* restrict work, __global int* restrict counters) {
#if SIDE == 0
  const int R = M, J = N;
  const __global mreal* restrict sgm = B + b_offset;
  const __global mreal* restrict vgm = A + a_offset;
  const int s_offset = b_offset, lds = ldb, ldv = lda;
  const int c_row = 1, c_col = ldc;  // element (i, j) of the product is C[i + j * ldc]
#else
  const int R = N, J = M;
  const __global mreal* restrict sgm = A + a_offset;
  const __global mreal* restrict vgm = B + b_offset;
  const int s_offset = a_offset, lds = lda, ldv = ldb;
  const int c_row = ldc, c_col = 1;  // element (i, j) of the product is C[j + i * ldc]
#endif
  const int lid = get_local_id(0);
#if S_CONTIG_J
  const int tj = lid % WGJ, tk = lid / WGJ;
#else
  const int tk = lid % WGK, tj = lid / WGK;
#endif
  const int j0 = get_group_id(0) * NWG;
  // This work-group's part of K: whole vectors of VW, so that vector loads along K stay aligned.
  const int k_part = ((K + SPLITK - 1) / SPLITK + VW - 1) / VW * VW;
  const int k_begin = min((int)get_group_id(1) * k_part, K);
  const int k_end = min(k_begin + k_part, K);
  // Every vector of S starts at s_offset + a multiple of VW (plus multiples of lds): aligned
  // loads are valid when both are multiples of VW.
  const bool aligned = s_offset % VW == 0 && lds % VW == 0;
#if SPLITK > 1 && KREDUCE
  // Split-K in one launch: the flag of the last work-group (splitk_last.cl) shares the partial
  // sums' local memory, done with by the time it is set. A separate int would add 4 bytes, which
  // costs a work-group per compute unit where the sums fill a fraction of it exactly (the
  // defaults' 16 KB of GCN's 64 KB).
  __local union {
    real sums[WGK * MB * NWG];
    int last;
  } red_shared;
  __local real* const red = red_shared.sums;
#else
  __local real red[WGK * MB * NWG];
#endif

  for (int r0 = 0; r0 < R; r0 += MB) {
    real acc[MB][NWI];
#pragma unroll
    for (int i = 0; i < MB; ++i) {
#pragma unroll
      for (int c = 0; c < NWI; ++c) acc[i][c] = ZERO;
    }
#if S_CONTIG_J
    // This work-item's K-slice: k = tk, tk + WGK, ...
    int k = k_begin + tk;
    for (; k + (KU - 1) * WGK < k_end; k += KU * WGK) {
#pragma unroll
      for (int u = 0; u < KU; ++u) STEP(k + u * WGK);
    }
    for (; k < k_end; k += WGK) STEP(k);
#else
    // This work-item's K-slice: vectors k = tk * VW, (tk + WGK) * VW, ...
    int k = k_begin + tk * VW;
    for (; k + ((KU - 1) * WGK + 1) * VW <= k_end; k += KU * WGK * VW) {
#pragma unroll
      for (int u = 0; u < KU; ++u) STEP(k + u * WGK * VW);
    }
    for (; k < k_end; k += WGK * VW) {
      if (k + VW <= k_end) {
        STEP(k);
      } else {
        STEP_TAIL(k);
      }
    }
#endif
      // The WGK partial sums of each output meet in local memory; the work-group sums them.
#pragma unroll
    for (int i = 0; i < MB; ++i) {
#pragma unroll
      for (int c = 0; c < NWI; ++c) red[(tk * MB + i) * NWG + COL(c)] = acc[i][c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = lid; o < MB * NWG; o += WGS) {
      const int i = BLOCK_ROW(o), col = BLOCK_COL(o);
      real sum = ZERO;
      for (int t = 0; t < WGK; ++t) sum += red[(t * MB + i) * NWG + col];
      const int row = r0 + i, j = j0 + col;
      if (row < R && j < J) {
#if SPLITK == 1
        store_c(sum, alpha, beta, C + c_offset + row * c_row + j * c_col);
#else
        // Part s of element (m, n) of C lies at s * M * N + m + n * M of the workspace.
        work[(size_t)get_group_id(1) * M * N + PART_INDEX(row, j)] = sum;
#endif
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // `red` is rewritten by the next block of rows
  }

#if SPLITK > 1 && KREDUCE
  // One launch: the last work-group of these columns adds the SPLITK parts of each of their
  // outputs in XgemmSkinnyReduce's order, consecutive work-items on consecutive elements of C. One
  // loop over the group's outputs: a loop per block of MB rows, as the stores above take, keeps
  // more registers live (SIDE 1 on gfx803, LLVM 16: 65 VGPRs instead of 63, a wave per SIMD
  // less).
  if (gt_last_part(counters + get_group_id(0), &red_shared.last, SPLITK)) {
    GT_PARTS real* parts = work;
    const int cols = min(NWG, J - j0);  // R * cols <= M * N: no int overflow
    for (int e = lid; e < R * cols; e += WGS) {
#if SIDE == 0
      const int row = e % R, j = j0 + e / R;
#else
      const int row = e / cols, j = j0 + e % cols;
#endif
      real sum = ZERO;
      for (int s = 0; s < SPLITK; ++s) sum += parts[(size_t)s * M * N + PART_INDEX(row, j)];
      store_c(sum, alpha, beta, C + c_offset + row * c_row + j * c_col);
    }
  }
#endif
}

// Adds the SPLITK parts of each element of C from the workspace (KREDUCE = 0): C = alpha * sum +
// beta * C. One work-item per element (m, n); `bias` is unused (no epilogue) but keeps the
// argument order of the split-K contract.
__kernel void XgemmSkinnyReduce(const int M, const int N, const real_arg alpha,
                                const real_arg beta, __global mreal* C, const int c_offset,
                                const int ldc, const __global mreal* restrict bias,
                                const __global real* restrict work) {
  const int m = get_global_id(0), n = get_global_id(1);
  if (m >= M || n >= N) return;
  real sum = ZERO;
  for (int s = 0; s < SPLITK; ++s) sum += work[(size_t)s * M * N + m + (size_t)n * M];
  store_c(sum, alpha, beta, C + c_offset + m + n * ldc);
}
