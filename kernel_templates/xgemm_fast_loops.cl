// xgemm_fast, part 4: the main loop over K, in its variants. With local memory (LDS=1)
// loop_local stages each K tile through STAGES local buffers and multiplies it with
// multiply_tile: plain FMAs of the arithmetic type, or with DOT2 half pairs along K accumulated
// into float. Without local memory (LDS=0) loop_global streams each thread's fragments straight
// from global memory. All of them add into the accumulators `acc` of one thread.
// Needs xgemm_fast_loads.cl.

#if LDS
#if DOT2
// One K tile of local buffer `cur`, two values of k at a time: a(k)*b(k) + a(k+1)*b(k+1) per
// output, the operand form of AMD's v_dot2_f32_f16 (see xgemm_fast_layout.cl).
inline void multiply_tile(const __local mreal* As, const __local mreal* Bs, const int cur,
                          const int tx, const int ty, accM acc[MWI / VWM][NWI]) {
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
}
#else
// One K tile of local buffer `cur`: per k, the thread's A fragment (MWI/VWM vectors) times its B
// fragment (NWI values), an outer product of FMAs.
inline void multiply_tile(const __local mreal* As, const __local mreal* Bs, const int cur,
                          const int tx, const int ty, accM acc[MWI / VWM][NWI]) {
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
}
#endif

// The local-memory main loop over the K tiles kbegin .. kend of the work-group tile at (m0, n0).
// The global loads of tile t+1 go to registers before (PREFETCH) or after the FMAs of tile t;
// with two buffers (STAGES 2) they are stored into the buffer not being read, so one barrier per
// tile suffices; with one buffer every refill waits for all threads to finish reading it.
// Every thread of the work-group calls this (it holds barriers).
inline void loop_local(const __global mreal* restrict A, const int lda,
                       const __global mreal* restrict B, const int ldb, const int M, const int N,
                       const int kbegin, const int kend, const int m0, const int n0, const int tx,
                       const int ty, const int a_vec, const int b_vec, __local mreal* As,
                       __local mreal* Bs, accM acc[MWI / VWM][NWI]) {
  const int tid = ty * MDIMC + tx;
  const int tiles = kend > kbegin ? (kend - kbegin + KWG - 1) / KWG : 0;
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
    multiply_tile(As, Bs, cur, tx, ty, acc);
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
#undef LOAD_TILE
}

#else
// Without local memory there are no barriers: each thread streams its fragments from global
// memory (through the caches). Out-of-range rows and columns are clamped to the last valid one;
// their results are discarded by the guarded store, so the inner loop needs no branches.
inline void loop_global(const __global mreal* restrict A, const int lda,
                        const __global mreal* restrict B, const int ldb, const int M, const int N,
                        const int kbegin, const int kend, const int m0, const int n0, const int tx,
                        const int ty, accM acc[MWI / VWM][NWI]) {
  int cols[NWI];
#pragma unroll
  for (int j = 0; j < NWI; ++j) cols[j] = min(n0 + N_CHUNK(ty, j / VWN) + j % VWN, N - 1);
  int rows[MWI / VWM];    // first row of each chunk
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
}
#endif
