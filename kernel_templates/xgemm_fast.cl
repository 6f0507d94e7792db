// xgemm_fast: a register-blocked GEMM for GPUs with large thread tiles, double-buffered local
// memory with register-staged prefetch, strided fragments, padding or XOR swizzle of local memory,
// grouped work-group rasterization, split-K and a fused bias/activation epilogue.
//
// Column-major view: C(M x N) = alpha * op(A) * op(B) + beta * C, op selected by TRANSA/TRANSB.
// Row-major problems arrive through the row-major swap on the host. Edges are guarded in the
// kernel, so any M, N, K runs without padding or copies.
//
// Every tunable below has a default; the host only adds -D defines.

#ifndef TRANSA
#define TRANSA 0  // 1: A is stored K x M (op(A) = A^T)
#endif
#ifndef TRANSB
#define TRANSB 0  // 1: B is stored N x K (op(B) = B^T)
#endif

#ifndef MWG
#define MWG 64  // work-group tile in M
#endif
#ifndef NWG
#define NWG 64  // work-group tile in N
#endif
#ifndef KWG
#define KWG 16  // K tile held in local memory per stage
#endif
#ifndef MDIMC
#define MDIMC 16  // threads along M
#endif
#ifndef NDIMC
#define NDIMC 16  // threads along N
#endif
#ifndef VWM
#define VWM 4  // vector width of the A fragment reads from local memory
#endif
#ifndef VWN
#define VWN 4  // vector width of the B fragment reads from local memory
#endif
#ifndef STRM
#define STRM 1  // 1: a thread's M fragment is VWM-wide chunks at stride MDIMC*VWM; 0: contiguous
#endif
#ifndef STRN
#define STRN 1  // same for N
#endif
#ifndef KWI
#define KWI 4  // unroll factor of the inner K loop
#endif
#ifndef LDS
#define LDS 1  // 1: stage tiles through local memory; 0: read fragments straight from global memory
#endif
#ifndef STAGES
#define STAGES 2  // local-memory buffers: 2 = double buffering, one barrier per K tile
#endif
#ifndef PREFETCH
#define PREFETCH 1  // 1: global loads of tile t+1 are issued before the FMAs of tile t
#endif
#ifndef PADA
#define PADA 0  // extra elements per local-memory row of A (bank-conflict avoidance)
#endif
#ifndef PADB
#define PADB 0  // same for B
#endif
#ifndef SWZ
#define SWZ 0  // 1: XOR-swizzle the vector chunks of each local-memory row by the row index
#endif
#ifndef GROUPM
#define GROUPM 1  // work-group rasterization: tiles visited in groups of GROUPM tile rows
#endif
#ifndef SPLITK
#define SPLITK 1  // K split across work-groups; partial sums reduced by XgemmFastReduce
#endif
#ifndef DOT2
#define DOT2 0  // 1: half pairs along K accumulated into float (dot2); half storage only
#endif
#ifndef REGCAP
#define REGCAP 0  // registers per work-item the host asked the compiler for (0: its choice)
#endif
#ifndef GLV
#define GLV 1  // elements per global load of the A and B tiles (1, 2 or 4)
#endif

// Problem-level options set by the host, not tuned.
#ifndef BIAS
#define BIAS 0  // 0: none, 1: bias[m] added per row of the view, 2: bias[n] per column
#endif
#ifndef ACTIVATION
#define ACTIVATION 0  // 0: none, 1: ReLU, 2: GELU (tanh form)
#endif

// Derived values.
#define MWI (MWG / MDIMC)       // outputs per thread in M
#define NWI (NWG / NDIMC)       // outputs per thread in N
#define THREADS (MDIMC * NDIMC)  // work-group size
#define A_LOADS ((MWG * KWG) / THREADS)  // elements of the A tile each thread loads
#define B_LOADS ((NWG * KWG) / THREADS)
#define A_SLOTS (A_LOADS / GLV)  // of them, GLV-wide vectors along A's contiguous dimension
#define B_SLOTS (B_LOADS / GLV)
#define ASTRIDE (MWG + PADA)  // local-memory row length of A (one row per k)
#define BSTRIDE (NWG + PADB)
#define MCHUNKS (MWG / VWM)
#define NCHUNKS (NWG / VWN)

// Element types for PRECISION (real: arithmetic, mreal: matrices in memory, which differ for
// 16acc32), converting loads and stores, and the batch arguments. Split-K shares dimension 2
// with the batch: SPLITK work-groups per batch entry.
#define GT_BATCH_GROUPS_Z SPLITK
#include "common.cl"

// Vector types of the fragment reads, and their unpacking into private arrays.
#if VWM == 1
typedef real realM;
#define STORE_M(v, p) (*(p) = (v))
#define LOAD_M(p) (*(p))
#elif VWM == 2
typedef real2 realM;
#define STORE_M(v, p) vstore2((v), 0, (p))
#define LOAD_M(p) vload2(0, (p))
#elif VWM == 4
typedef real4 realM;
#define STORE_M(v, p) vstore4((v), 0, (p))
#define LOAD_M(p) vload4(0, (p))
#elif VWM == 8
typedef real8 realM;
#define STORE_M(v, p) vstore8((v), 0, (p))
#define LOAD_M(p) vload8(0, (p))
#elif VWM == 16
typedef real16 realM;
#define STORE_M(v, p) vstore16((v), 0, (p))
#define LOAD_M(p) vload16(0, (p))
#endif
#if VWN == 1
typedef real realN;
#define STORE_N(v, p) (*(p) = (v))
#elif VWN == 2
typedef real2 realN;
#define STORE_N(v, p) vstore2((v), 0, (p))
#elif VWN == 4
typedef real4 realN;
#define STORE_N(v, p) vstore4((v), 0, (p))
#elif VWN == 8
typedef real8 realN;
#define STORE_N(v, p) vstore8((v), 0, (p))
#endif

#if DOT2
// DOT2: why. AMD GPUs from gfx906 on (and gfx1011/gfx1012) multiply two half pairs and add them
// to a float in one instruction (v_dot2_f32_f16); a compiler can use it only where the kernel
// itself presents the operands as half pairs along K. So the local tiles hold half with k and
// k+1 of each row/column interleaved (one 2*VW-wide half load yields VW pairs), and the inner
// loop adds a(k)*b(k) + a(k+1)*b(k+1) to float accumulators, for PRECISION 1632 and 16 alike.
// The tiles are zero-filled beyond K, so an odd K or a partial last tile pairs with zeros.
// Everything DOT2 adds sits under #if DOT2: with DOT2=0 the kernel is the one without it.
#if PRECISION != 16 && PRECISION != 1632
#error "DOT2 pairs half values: it needs half storage (PRECISION 16 or 1632)"
#endif
#if !LDS
#error "DOT2 forms its pairs in local memory: it needs LDS=1"
#endif
// 2*VWM and 2*VWN: the width of one pair-interleaved chunk (a vector load of at most 16 halves).
#if VWM == 1
#define D2_AW 2
#elif VWM == 2
#define D2_AW 4
#elif VWM == 4
#define D2_AW 8
#elif VWM == 8
#define D2_AW 16
#else
#error "DOT2 needs VWM <= 8"
#endif
#if VWN == 1
#define D2_BW 2
#elif VWN == 2
#define D2_BW 4
#elif VWN == 4
#define D2_BW 8
#elif VWN == 8
#define D2_BW 16
#else
#error "DOT2 needs VWN <= 8"
#endif
typedef GT_CAT(float, D2_AW) d2A;  // VWM pairs (k, k+1) of consecutive rows, in float
typedef GT_CAT(float, D2_BW) d2B;
#if VWM == 1
typedef float accM;  // float accumulators also for PRECISION 16
#else
typedef GT_CAT(float, VWM) accM;
#endif
#define ACC_STORE_M(v, p) GT_CAT(GT_VSTORE_, VWM)(v, p)
#if GT_HALF_MEMORY
#define D2_LOAD_A(p) GT_CAT(GT_MLOADA_, D2_AW)(p)
#define D2_LOAD_B(p) GT_CAT(GT_MLOADA_, D2_BW)(p)
#else
#define D2_LOAD_A(p) GT_CAT(convert_float, D2_AW)(*((__local const GT_CAT(half, D2_AW)*)(p)))
#define D2_LOAD_B(p) GT_CAT(convert_float, D2_BW)(*((__local const GT_CAT(half, D2_BW)*)(p)))
#endif
// Unroll of the pair loop: KWI/2 pairs (KWI values of k), at least 1.
#if KWI >= 2
#define D2_UNROLL_8 4
#define D2_UNROLL_4 2
#define D2_UNROLL_2 1
#define D2_UNROLL GT_CAT(D2_UNROLL_, KWI)
#else
#define D2_UNROLL 1
#endif
#endif

// Element access of the operands in global memory (column-major, leading dimensions lda/ldb):
// addresses, and values of the arithmetic type.
#if TRANSA
#define A_PTR(m, k) (A + (k) + (m) * lda)
#else
#define A_PTR(m, k) (A + (m) + (k) * lda)
#endif
#if TRANSB
#define B_PTR(k, n) (B + (n) + (k) * ldb)
#else
#define B_PTR(k, n) (B + (k) + (n) * ldb)
#endif
#define A_AT(m, k) GT_LOAD(A_PTR(m, k))
#define B_AT(k, n) GT_LOAD(B_PTR(k, n))
// Aligned vector reads of the local tiles (converted for 16acc32, whose tiles hold half).
#if GT_HALF_MEMORY
#define LLOAD_M(p) GT_CAT(GT_MLOADA_, VWM)(p)
#define LLOAD_N(p) GT_CAT(GT_MLOADA_, VWN)(p)
#else
#define LLOAD_M(p) (*((__local const realM*)(p)))
#define LLOAD_N(p) (*((__local const realN*)(p)))
#endif
// Unaligned vector reads of global memory for the path without local memory.
#define GLOAD_M(p) GT_CAT(GT_MLOAD_, VWM)(p)

// Position in local memory of element x of row k: chunks of VW elements, optionally XOR-swizzled
// by the row so that column-wise stores from K-contiguous loads spread over the banks.
#if SWZ
#define SWIZZLE(k, x, VW, CHUNKS) (((((x) / (VW)) ^ ((k) & ((CHUNKS)-1))) * (VW)) + ((x) % (VW)))
#else
#define SWIZZLE(k, x, VW, CHUNKS) (x)
#endif
#if DOT2
// Rows k and k+1 interleaved: the pair of element x sits at 2x, 2x+1 of double row k/2.
#define AS_INDEX(buf, k, m)                                                   \
  ((buf) * (KWG * ASTRIDE) + ((k) >> 1) * (2 * ASTRIDE) +                    \
   2 * SWIZZLE((k) >> 1, m, VWM, MCHUNKS) + ((k)&1))
#define BS_INDEX(buf, k, n)                                                   \
  ((buf) * (KWG * BSTRIDE) + ((k) >> 1) * (2 * BSTRIDE) +                    \
   2 * SWIZZLE((k) >> 1, n, VWN, NCHUNKS) + ((k)&1))
#else
#define AS_INDEX(buf, k, m) ((buf) * (KWG * ASTRIDE) + (k) * ASTRIDE + SWIZZLE(k, m, VWM, MCHUNKS))
#define BS_INDEX(buf, k, n) ((buf) * (KWG * BSTRIDE) + (k) * BSTRIDE + SWIZZLE(k, n, VWN, NCHUNKS))
#endif

// First element of the i-th VWM-wide chunk of this thread's M fragment.
#if STRM
#define M_CHUNK(tx, i) (((i) * MDIMC + (tx)) * VWM)
#else
#define M_CHUNK(tx, i) ((tx) * MWI + (i) * VWM)
#endif
#if STRN
#define N_CHUNK(ty, j) (((j) * NDIMC + (ty)) * VWN)
#else
#define N_CHUNK(ty, j) ((ty) * NWI + (j) * VWN)
#endif

inline real activate(real x) {
#if ACTIVATION == 1
  return fmax(x, ZERO);
#elif ACTIVATION == 2
  const real c = (real)0.7978845608028654;  // sqrt(2/pi)
  return (real)0.5 * x * ((real)1 + tanh(c * (x + (real)0.044715 * x * x * x)));
#else
  return x;
#endif
}

// Global memory -> registers for one K tile. Consecutive threads read consecutive addresses of
// the operand's contiguous dimension, so the loads coalesce for every layout. Each thread loads
// GLV-wide slots: slot l covers elements l*GLV .. l*GLV+GLV-1 of `ra` (`rb`), consecutive along
// the operand's contiguous dimension. A slot inside the matrix whose address is a multiple of the
// vector (`a_vec`, `b_vec`: leading dimension and offset multiples of GLV) is one wide load;
// every other slot loads its elements one by one, guarded. With GLV 1 every slot is one element.
#if GLV > 1
#define GLOAD_SLOT(p) GT_CAT(GT_MLOADA_, GLV)(p)
#define STORE_SLOT(v, p) GT_CAT(GT_VSTORE_, GLV)((v), (p))
typedef GT_CAT(real, GLV) realG;
#endif
inline void load_tile(const __global mreal* restrict A, const int lda,
                      const __global mreal* restrict B, const int ldb, const int M, const int N,
                      const int kend, const int m0, const int n0, const int k0, const int tid,
                      const int a_vec, const int b_vec, real ra[A_LOADS], real rb[B_LOADS]) {
#pragma unroll
  for (int l = 0; l < A_SLOTS; ++l) {
    const int e = (tid + l * THREADS) * GLV;
#if TRANSA
    const int k = e % KWG, m = e / KWG;  // the slot runs along k
    const int gm = m0 + m, gk = k0 + k;
#if GLV > 1
    if (a_vec && gm < M && gk + GLV <= kend) {
      STORE_SLOT((realG)GLOAD_SLOT(A_PTR(gm, gk)), ra + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      ra[l * GLV + w] = (gm < M && gk + w < kend) ? A_AT(gm, gk + w) : ZERO;
    }
#else
    const int m = e % MWG, k = e / MWG;  // the slot runs along m
    const int gm = m0 + m, gk = k0 + k;
#if GLV > 1
    if (a_vec && gm + GLV <= M && gk < kend) {
      STORE_SLOT((realG)GLOAD_SLOT(A_PTR(gm, gk)), ra + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      ra[l * GLV + w] = (gm + w < M && gk < kend) ? A_AT(gm + w, gk) : ZERO;
    }
#endif
  }
#pragma unroll
  for (int l = 0; l < B_SLOTS; ++l) {
    const int e = (tid + l * THREADS) * GLV;
#if TRANSB
    const int n = e % NWG, k = e / NWG;  // the slot runs along n
    const int gn = n0 + n, gk = k0 + k;
#if GLV > 1
    if (b_vec && gn + GLV <= N && gk < kend) {
      STORE_SLOT((realG)GLOAD_SLOT(B_PTR(gk, gn)), rb + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      rb[l * GLV + w] = (gn + w < N && gk < kend) ? B_AT(gk, gn + w) : ZERO;
    }
#else
    const int k = e % KWG, n = e / KWG;  // the slot runs along k
    const int gn = n0 + n, gk = k0 + k;
#if GLV > 1
    if (b_vec && gn < N && gk + GLV <= kend) {
      STORE_SLOT((realG)GLOAD_SLOT(B_PTR(gk, gn)), rb + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      rb[l * GLV + w] = (gn < N && gk + w < kend) ? B_AT(gk + w, gn) : ZERO;
    }
#endif
  }
}

// Registers -> local memory, element by element in the slots' order (so that padding, swizzle
// and the DOT2 pairing apply to each element).
inline void store_tile(__local mreal* As, __local mreal* Bs, const int buf, const int tid,
                       const real ra[A_LOADS], const real rb[B_LOADS]) {
#pragma unroll
  for (int l = 0; l < A_SLOTS; ++l) {
    const int e = (tid + l * THREADS) * GLV;
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
#if TRANSA
      GT_STORE(ra[l * GLV + w], As + AS_INDEX(buf, e % KWG + w, e / KWG));
#else
      GT_STORE(ra[l * GLV + w], As + AS_INDEX(buf, e / MWG, e % MWG + w));
#endif
    }
  }
#pragma unroll
  for (int l = 0; l < B_SLOTS; ++l) {
    const int e = (tid + l * THREADS) * GLV;
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
#if TRANSB
      GT_STORE(rb[l * GLV + w], Bs + BS_INDEX(buf, e / NWG, e % NWG + w));
#else
      GT_STORE(rb[l * GLV + w], Bs + BS_INDEX(buf, e % KWG + w, e / KWG));
#endif
    }
  }
}

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
  const int tid = ty * MDIMC + tx;

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
  const int kbegin = 0;
  const int kend = K;
#endif
  const int tiles = kend > kbegin ? (kend - kbegin + KWG - 1) / KWG : 0;

  // Accumulators are VWM-wide vectors along M: explicit vector math for CPUs, and the same
  // scalar FMAs on GPUs.
#if DOT2
  accM acc[MWI / VWM][NWI];
#pragma unroll
  for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
    for (int j = 0; j < NWI; ++j) acc[i][j] = (accM)(0.0f);
  }
#else
  realM acc[MWI / VWM][NWI];
#pragma unroll
  for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
    for (int j = 0; j < NWI; ++j) acc[i][j] = (realM)(ZERO);
  }
#endif

#if LDS
  real ra[A_LOADS], rb[B_LOADS];
#define LOAD_TILE(k0) \
  load_tile(A, lda, B, ldb, M, N, kend, m0, n0, (k0), tid, a_vec, b_vec, ra, rb)
  if (tiles > 0) {
    LOAD_TILE(kbegin);
    store_tile(As, Bs, 0, tid, ra, rb);
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int t = 0; t < tiles; ++t) {
    const int cur = (STAGES == 2) ? (t & 1) : 0;
    const int more = t + 1 < tiles;
#if PREFETCH
    if (more) LOAD_TILE(kbegin + (t + 1) * KWG);
#endif

#if DOT2
#pragma unroll D2_UNROLL
    for (int k = 0; k < KWG; k += 2) {
      accM a0[MWI / VWM], a1[MWI / VWM];  // A at k and k+1, VWM rows each
      float b[2 * NWI];                   // B pairs: b[2j] at k, b[2j+1] at k+1, column j
#pragma unroll
      for (int i = 0; i < MWI / VWM; ++i) {
        const d2A v = D2_LOAD_A(As + AS_INDEX(cur, k, M_CHUNK(tx, i)));
        a0[i] = v.even;
        a1[i] = v.odd;
      }
#pragma unroll
      for (int j = 0; j < NWI / VWN; ++j) {
        const d2B v = D2_LOAD_B(Bs + BS_INDEX(cur, k, N_CHUNK(ty, j)));
        GT_CAT(GT_VSTORE_, D2_BW)(v, b + 2 * j * VWN);
      }
#pragma unroll
      for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
        for (int j = 0; j < NWI; ++j) acc[i][j] += a0[i] * b[2 * j] + a1[i] * b[2 * j + 1];
      }
    }
#else
#pragma unroll KWI
    for (int k = 0; k < KWG; ++k) {
      realM a[MWI / VWM];
      real b[NWI];
#pragma unroll
      for (int i = 0; i < MWI / VWM; ++i) {
        a[i] = LLOAD_M(As + AS_INDEX(cur, k, M_CHUNK(tx, i)));
      }
#pragma unroll
      for (int j = 0; j < NWI / VWN; ++j) {
        const realN v = LLOAD_N(Bs + BS_INDEX(cur, k, N_CHUNK(ty, j)));
        STORE_N(v, b + j * VWN);
      }
#pragma unroll
      for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
        for (int j = 0; j < NWI; ++j) acc[i][j] += a[i] * b[j];
      }
    }
#endif

#if STAGES == 2
    // The other buffer was last read before the previous barrier: refill it without waiting.
#if !PREFETCH
    if (more) LOAD_TILE(kbegin + (t + 1) * KWG);
#endif
    if (more) store_tile(As, Bs, cur ^ 1, tid, ra, rb);
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    barrier(CLK_LOCAL_MEM_FENCE);
#if !PREFETCH
    if (more) LOAD_TILE(kbegin + (t + 1) * KWG);
#endif
    if (more) store_tile(As, Bs, 0, tid, ra, rb);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }

#else
  // Without local memory there are no barriers: each thread streams its fragments from global
  // memory (through the caches). Out-of-range rows and columns are clamped to the last valid
  // one; their results are discarded by the guarded store, so the inner loop needs no branches.
  int cols[NWI];
#pragma unroll
  for (int j = 0; j < NWI; ++j) cols[j] = min(n0 + N_CHUNK(ty, j / VWN) + j % VWN, N - 1);
  int rows[MWI / VWM];  // first row of each chunk
  bool whole[MWI / VWM];  // chunk entirely inside M: one vector load
#pragma unroll
  for (int i = 0; i < MWI / VWM; ++i) {
    rows[i] = m0 + M_CHUNK(tx, i);
    whole[i] = !TRANSA && rows[i] + VWM <= M;
  }
#pragma unroll KWI
  for (int k = kbegin; k < kend; ++k) {
    realM a[MWI / VWM];
    real b[NWI];
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
      if (whole[i]) {
        a[i] = GLOAD_M(A_PTR(rows[i], k));
      } else {
        real t[VWM];
#pragma unroll
        for (int w = 0; w < VWM; ++w) t[w] = A_AT(min(rows[i] + w, M - 1), k);
        a[i] = LOAD_M(t);
      }
    }
#pragma unroll
    for (int j = 0; j < NWI; ++j) b[j] = B_AT(k, cols[j]);
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
      for (int j = 0; j < NWI; ++j) acc[i][j] += a[i] * b[j];
    }
  }
#endif

  // Epilogue: each thread writes its MWI x NWI outputs (guarded at the edges).
#pragma unroll
  for (int j = 0; j < NWI; ++j) {
    const int gn = n0 + N_CHUNK(ty, j / VWN) + j % VWN;
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
#if DOT2
      float out[VWM];  // converted to real (half for PRECISION 16) by the uses below
      ACC_STORE_M(acc[i][j], out);
#else
      real out[VWM];
      STORE_M(acc[i][j], out);
#endif
#pragma unroll
      for (int w = 0; w < VWM; ++w) {
        const int gm = m0 + M_CHUNK(tx, i) + w;
        if (gm < M && gn < N) {
#if SPLITK > 1
          work[(size_t)split * M * N + gm + (size_t)gn * M] = out[w];
#else
          real r = alpha * out[w];
          if (beta != ZERO) r += beta * GT_LOAD(C + gm + gn * ldc);
#if BIAS == 1
          r += GT_LOAD(bias + gm);
#elif BIAS == 2
          r += GT_LOAD(bias + gn);
#endif
          GT_STORE(activate(r), C + gm + gn * ldc);
#endif
        }
      }
    }
  }
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
  real r = alpha * sum;
  if (beta != ZERO) r += beta * GT_LOAD(C + gm + gn * ldc);
#if BIAS == 1
  r += GT_LOAD(bias + gm);
#elif BIAS == 2
  r += GT_LOAD(bias + gn);
#endif
  GT_STORE(activate(r), C + gm + gn * ldc);
}
