// SPDX-License-Identifier: Apache-2.0
// xgemm_fast: a register-blocked GEMM for GPUs with large thread tiles, double-buffered local
// memory with register-staged prefetch or producer rows, strided fragments, padding or XOR
// swizzle of local memory, grouped work-group rasterization, split-K (its parts added by a second
// kernel or by the last work-group of each tile; of every tile, or of the last round's tiles only)
// and a fused bias/activation epilogue.
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
//   xgemm_fast_async.cl     global memory -> local memory, STAGES buffers deep (ASYNC=1)
//   xgemm_fast_ws.cl        producer rows that alone load the tiles into STAGES buffers (WSP)
//   xgemm_fast_loops.cl     the DOT2 multiply of a local tile, and the loop without local memory
//   xgemm_fast_epilogue.cl  alpha, beta, bias and activation of one output
//   splitk_last.cl          the counter that finds a tile's last work-group (KREDUCE=1)
// and below, the GEMM kernel (its main loop through local memory and its stores written out) and
// the split-K reduction kernel (KREDUCE=0).

#include "xgemm_fast_params.cl"
// Split-K shares dimension 2 with the batch: SPLITK work-groups per batch entry. With TAIL the
// split tiles are work-groups of dimension 0 instead.
#if TAIL
#define GT_BATCH_GROUPS_Z 1
#else
#define GT_BATCH_GROUPS_Z SPLITK
#endif
#include "common.cl"
#include "xgemm_fast_layout.cl"
#include "xgemm_fast_loads.cl"
#include "xgemm_fast_async.cl"
#include "xgemm_fast_ws.cl"
#include "xgemm_fast_loops.cl"
#include "xgemm_fast_epilogue.cl"
#include "splitk_last.cl"

#if TAIL
#if SPLITK < 2 || !KREDUCE
#error "TAIL splits the last tiles along K and adds their parts in the kernel: SPLITK > 1, KREDUCE 1"
#endif
// Where part s of the tail tile being computed starts in the workspace (MWG x NWG, column-major).
#define TAIL_PART(s) ((size_t)((tile_linear - full_tiles) * SPLITK + (s)) * (MWG * NWG))
#endif

// With a required work-group size NVIDIA's compiler sizes registers by it and ignores a register
// cap (measured: 160 registers with and without -cl-nv-maxrregcount=128), so where the cap is a
// build option the attribute is declared only without a cap. AMD's compilers take the cap as a
// source attribute instead (REGCAP_ATTRIBUTE, set by the host) and keep the required size: without
// it they assume at most 256 work-items, and larger work-groups fail at launch.
#if REGCAP == 0
__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC * KSL + WSP, 1)))
#elif REGCAP_ATTRIBUTE
__kernel __attribute__((reqd_work_group_size(MDIMC, NDIMC * KSL + WSP, 1)))
__attribute__((amdgpu_num_vgpr(REGCAP)))
#else
__kernel
#endif
void XgemmFast(const int M, const int N, const int K, const real_arg alpha_arg,
               const real_arg beta_arg, const __global mreal* restrict A, const int a_offset,
               const int lda, const __global mreal* restrict B, const int b_offset,
               const int ldb, __global mreal* C, const int c_offset, const int ldc,
               const __global mreal* restrict bias, __global real* restrict work,
               __global int* restrict counters, const int groupm GT_BATCH_ARGS) {
#if LDS
  // Aligned for the vector reads; half tiles (16acc32) are declared as ushort, see common.cl.
#if SPLITK > 1 && KREDUCE
  // Split-K in one launch: the flag of the tile's last work-group (splitk_last.cl) shares A's
  // tiles, done with by the time it is set. A separate int would add 4 bytes to local memory,
  // which costs a work-group per compute unit where the tiles fill a fraction of it exactly (the
  // defaults' 16 KB of GCN's 64 KB).
#if GT_HALF_MEMORY
  __local union {
    ushort tiles[STAGES * KWG * ASTRIDE];
    int last;
  } As_shared __attribute__((aligned(64)));
  __local ushort Bs_bits[STAGES * B_TILE] __attribute__((aligned(64)));
  __local half* const As = (__local half*)As_shared.tiles;
  __local half* const Bs = (__local half*)Bs_bits;
#else
  __local union {
    real tiles[STAGES * KWG * ASTRIDE];
    int last;
  } As_shared __attribute__((aligned(64)));
  __local real Bs[STAGES * B_TILE] __attribute__((aligned(64)));
  __local real* const As = As_shared.tiles;
#endif
  __local int* const last_part = &As_shared.last;
#elif GT_HALF_MEMORY
  __local ushort As_bits[STAGES * KWG * ASTRIDE] __attribute__((aligned(64)));
  __local ushort Bs_bits[STAGES * B_TILE] __attribute__((aligned(64)));
  __local half* const As = (__local half*)As_bits;
  __local half* const Bs = (__local half*)Bs_bits;
#else
  __local real As[STAGES * KWG * ASTRIDE] __attribute__((aligned(64)));
  __local real Bs[STAGES * B_TILE] __attribute__((aligned(64)));
#endif
#elif SPLITK > 1 && KREDUCE
  // Without tiles in local memory, the flag of the tile's last work-group is all there is.
  __local int last_part_flag;
  __local int* const last_part = &last_part_flag;
#endif
#if KSL > 1
#if !LDS || DOT2 || KREDUCE
#error "KSL > 1 slices the K tiles of local memory (LDS=1, DOT2=0) and stores from slice 0 only (KREDUCE=0)"
#endif
  // The sums of slices 1 .. KSL-1, for slice 0 to add after the main loop (SLICE_SUM below),
  // consecutive work-items on consecutive banks.
  __local acc_real slice_sums[(KSL - 1) * MWI * NWI * SLICE_THREADS];
#endif
  const real alpha = (real)alpha_arg;
  const real beta = (real)beta_arg;
  // This work-group's batch entry (the only one without batching); its split-K partial sums
  // follow those of the entries before it in the workspace.
  const int a_shift = a_offset + GT_BATCH_A, b_shift = b_offset + GT_BATCH_B;
  A += a_shift;
  B += b_shift;
  // Wide global loads need vector-aligned addresses: buffers start aligned, so the leading
  // dimension and the offset decide (once, for the whole work-group; xgemm_fast_loads.cl).
  const int a_vec = vec_class(lda, a_shift);
  const int b_vec = vec_class(ldb, b_shift);
  C += c_offset + GT_BATCH_C;
#if TAIL
  // Tail split: dimension 0 holds every work-group. The first full_tiles take one tile each,
  // with all of K. The tail_tiles after them (the host sized the grid so that they are fewer
  // than TAIL x the compute units) are split SPLITK ways along K, the parts of a tile side by
  // side, dispatched last: they spread the last round over every unit. Their partial sums go
  // to the workspace, a tile's SPLITK parts together, and the tile's last part adds them.
  const int tiles_m = (M + MWG - 1) / MWG, tiles_n = (N + NWG - 1) / NWG;
  const int tiles_all = tiles_m * tiles_n;
  const int tail_tiles = ((int)get_num_groups(0) - tiles_all) / (SPLITK - 1);
  const int full_tiles = tiles_all - tail_tiles;
  const int group = get_group_id(0);
  const int in_tail = group >= full_tiles;
  const int tile_linear = in_tail ? full_tiles + (group - full_tiles) / SPLITK : group;
  work += (size_t)GT_BATCH_INDEX * SPLITK * tail_tiles * (MWG * NWG);
#elif SPLITK > 1
  work += (size_t)GT_BATCH_INDEX * SPLITK * M * N;
#endif

  // Dimension 1 holds the KSL slices of NDIMC work-items each: slice `ks` multiplies the k values
  // ks*KWS .. ks*KWS+KWS-1 of every K tile, for the same thread tile (tx, ty) as slice 0.
  const int tx = get_local_id(0);
#if KSL > 1
  const int ty = get_local_id(1) % NDIMC, ks = get_local_id(1) / NDIMC;
#else
  const int ty = get_local_id(1), ks = 0;
#endif

  // Tile coordinates, optionally rasterized in groups of GROUPM_ROWS tile rows for cache reuse.
  // GROUPM 1 is built in: no rasterization code at all (a branch on the argument made one H200
  // configuration 28% slower).
#if TAIL
  int tile_m = tile_linear % tiles_m, tile_n = tile_linear / tiles_m;
#else
  int tile_m = get_group_id(0), tile_n = get_group_id(1);
#endif
#if GROUPM_ROWS_ARGUED || GROUPM > 1
  if (GROUPM_ROWS > 1) {
#if TAIL
    const int linear = tile_linear;
#else
    const int tiles_m = get_num_groups(0), tiles_n = get_num_groups(1);
    const int linear = tile_n * tiles_m + tile_m;
#endif
    const int per_group = GROUPM_ROWS * tiles_n;
    const int first_m = (linear / per_group) * GROUPM_ROWS;
    const int rows = min(tiles_m - first_m, GROUPM_ROWS);
    const int in_group = linear % per_group;
    tile_m = first_m + in_group % rows;
    tile_n = in_group / rows;
  }
#endif
  const int m0 = tile_m * MWG, n0 = tile_n * NWG;

  // The K range of this work-group (all of K unless split).
#if SPLITK > 1
  // Part `split` of K: in every work-group, or with TAIL in the tail tiles' only.
#if TAIL
  const int parted = in_tail;
  const int split = in_tail ? (group - full_tiles) % SPLITK : 0;
#else
  const int parted = 1;
  const int split = get_group_id(2) % SPLITK;
#endif
  const int kchunk = ((K + SPLITK - 1) / SPLITK + KWG - 1) / KWG * KWG;
  const int kbegin = parted ? split * kchunk : 0;
  const int kend = parted ? min(K, kbegin + kchunk) : K;
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

  // The main loop and the stores are written out here rather than called: on the H100, passing
  // the accumulators through functions cost 3.5% at 2048^3 (45.6 against 47.2 TFLOPS, same
  // registers), although NVIDIA's compiler inlines every call.
#if LDS
  // Through local memory: each K tile of kbegin .. kend goes through STAGES local buffers. The
  // global loads of tile t+1 go to registers before (PREFETCH) or after the FMAs of tile t; with
  // two buffers (STAGES 2) they are stored into the buffer not being read, so one barrier per
  // tile suffices; with one buffer every refill waits for all threads to finish reading it.
  const int tid = get_local_id(1) * MDIMC + tx;  // all slices load the tiles
  const int tiles = kend > kbegin ? (kend - kbegin + KWG - 1) / KWG : 0;
#if WSP
  // Producer rows (xgemm_fast_ws.cl): rows NDIMC .. NDIMC+WSP-1 of the work-group load, the
  // others multiply tile t from buffer t % STAGES.
  const int producer = get_local_id(1) >= NDIMC;
  const int ptid = tid - THREADS;
#if WS_NAMED
  if (producer) {
    ws_produce(A, lda, B, ldb, M, N, kend, m0, n0, kbegin, tiles, ptid, a_vec, b_vec, As, Bs);
    return;
  }
#else
  real ra[A_LOADS], rb[B_LOADS];
#define WS_LOAD(t) \
  load_tile(A, lda, B, ldb, M, N, kend, m0, n0, kbegin + (t)*KWG, ptid, a_vec, b_vec, ra, rb)
  if (producer) {
    for (int s = 0; s < STAGES - 1 && s < tiles; ++s) {
      WS_LOAD(s);
      store_tile(As, Bs, s, ptid, ra, rb);
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  for (int t = 0; t < tiles; ++t) {
    const int cur = t % STAGES;
#if WS_NAMED
    ws_bar_sync(WS_FULL(cur));
#else
    if (producer) {
      if (t + STAGES - 1 < tiles) {
        WS_LOAD(t + STAGES - 1);
        store_tile(As, Bs, (t + STAGES - 1) % STAGES, ptid, ra, rb);
      }
    } else
#endif
#elif ASYNC
  // Multistage (xgemm_fast_async.cl): tile t is multiplied from buffer `cur` while the tiles up
  // to t+STAGES-1 are on their way. The prologue issues tiles 0 .. STAGES-2, one copy group each;
  // per tile, the wait leaves tile t landed and the barrier makes it everyone's and frees the
  // buffer of tile t-1, which tile t+STAGES-1 then fills (PREFETCH: before the FMAs, else
  // after). Every tile commits a group, empty past the last, so that the wait's count holds.
#if GT_CP_ASYNC
#define FETCH_TILE(t, buf)                                                                      \
  copy_tile(A, lda, B, ldb, M, N, kend, m0, n0, kbegin + (t)*KWG, tid, a_vec, b_vec, As, Bs, \
            (buf))
#define LAND_TILE(buf) ((void)0)
#else
  real ra[A_LOADS], rb[B_LOADS];
#define FETCH_TILE(t, buf) \
  load_tile(A, lda, B, ldb, M, N, kend, m0, n0, kbegin + (t)*KWG, tid, a_vec, b_vec, ra, rb)
#define LAND_TILE(buf) store_tile(As, Bs, (buf), tid, ra, rb)
#endif
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) {
      FETCH_TILE(s, s);
      LAND_TILE(s);
    }
    ASYNC_COMMIT();
  }
  int cur = 0, fill = STAGES - 1;  // the buffers of tiles t and t+STAGES-1

  for (int t = 0; t < tiles; ++t) {
    const int ahead = t + STAGES - 1 < tiles;
    ASYNC_WAIT();
    barrier(CLK_LOCAL_MEM_FENCE);
#if PREFETCH
    if (ahead) FETCH_TILE(t + STAGES - 1, fill);
    ASYNC_COMMIT();
#endif
#else
  real ra[A_LOADS], rb[B_LOADS];
#define LOAD_TILE(k0) \
  load_tile(A, lda, B, ldb, M, N, kend, m0, n0, (k0), tid, a_vec, b_vec, ra, rb)
#if PREFETCH == 2
  // Two tiles ahead: tile j's loads go to register set j % 2 (ra/rb, ra2/rb2), so that they have
  // the FMAs of two tiles to arrive in before store_tile waits for them. Each call names its set
  // outright (a uniform branch on the parity), which keeps both sets in registers.
  real ra2[A_LOADS], rb2[B_LOADS];
#define LOAD_INTO(k0, set)                                                             \
  do {                                                                                 \
    if (set)                                                                           \
      load_tile(A, lda, B, ldb, M, N, kend, m0, n0, (k0), tid, a_vec, b_vec, ra2, rb2); \
    else                                                                               \
      LOAD_TILE(k0);                                                                   \
  } while (0)
#define STORE_FROM(buf, set)                          \
  do {                                                \
    if (set)                                          \
      store_tile(As, Bs, (buf), tid, ra2, rb2);       \
    else                                              \
      store_tile(As, Bs, (buf), tid, ra, rb);         \
  } while (0)
#else
#define STORE_FROM(buf, set) store_tile(As, Bs, (buf), tid, ra, rb)
#endif
  if (tiles > 0) {
    LOAD_TILE(kbegin);
    store_tile(As, Bs, 0, tid, ra, rb);
  }
#if PREFETCH == 2
  if (tiles > 1) LOAD_INTO(kbegin + KWG, 1);
#endif
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int t = 0; t < tiles; ++t) {
    const int cur = (STAGES == 2) ? (t & 1) : 0;
    const int more = t + 1 < tiles;
#if PREFETCH == 2
    if (t + 2 < tiles) LOAD_INTO(kbegin + (t + 2) * KWG, t & 1);
#elif PREFETCH
    if (more) LOAD_TILE(kbegin + (t + 1) * KWG);
#endif
#endif
  {
#if DOT2
    multiply_tile(As, Bs, cur, tx, ty, acc);
#elif BKM
    // The K-major B tile: each of the thread's NWI columns gives BKV values of k in one read,
    // then per k the A fragment times those values, an outer product of FMAs as below.
#pragma unroll BK_UNROLL
    for (int kq = 0; kq < KWS; kq += BKV) {
      real bk[NWI * BKV];
#pragma unroll
      for (int j = 0; j < NWI / VWN; ++j) {
#pragma unroll
        for (int w = 0; w < VWN; ++w) {
          const realK v = LLOAD_K(Bs + BS_INDEX(cur, ks * KWS + kq, N_CHUNK(ty, j) + w));
          GT_CAT(GT_VSTORE_, BKV)(v, bk + (j * VWN + w) * BKV);
        }
      }
#pragma unroll
      for (int u = 0; u < BKV; ++u) {
        realM a[MWI / VWM];
#pragma unroll
        for (int i = 0; i < MWI / VWM; ++i) {
          a[i] = LLOAD_M(As + AS_INDEX(cur, ks * KWS + kq + u, M_CHUNK(tx, i)));
        }
#pragma unroll
        for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
          for (int j = 0; j < NWI; ++j) acc[i][j] += a[i] * bk[j * BKV + u];
        }
      }
    }
#else
    // Per k of the tile, the thread's A fragment (MWI/VWM vectors) times its B fragment (NWI
    // values): an outer product of FMAs.
#pragma unroll KWI
    for (int kk = 0; kk < KWS; ++kk) {
      const int k = ks * KWS + kk;
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
  }
#if WSP
#if WS_NAMED
    if (t + STAGES < tiles) ws_bar_arrive(WS_EMPTY(cur));
#else
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#if !WS_NAMED
#undef WS_LOAD
  if (producer) return;  // the consumers store the outputs
#endif
#elif ASYNC
#if !PREFETCH
    if (ahead) FETCH_TILE(t + STAGES - 1, fill);
    ASYNC_COMMIT();
#endif
    if (ahead) LAND_TILE(fill);
    cur = cur == STAGES - 1 ? 0 : cur + 1;
    fill = fill == STAGES - 1 ? 0 : fill + 1;
  }
#undef FETCH_TILE
#undef LAND_TILE
#else
#if STAGES == 2
    // The other buffer was last read before the previous barrier: refill it without waiting.
#if !PREFETCH
    if (more) LOAD_TILE(kbegin + (t + 1) * KWG);
#endif
    if (more) STORE_FROM(cur ^ 1, (t + 1) & 1);
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    barrier(CLK_LOCAL_MEM_FENCE);
#if !PREFETCH
    if (more) LOAD_TILE(kbegin + (t + 1) * KWG);
#endif
    if (more) STORE_FROM(0, (t + 1) & 1);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#undef LOAD_TILE
#undef LOAD_INTO
#undef STORE_FROM
#endif
#else
  loop_global(A, lda, B, ldb, M, N, kbegin, kend, m0, n0, tx, ty, acc);
#endif

#if KSL > 1
  // Slice 0 adds the other slices' sums to its own, in the order 1 .. KSL-1, and alone stores.
  // SLICE_SUM(s, q): output q of this thread tile in the sums of slice s (1 .. KSL-1).
  const int tile_thread = ty * MDIMC + tx;
#define SLICE_SUM(s, q) slice_sums[(((s)-1) * MWI * NWI + (q)) * SLICE_THREADS + tile_thread]
  if (ks > 0) {
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
      for (int j = 0; j < NWI; ++j) {
        acc_real lanes[VWM];
        ACC_STORE_M(acc[i][j], lanes);
#pragma unroll
        for (int w = 0; w < VWM; ++w) {
          const int q = (i * NWI + j) * VWM + w;
          SLICE_SUM(ks, q) = lanes[w];
        }
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (ks > 0) return;
#pragma unroll
  for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
    for (int j = 0; j < NWI; ++j) {
      acc_real lanes[VWM];
      ACC_STORE_M(acc[i][j], lanes);
#pragma unroll
      for (int w = 0; w < VWM; ++w) {
        const int q = (i * NWI + j) * VWM + w;
#pragma unroll
        for (int s = 1; s < KSL; ++s) lanes[w] += SLICE_SUM(s, q);
      }
      acc[i][j] = GT_CAT(GT_VLOAD_, VWM)(lanes);
    }
  }
#undef SLICE_SUM
#endif

  // Each thread writes its MWI x NWI outputs of the tile at (m0, n0), guarded at the edges: to C,
  // or with split-K its partial sums to slice `split` of the workspace (M x N, column-major).
#pragma unroll
  for (int j = 0; j < NWI; ++j) {
    const int gn = n0 + N_CHUNK(ty, j / VWN) + j % VWN;
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
      // DOT2 accumulates in float: converted to real (half for PRECISION 16) by the uses below.
      acc_real out[VWM];
      ACC_STORE_M(acc[i][j], out);
#pragma unroll
      for (int w = 0; w < VWM; ++w) {
        const int gm = m0 + M_CHUNK(tx, i) + w;
        if (gm < M && gn < N) {
#if TAIL
          if (in_tail)
            work[TAIL_PART(split) + (gm - m0) + (gn - n0) * MWG] = out[w];
          else
            store_output(alpha * out[w], beta, C, ldc, bias, gm, gn);
#elif SPLITK > 1
          work[(size_t)split * M * N + gm + (size_t)gn * M] = out[w];
#else
          store_output(alpha * out[w], beta, C, ldc, bias, gm, gn);
#endif
        }
      }
    }
  }

#if SPLITK > 1 && KREDUCE
  // One launch: the tile's last work-group adds the SPLITK parts of each of its outputs, each
  // work-item those it stored, in XgemmFastReduce's order. The counters of a batch entry follow
  // those of the entries before it, one per tile. A loop of REDUCE_UNROLL outputs at a time, not
  // unrolled whole like the stores above: all of them unrolled would keep their addresses live
  // from the stores (gfx1010 spills then), and other forms raised the registers of the whole
  // kernel (gfx803, LLVM 16: 63 to 76 VGPRs, a wave per SIMD less).
#if TAIL
  __global int* counter = counters + GT_BATCH_INDEX * tiles_all + tile_linear;
  if (in_tail && gt_last_part(counter, last_part, SPLITK)) {
#else
  const int tile_groups = get_num_groups(0) * get_num_groups(1);
  __global int* counter = counters + GT_BATCH_INDEX * tile_groups +
                          get_group_id(1) * get_num_groups(0) + get_group_id(0);
  if (gt_last_part(counter, last_part, SPLITK)) {
#endif
    GT_PARTS real* parts = work;
#pragma unroll REDUCE_UNROLL
    for (int q = 0; q < MWI * NWI; ++q) {
      // Output q of the work-item: w fastest, as the stores went.
      const int w = q % VWM, i = (q / VWM) % (MWI / VWM), j = q / MWI;
      const int gm = m0 + M_CHUNK(tx, i) + w, gn = n0 + N_CHUNK(ty, j / VWN) + j % VWN;
      if (gm < M && gn < N) {
        real sum = ZERO;
#if TAIL
        for (int s = 0; s < SPLITK; ++s) sum += parts[TAIL_PART(s) + (gm - m0) + (gn - n0) * MWG];
#else
        for (int s = 0; s < SPLITK; ++s) sum += parts[(size_t)s * M * N + gm + (size_t)gn * M];
#endif
        store_output(alpha * sum, beta, C, ldc, bias, gm, gn);
      }
    }
  }
#endif
}

// Split-K reduction (KREDUCE=0): sums the SPLITK partial products and applies alpha, beta and
// the epilogue.
// One work-item per element of C, M fastest so that reads and writes coalesce; the work-groups
// are 64 x 4 where M passes 32 (xgemm_fast.json: on an H200 that took 4% off the reduction and
// 2% off a split-K call against 16 x 16, results/h200/reduce-and-loads/).
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
  const size_t part = (size_t)M * N;  // one split's partial products
  const __global real* p = work + (size_t)GT_BATCH_INDEX * SPLITK * part + gm + (size_t)gn * M;
  real sum = ZERO;
#pragma unroll
  for (int s = 0; s < SPLITK; ++s) sum += p[s * part];
  store_output(alpha * sum, beta, C, ldc, bias, gm, gn);
}
