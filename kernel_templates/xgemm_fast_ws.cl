// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 3c: producer rows (WSP > 0). The work-group has MDIMC * WSP more work-items
// than thread tiles: these producers move the K tiles from global memory through registers into
// a ring of STAGES local buffers, while the MDIMC * NDIMC consumers only read local memory and
// multiply. The consumers' instruction stream then holds no global loads, no local stores and
// no wait for either; the producers keep two tiles of loads in flight in two register sets.
//
// Where the device profile declares PTX named barriers (PTX_NAMED_BARRIERS, NVIDIA) each buffer has
// two named barriers, with producers and consumers on opposite sides: "full" (the producers
// arrive once the tile is stored, the consumers wait before reading it) and "empty" (the
// consumers arrive once they have read it, the producers wait before refilling it). PTX's
// bar.arrive orders the arriving work-item's earlier memory accesses before the barrier's
// completion, so no other fence is needed. Barrier 0 is OpenCL's barrier(), left alone.
// Elsewhere the same ring runs in lockstep under barrier(): per tile, the producers fill the
// buffer STAGES-1 tiles ahead while the consumers multiply, so every device verifies the
// ring's indexing. Needs xgemm_fast_loads.cl.

#if WSP
#if !LDS || ASYNC || KSL > 1 || DOT2 || KREDUCE || STAGES < 2
#error "WSP needs local memory (LDS=1) in STAGES >= 2 buffers, without ASYNC, KSL, DOT2 or KREDUCE"
#endif
#define WS_NAMED PTX_NAMED_BARRIERS
#define WS_ALL (THREADS + LOADERS)  // the work-group: both sides meet at every named barrier
#define WS_FULL(buf) (1 + (buf))
#define WS_EMPTY(buf) (1 + STAGES + (buf))

#if WS_NAMED
inline void ws_bar_sync(const int id) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(WS_ALL) : "memory");
}
inline void ws_bar_arrive(const int id) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(WS_ALL) : "memory");
}

// Tile t from registers into its buffer, once the consumers have read that buffer's last tile.
inline void ws_fill(__local mreal* As, __local mreal* Bs, const int t, const int ptid,
                    const real ra[A_LOADS], const real rb[B_LOADS]) {
  const int buf = t % STAGES;
  if (t >= STAGES) ws_bar_sync(WS_EMPTY(buf));
  store_tile(As, Bs, buf, ptid, ra, rb);
  ws_bar_arrive(WS_FULL(buf));
}

// A producer's whole life: every K tile of kbegin .. kend, tile t+1's loads issued before tile
// t is stored (two register sets, the loop taking two tiles a turn so that each is named
// outright and stays in registers).
inline void ws_produce(const __global mreal* restrict A, const int lda,
                       const __global mreal* restrict B, const int ldb, const int M, const int N,
                       const int kend, const int m0, const int n0, const int kbegin,
                       const int tiles, const int ptid, const int a_vec, const int b_vec,
                       __local mreal* As, __local mreal* Bs) {
  real ra[A_LOADS], rb[B_LOADS], ra2[A_LOADS], rb2[B_LOADS];
#define WS_LOAD(t, a, b) \
  load_tile(A, lda, B, ldb, M, N, kend, m0, n0, kbegin + (t)*KWG, ptid, a_vec, b_vec, a, b)
  if (tiles > 0) WS_LOAD(0, ra, rb);
  for (int t = 0; t < tiles; t += 2) {
    if (t + 1 < tiles) WS_LOAD(t + 1, ra2, rb2);
    ws_fill(As, Bs, t, ptid, ra, rb);
    if (t + 1 < tiles) {
      if (t + 2 < tiles) WS_LOAD(t + 2, ra, rb);
      ws_fill(As, Bs, t + 1, ptid, ra2, rb2);
    }
  }
#undef WS_LOAD
}
#endif
#endif
