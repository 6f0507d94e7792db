// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 3b: the multistage copies (ASYNC=1). With ASYNC the A and B tiles go from
// global memory straight into one of STAGES local buffers, STAGES-1 tiles ahead of the one being
// multiplied, so that a tile's loads have STAGES-1 tiles of FMAs to arrive in (the main loop in
// xgemm_fast.cl says when each copy is issued and waited for). Everything here sits under
// #if ASYNC: with ASYNC=0 the kernel is the one without it. Needs xgemm_fast_layout.cl (and the
// form through registers, xgemm_fast_loads.cl).
//
// How a copy is done depends on the device, not on the configuration: where the host's device
// profile declares PTX cp.async (NVIDIA sm_80 and later: the host adds CP_ASYNC_PTX=1), a tile
// is copied by cp.async, which writes local memory without passing through registers and lets
// the work-item go on to its FMAs; elsewhere (AMD, PoCL, rusticl, half storage, whose 2-byte
// elements cp.async cannot copy one by one) load_tile and store_tile move it through registers
// with the same stages, so that every device runs and verifies the multistage indexing.

#if ASYNC
#if !LDS
#error "ASYNC copies tiles into local memory: it needs LDS=1"
#endif
#if STAGES < 2
#error "ASYNC needs STAGES >= 2: a buffer to fill while another is read"
#endif
#if PREFETCH > 1
#error "ASYNC's copies run STAGES-1 tiles ahead: PREFETCH is 0 or 1 with it"
#endif

#if CP_ASYNC_PTX && (PRECISION == 32 || PRECISION == 64)
#define GT_CP_ASYNC 1
#else
#define GT_CP_ASYNC 0
#endif

#if GT_CP_ASYNC
#if PRECISION == 32
#define CP_ELEM_BYTES 4
#else
#define CP_ELEM_BYTES 8
#endif
// One copy of a GLV-wide slot moves at most 16 bytes (cp.async's largest size): a chunk of
// CP_CHUNK_ELEMS elements, CP_CHUNKS of them per slot (two for a slot of 4 doubles).
#if GLV * CP_ELEM_BYTES >= 16
#define CP_CHUNK_BYTES 16
#elif GLV * CP_ELEM_BYTES == 8
#define CP_CHUNK_BYTES 8
#else
#define CP_CHUNK_BYTES 4
#endif
#define CP_CHUNK_ELEMS (CP_CHUNK_BYTES / CP_ELEM_BYTES)
#define CP_CHUNKS (GLV / CP_CHUNK_ELEMS)

// The copies, `bytes` of `size` read from src and the rest zero-filled (the edges: 0 reads
// nothing). The destination is the __local pointer itself as a 64-bit operand: NVIDIA's compiler
// holds a __local pointer as an address of the shared window, which is what cp.async's .shared
// operand is (no cvta: that converts a generic address, which this is not); this form built and
// ran correctly on an H200. 16 bytes go as .cg (L2 only, as CUTLASS copies tiles), 4 and 8 as .ca
// (.cg takes 16 only).
#define CP_ASYNC_4(dst, src, bytes)                                                       \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"l"(dst), "l"(src), \
               "r"(bytes)                                                                 \
               : "memory")
#define CP_ASYNC_8(dst, src, bytes)                                                       \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"l"(dst), "l"(src), \
               "r"(bytes)                                                                 \
               : "memory")
#define CP_ASYNC_16(dst, src, bytes)                                                       \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"l"(dst), "l"(src), \
               "r"(bytes)                                                                  \
               : "memory")
#define CP_ELEM(dst, src, bytes) GT_CAT(CP_ASYNC_, CP_ELEM_BYTES)(dst, src, bytes)
#define CP_CHUNK(dst, src, bytes) GT_CAT(CP_ASYNC_, CP_CHUNK_BYTES)(dst, src, bytes)
// One group per K tile; waiting until at most STAGES-2 groups are in flight leaves the tile
// issued STAGES-1 groups ago landed (wait_group takes a constant).
#define ASYNC_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#if STAGES == 2
#define ASYNC_WAIT() asm volatile("cp.async.wait_group 0;" ::: "memory")
#elif STAGES == 3
#define ASYNC_WAIT() asm volatile("cp.async.wait_group 1;" ::: "memory")
#elif STAGES == 4
#define ASYNC_WAIT() asm volatile("cp.async.wait_group 2;" ::: "memory")
#else
#error "ASYNC takes STAGES 2, 3 or 4"
#endif

// A chunk may be one copy only where its elements lie side by side in the local tile and its
// address there is a multiple of its size: the operand's contiguous dimension is the tile row's
// (A not transposed, B transposed), a swizzled chunk of VW elements holds it whole, and the row
// length keeps every row aligned. Otherwise each element is a copy of its own (a transposing
// copy: consecutive work-items still read consecutive addresses).
#define A_WIDE_COPY \
  (!TRANSA && !DOT2 && (!SWZ || CP_CHUNK_ELEMS <= VWM) && ASTRIDE % CP_CHUNK_ELEMS == 0)
#define B_WIDE_COPY \
  (TRANSB && !BKM && !DOT2 && (!SWZ || CP_CHUNK_ELEMS <= VWN) && BSTRIDE % CP_CHUNK_ELEMS == 0)
// The K-major B tile (BKM) lies as B does in global memory: its slots along k copy whole.
#define B_WIDE_COPY_K (BKM && !TRANSB && BKSTRIDE % CP_CHUNK_ELEMS == 0)

// Issues the copies of one K tile (from k0, guarded at M, N and kend) into buffer `buf`: the
// elements load_tile would load, each into the place store_tile would store it. A copy outside
// the matrix reads nothing (from the operand's first element) and writes zeros.
inline void copy_tile(const __global mreal* restrict A, const int lda,
                      const __global mreal* restrict B, const int ldb, const int M, const int N,
                      const int kend, const int m0, const int n0, const int k0, const int tid,
                      const int a_vec, const int b_vec, __local mreal* As, __local mreal* Bs,
                      const int buf) {
#pragma unroll
  for (int l = 0; l < A_SLOTS; ++l) {
    if (A_PART && tid + l * LOADERS >= A_PIECES) continue;
    const int e = (tid + l * LOADERS) * GLV;
#if TRANSA
    const int k = e % KWG, m = e / KWG;  // the slot runs along k
    const int gm = m0 + m, gk = k0 + k;
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      const int in = gm < M && gk + w < kend;
      CP_ELEM(As + AS_INDEX(buf, k + w, m), in ? A_PTR(gm, gk + w) : A, in ? CP_ELEM_BYTES : 0);
    }
#else
    const int m = e % MWG, k = e / MWG;  // the slot runs along m
    const int gm = m0 + m, gk = k0 + k;
#if A_WIDE_COPY
    if (a_vec == VEC_FULL) {
#pragma unroll
      for (int c = 0; c < CP_CHUNKS; ++c) {
        const int x = gm + c * CP_CHUNK_ELEMS;
        const int cnt = gk < kend ? clamp(M - x, 0, CP_CHUNK_ELEMS) : 0;  // elements inside
        CP_CHUNK(As + AS_INDEX(buf, k, m + c * CP_CHUNK_ELEMS), cnt > 0 ? A_PTR(x, gk) : A,
                 cnt * CP_ELEM_BYTES);
      }
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      const int in = gm + w < M && gk < kend;
      CP_ELEM(As + AS_INDEX(buf, k, m + w), in ? A_PTR(gm + w, gk) : A, in ? CP_ELEM_BYTES : 0);
    }
#endif
  }
#pragma unroll
  for (int l = 0; l < B_SLOTS; ++l) {
    if (B_PART && tid + l * LOADERS >= B_PIECES) continue;
    const int e = (tid + l * LOADERS) * GLV;
#if TRANSB
    const int n = e % NWG, k = e / NWG;  // the slot runs along n
    const int gn = n0 + n, gk = k0 + k;
#if B_WIDE_COPY
    if (b_vec == VEC_FULL) {
#pragma unroll
      for (int c = 0; c < CP_CHUNKS; ++c) {
        const int x = gn + c * CP_CHUNK_ELEMS;
        const int cnt = gk < kend ? clamp(N - x, 0, CP_CHUNK_ELEMS) : 0;  // elements inside
        CP_CHUNK(Bs + BS_INDEX(buf, k, n + c * CP_CHUNK_ELEMS), cnt > 0 ? B_PTR(gk, x) : B,
                 cnt * CP_ELEM_BYTES);
      }
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      const int in = gn + w < N && gk < kend;
      CP_ELEM(Bs + BS_INDEX(buf, k, n + w), in ? B_PTR(gk, gn + w) : B, in ? CP_ELEM_BYTES : 0);
    }
#else
    const int k = e % KWG, n = e / KWG;  // the slot runs along k
    const int gn = n0 + n, gk = k0 + k;
#if B_WIDE_COPY_K
    if (b_vec == VEC_FULL) {
#pragma unroll
      for (int c = 0; c < CP_CHUNKS; ++c) {
        const int x = gk + c * CP_CHUNK_ELEMS;
        const int cnt = gn < N ? clamp(kend - x, 0, CP_CHUNK_ELEMS) : 0;  // elements inside
        CP_CHUNK(Bs + BS_INDEX(buf, k + c * CP_CHUNK_ELEMS, n), cnt > 0 ? B_PTR(x, gn) : B,
                 cnt * CP_ELEM_BYTES);
      }
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      const int in = gn < N && gk + w < kend;
      CP_ELEM(Bs + BS_INDEX(buf, k + w, n), in ? B_PTR(gk + w, gn) : B, in ? CP_ELEM_BYTES : 0);
    }
#endif
  }
}
#else
// Without cp.async there is nothing to commit or wait for: the barrier that follows the stores
// of a tile makes it visible.
#define ASYNC_COMMIT() ((void)0)
#define ASYNC_WAIT() ((void)0)
#endif
#endif
