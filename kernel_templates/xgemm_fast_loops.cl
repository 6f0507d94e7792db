// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 4: the variants of the main loop over K that are functions. With local memory
// (LDS=1) the kernel's own loop stages the K tiles and, with DOT2, multiplies each with
// multiply_tile: half pairs along K accumulated into float. Without local memory (LDS=0)
// loop_global streams each thread's fragments straight from global memory. Both add into the
// accumulators `acc` of one thread. Needs xgemm_fast_loads.cl.

#if LDS
#if DOT2
// One K tile of local buffer `cur`, two values of k at a time: a(k)*b(k) + a(k+1)*b(k+1) per
// output, the operand form of AMD's v_dot2_f32_f16 (see xgemm_fast_layout.cl).
inline void multiply_tile(const __local mreal* As, const __local mreal* Bs, const int cur,
                          const int tx, const int ty, accM acc[MWI / VWM][NWI]) {
#pragma unroll D2_UNROLL
  for (int k = 0; k < KWG; k += 2) {
#if D2_FDOT2
    // The pairs as they lie in the tiles: row (i, w) of A at ha[2 * (i * VWM + w)], column j of
    // B at hb[2 * j]; each output adds one dot2 of them, lane by lane of its accumulator.
    half ha[2 * MWI], hb[2 * NWI];
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
      GT_CAT(GT_VSTORE_, D2_AW)
      (*((__local const GT_CAT(half, D2_AW)*)(As + AS_INDEX(cur, k, M_CHUNK(tx, i)))),
       ha + 2 * i * VWM);
    }
#pragma unroll
    for (int j = 0; j < NWI / VWN; ++j) {
      GT_CAT(GT_VSTORE_, D2_BW)
      (*((__local const GT_CAT(half, D2_BW)*)(Bs + BS_INDEX(cur, k, N_CHUNK(ty, j)))),
       hb + 2 * j * VWN);
    }
#pragma unroll
    for (int i = 0; i < MWI / VWM; ++i) {
#pragma unroll
      for (int j = 0; j < NWI; ++j) {
        float lanes[VWM];
        ACC_STORE_M(acc[i][j], lanes);
#pragma unroll
        for (int w = 0; w < VWM; ++w) {
          lanes[w] =
              __builtin_amdgcn_fdot2(vload2(i * VWM + w, ha), vload2(j, hb), lanes[w], false);
        }
        acc[i][j] = GT_CAT(GT_VLOAD_, VWM)(lanes);
      }
    }
#else
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
#endif
  }
}
#endif

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
