// Test only: a wrong output store for xgemm and xgemm_direct, to show that verification catches
// wrong kernels (tests/src/eval/test_xgemm.cpp). The test copies the templates folder, renames the
// shipped gemm_tile_store.cl to gemm_tile_store_exact.cl and puts this file in its place; the
// TEST_PERTURB parameter it adds to the declarations picks the fault:
//   0: none, 1: the output at (0, 0) 1% off, 2: NaN at (0, 0),
//   3: reads C although beta == 0 (C holds NaN then, so the outputs become NaN).
#ifndef TEST_PERTURB
#define TEST_PERTURB 0
#endif

#define store_vector store_vector_exact
#include "gemm_tile_store_exact.cl"
#undef store_vector

inline void store_vector(realM r, const real b, __global mreal* cp, const int m, const int n,
                         const int M, const int N, const bool full_mn) {
#if TEST_PERTURB == 1
  if (m == 0 && n == 0) r = r * (real)1.01f;
#elif TEST_PERTURB == 2
  if (m == 0 && n == 0) r = (realM)(NAN);
#elif TEST_PERTURB == 3
  // 0 * NaN is NaN: what a kernel computes that adds b * C without checking b.
  if (b == ZERO && m < M && n < N) r += b * GT_LOAD(cp);
#endif
  store_vector_exact(r, b, cp, m, n, M, N, full_mn);
}
