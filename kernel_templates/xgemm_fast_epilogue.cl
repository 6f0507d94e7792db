// xgemm_fast, part 5: the epilogue. Each output becomes act(alpha * AB + beta * C + bias), written
// by the GEMM kernel itself or, with split-K, by XgemmFastReduce from the partial sums the GEMM
// kernel leaves in the workspace. Needs xgemm_fast_layout.cl.

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

// Writes element (gm, gn) of C given r = alpha * AB there: adds beta * C (not reading C when
// beta == 0, since C may hold NaN then) and the bias, and applies the activation.
inline void store_output(real r, const real beta, __global mreal* C, const int ldc,
                         const __global mreal* restrict bias, const int gm, const int gn) {
  if (beta != ZERO) r += beta * GT_LOAD(C + gm + gn * ldc);
#if BIAS == 1
  r += GT_LOAD(bias + gm);
#elif BIAS == 2
  r += GT_LOAD(bias + gn);
#endif
  GT_STORE(activate(r), C + gm + gn * ldc);
}

// Each thread writes its MWI x NWI outputs of the tile at (m0, n0), guarded at the edges: to C,
// or with split-K its partial sums to slice `split` of the workspace (M x N, column-major).
inline void store_results(accM acc[MWI / VWM][NWI], const int M, const int N, const int m0,
                          const int n0, const int tx, const int ty, const real alpha,
                          const real beta, __global mreal* C, const int ldc,
                          const __global mreal* restrict bias, __global real* restrict work,
                          const int split) {
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
#if SPLITK > 1
          work[(size_t)split * M * N + gm + (size_t)gn * M] = out[w];
#else
          store_output(alpha * out[w], beta, C, ldc, bias, gm, gn);
#endif
        }
      }
    }
  }
}
