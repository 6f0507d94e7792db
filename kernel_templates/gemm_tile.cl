// SPDX-License-Identifier: Apache-2.0
// The tiled GEMM body shared by xgemm and xgemm_direct. It computes, in column-major terms,
//   C (M x N) = alpha * op(A) * op(B) + beta * C
// with op(A) of M x K and op(B) of K x N; TRANSA / TRANSB select op through index maps.
//
// Each work-group of MDIMC x NDIMC work-items owns an MWG x NWG tile of C and walks K in steps of
// KWG. A work-item accumulates MWI x NWI outputs, as MWI/VWM vectors along M for each of its NWI
// columns. With SA (SB) the K-slice of op(A) (op(B)) is first staged in local memory by all
// work-items of the group, re-arranged as MDIMA x KDIMA (NDIMB x KDIMB); without, every
// work-item reads its operands from global memory itself.
//
// Settings expected from the including template:
//   EDGE_CHECKS             0: the host guarantees M, N, K are multiples of MWG, NWG, KWG;
//                           1: any size, tiles crossing an edge take a checked path.
//   GLOBAL_VECTORS_ALIGNED  1: vector accesses to A, B and C may assume vector alignment (the host
//                           passes zero offsets and leading dimensions that are multiples of the
//                           tile sizes); 0: only element alignment is assumed.
//   GEMM_ENTRY              the name of the kernel.

#ifndef TRANSA
#define TRANSA 0
#endif
#ifndef TRANSB
#define TRANSB 0
#endif

#define WGS (MDIMC * NDIMC)       // work-items per work-group
#define MWI (MWG / MDIMC)         // outputs per work-item along M
#define NWI (NWG / NDIMC)         // outputs per work-item along N
#define MVI (MWI / VWM)           // vectors per work-item along M
#define NVI (NWI / VWN)           // vectors per work-item along N
#define KDIMA (WGS / MDIMA)       // re-arranged work-items along K when staging A
#define KDIMB (WGS / NDIMB)       // re-arranged work-items along K when staging B
#define ALD (MWG + PADA)          // row length of the staged A tile (padding spreads banks)
#define BLD (NWG + PADB)          // row length of the staged B tile

#if EDGE_CHECKS && (SA == 0 || SB == 0)
#error "edge checks need both operands staged in local memory (SA=1, SB=1)"
#endif

#define realM GT_CAT(real, VWM)
#define realN GT_CAT(real, VWN)
// Vectors of the arithmetic type from and to private arrays.
#define VLOAD_M(p) GT_CAT(GT_VLOAD_, VWM)(p)
#define VLOAD_N(p) GT_CAT(GT_VLOAD_, VWN)(p)
#define VSTORE_M(v, p) GT_CAT(GT_VSTORE_, VWM)(v, p)
#define VSTORE_N(v, p) GT_CAT(GT_VSTORE_, VWN)(v, p)
// Vectors from and to matrix memory (converted for 16acc32): local tiles and, when not aligned,
// global memory.
#define MLOAD_M(p) GT_CAT(GT_MLOAD_, VWM)(p)
#define MLOAD_N(p) GT_CAT(GT_MLOAD_, VWN)(p)
#define MSTORE_M(v, p) GT_CAT(GT_MSTORE_, VWM)(v, p)
#define MSTORE_N(v, p) GT_CAT(GT_MSTORE_, VWN)(v, p)
#if GLOBAL_VECTORS_ALIGNED
#define GLOAD_M(p) GT_CAT(GT_MLOADA_, VWM)(p)
#define GLOAD_N(p) GT_CAT(GT_MLOADA_, VWN)(p)
#define GSTORE_M(v, p) GT_CAT(GT_MSTOREA_, VWM)(v, p)
#else
#define GLOAD_M(p) MLOAD_M(p)
#define GLOAD_N(p) MLOAD_N(p)
#define GSTORE_M(v, p) MSTORE_M(v, p)
#endif

// Vector i of work-item t along M (j along N), in vectors from the tile's origin: STRM=0 gives a
// work-item consecutive vectors, STRM=1 interleaves the work-items.
#if STRM == 0
#define MV(t, i) ((t) * MVI + (i))
#else
#define MV(t, i) ((i) * MDIMC + (t))
#endif
#if STRN == 0
#define NV(t, j) ((t) * NVI + (j))
#else
#define NV(t, j) ((j) * NDIMC + (t))
#endif

// Element (m, k) of op(A) and (k, n) of op(B), column-major storage, as a value of the
// arithmetic type.
#if TRANSA == 0
#define A_AT(m, k) GT_LOAD(agm + (k) * lda + (m))
#else
#define A_AT(m, k) GT_LOAD(agm + (m) * lda + (k))
#endif
#if TRANSB == 0
#define B_AT(k, n) GT_LOAD(bgm + (n) * ldb + (k))
#else
#define B_AT(k, n) GT_LOAD(bgm + (k) * ldb + (n))
#endif

#if SA == 1
// Stages the KWG x MWG slice of op(A) at (m0, k0) as alm[k * ALD + m]; outside the matrix
// (only when !full) it stores zeros, which add nothing to the products.
inline void load_tile_a(const __global mreal* restrict agm, const int lda, const int m0,
                        const int k0, const int M, const int K, const bool full,
                        __local mreal* alm) {
  const int tid = get_local_id(1) * MDIMC + get_local_id(0);
#if TRANSA == 0
  // A is contiguous along M: MDIMA neighbouring work-items read neighbouring vectors.
  const int tm = tid % MDIMA;
  const int tk = tid / MDIMA;
#pragma unroll
  for (int j = 0; j < KWG / KDIMA; ++j) {
    const int k = tk + j * KDIMA;
#pragma unroll
    for (int i = 0; i < MWG / (MDIMA * VWM); ++i) {
      const int m = (tm + i * MDIMA) * VWM;
      __local mreal* dst = alm + k * ALD + m;
      if (full) {
        MSTORE_M(GLOAD_M(agm + (k0 + k) * lda + m0 + m), dst);
      } else {
        for (int v = 0; v < VWM; ++v) {
          const int gm = m0 + m + v;
          const int gk = k0 + k;
          GT_STORE((gm < M && gk < K) ? A_AT(gm, gk) : ZERO, dst + v);
        }
      }
    }
  }
#else
  // op(A) is contiguous along K: KDIMA neighbouring work-items read neighbouring elements.
  const int tk = tid % KDIMA;
  const int tm = tid / KDIMA;
#pragma unroll
  for (int j = 0; j < KWG / KDIMA; ++j) {
    const int k = tk + j * KDIMA;
#pragma unroll
    for (int i = 0; i < MWG / MDIMA; ++i) {
      const int m = tm + i * MDIMA;
      const int gm = m0 + m;
      const int gk = k0 + k;
      GT_STORE((full || (gm < M && gk < K)) ? A_AT(gm, gk) : ZERO, alm + k * ALD + m);
    }
  }
#endif
}
#endif

#if SB == 1
// Stages the KWG x NWG slice of op(B) at (k0, n0) as blm[k * BLD + n], zeros outside.
inline void load_tile_b(const __global mreal* restrict bgm, const int ldb, const int n0,
                        const int k0, const int N, const int K, const bool full,
                        __local mreal* blm) {
  const int tid = get_local_id(1) * MDIMC + get_local_id(0);
#if TRANSB == 1
  // op(B) is contiguous along N: NDIMB neighbouring work-items read neighbouring vectors.
  const int tn = tid % NDIMB;
  const int tk = tid / NDIMB;
#pragma unroll
  for (int j = 0; j < KWG / KDIMB; ++j) {
    const int k = tk + j * KDIMB;
#pragma unroll
    for (int i = 0; i < NWG / (NDIMB * VWN); ++i) {
      const int n = (tn + i * NDIMB) * VWN;
      __local mreal* dst = blm + k * BLD + n;
      if (full) {
        MSTORE_N(GLOAD_N(bgm + (k0 + k) * ldb + n0 + n), dst);
      } else {
        for (int v = 0; v < VWN; ++v) {
          const int gn = n0 + n + v;
          const int gk = k0 + k;
          GT_STORE((gn < N && gk < K) ? B_AT(gk, gn) : ZERO, dst + v);
        }
      }
    }
  }
#else
  // B is contiguous along K: KDIMB neighbouring work-items read neighbouring elements.
  const int tk = tid % KDIMB;
  const int tn = tid / KDIMB;
#pragma unroll
  for (int j = 0; j < KWG / KDIMB; ++j) {
    const int k = tk + j * KDIMB;
#pragma unroll
    for (int i = 0; i < NWG / NDIMB; ++i) {
      const int n = tn + i * NDIMB;
      const int gn = n0 + n;
      const int gk = k0 + k;
      GT_STORE((full || (gn < N && gk < K)) ? B_AT(gk, gn) : ZERO, blm + k * BLD + n);
    }
  }
#endif
}
#endif

#include "gemm_tile_store.cl"

__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC, 1)))
void GEMM_ENTRY(const int M, const int N, const int K, const real_arg alpha,
                const real_arg beta, const __global mreal* restrict A, const int a_offset,
                const int lda, const __global mreal* restrict B, const int b_offset,
                const int ldb, __global mreal* C, const int c_offset,
                const int ldc GT_BATCH_ARGS) {
  const int tm = get_local_id(0);
  const int tn = get_local_id(1);
  const int m0 = get_group_id(0) * MWG;
  const int n0 = get_group_id(1) * NWG;
  // The matrices of this work-group's batch entry (the only ones without batching).
  const __global mreal* restrict agm = A + a_offset + GT_BATCH_A;
  const __global mreal* restrict bgm = B + b_offset + GT_BATCH_B;
  __global mreal* cgm = C + c_offset + GT_BATCH_C;
#if SA == 1
  GT_LOCAL_ARRAY(alm, KWG * ALD);
#endif
#if SB == 1
  GT_LOCAL_ARRAY(blm, KWG * BLD);
#endif
#if EDGE_CHECKS
  const bool full_mn = m0 + MWG <= M && n0 + NWG <= N;
#else
  const bool full_mn = true;
#endif

  realM acc[NWI][MVI];
#pragma unroll
  for (int ni = 0; ni < NWI; ++ni) {
#pragma unroll
    for (int i = 0; i < MVI; ++i) acc[ni][i] = (realM)(ZERO);
  }

  for (int k0 = 0; k0 < K; k0 += KWG) {
#if SA == 1 || SB == 1
#if EDGE_CHECKS
    const bool full = full_mn && k0 + KWG <= K;
#else
    const bool full = true;
#endif
#if SA == 1
    load_tile_a(agm, lda, m0, k0, M, K, full, alm);
#endif
#if SB == 1
    load_tile_b(bgm, ldb, n0, k0, N, K, full, blm);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    for (int kb = 0; kb < KWG; kb += KWI) {
#pragma unroll
      for (int ku = 0; ku < KWI; ++ku) {
        const int k = kb + ku;
        realM apm[MVI];
        real bpm[NWI];
#pragma unroll
        for (int i = 0; i < MVI; ++i) {
          const int m = MV(tm, i) * VWM;
#if SA == 1
          apm[i] = MLOAD_M(alm + k * ALD + m);
#elif TRANSA == 0
          apm[i] = GLOAD_M(agm + (k0 + k) * lda + m0 + m);
#else
          real gathered[VWM];
#pragma unroll
          for (int v = 0; v < VWM; ++v) gathered[v] = A_AT(m0 + m + v, k0 + k);
          apm[i] = VLOAD_M(gathered);
#endif
        }
#pragma unroll
        for (int j = 0; j < NVI; ++j) {
          const int n = NV(tn, j) * VWN;
#if SB == 1
          VSTORE_N(MLOAD_N(blm + k * BLD + n), bpm + j * VWN);
#elif TRANSB == 1
          VSTORE_N(GLOAD_N(bgm + (k0 + k) * ldb + n0 + n), bpm + j * VWN);
#else
#pragma unroll
          for (int v = 0; v < VWN; ++v) bpm[j * VWN + v] = B_AT(k0 + k, n0 + n + v);
#endif
        }
#pragma unroll
        for (int ni = 0; ni < NWI; ++ni) {
#pragma unroll
          for (int i = 0; i < MVI; ++i) acc[ni][i] += apm[i] * bpm[ni];
        }
      }
    }
#if SA == 1 || SB == 1
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

  const real a = (real)alpha;
  const real b = (real)beta;
#pragma unroll
  for (int j = 0; j < NVI; ++j) {
#pragma unroll
    for (int v = 0; v < VWN; ++v) {
      const int ni = j * VWN + v;
      const int n = n0 + NV(tn, j) * VWN + v;
#pragma unroll
      for (int i = 0; i < MVI; ++i) {
        const int m = m0 + MV(tm, i) * VWM;
        store_vector(a * acc[ni][i], b, cgm + n * ldc + m, m, n, M, N, full_mn);
      }
    }
  }
}
