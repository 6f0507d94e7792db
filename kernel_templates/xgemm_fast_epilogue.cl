// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 5: the epilogue. Each output becomes act(alpha * AB + beta * C + bias), written
// by the GEMM kernel itself or, with split-K, from the partial sums the GEMM kernel leaves in the
// workspace, by XgemmFastReduce (KREDUCE=0) or the tile's last work-group (KREDUCE=1). Needs
// xgemm_fast_layout.cl.

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

