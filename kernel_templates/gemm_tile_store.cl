// SPDX-License-Identifier: Apache-2.0
// The output store of gemm_tile.cl: one function that every output vector goes through, in a file
// of its own so that a copy of the templates folder can wrap it (the verification tests do, to
// build deliberately wrong kernels) without any hook in the shipped source. Included by
// gemm_tile.cl after its vector macros.

// Writes the VWM-wide vector r (alpha times the products) at cp, element (m, n) of the
// column-major view of C, as r + b * C. b == 0 must not read C, which may hold NaN. A tile inside
// the matrix (full_mn) stores whole vectors; an edge tile stores only the elements inside.
inline void store_vector(realM r, const real b, __global mreal* cp, const int m, const int n,
                         const int M, const int N, const bool full_mn) {
  if (full_mn) {
    if (b != ZERO) r += b * GLOAD_M(cp);
    GSTORE_M(r, cp);
  } else if (n < N) {
    real out[VWM];
    VSTORE_M(r, out);
#pragma unroll
    for (int u = 0; u < VWM; ++u) {
      if (m + u < M) GT_STORE(b != ZERO ? out[u] + b * GT_LOAD(cp + u) : out[u], cp + u);
    }
  }
}
