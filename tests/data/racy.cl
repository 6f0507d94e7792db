// A test-only GEMM kernel with a data race that leaves its result right (RACE=1): the work-items
// of a group write one local cell without a barrier, then read it. Only a race detector sees it.
// Column-major C = alpha * A * B + beta * C (no transposes), one work-item per element of C.
#ifndef RACE
#define RACE 0
#endif
#ifndef WG
#define WG 8
#endif

#define real float
#define real_arg float

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void racy_gemm(const int M, const int N, const int K, const real_arg alpha, const real_arg beta,
               const __global real* A, const int a_offset, const int lda,
               const __global real* B, const int b_offset, const int ldb,
               __global real* C, const int c_offset, const int ldc) {
  __local real cell[1];
  const int m = get_global_id(0);
  const int n = get_global_id(1);
  real acc = 0;
  if (m < M && n < N) {
    for (int k = 0; k < K; ++k) acc += A[a_offset + m + k * lda] * B[b_offset + k + n * ldb];
  }
#if RACE == 1
  cell[0] = acc;
  acc += 0 * cell[0];
#endif
  if (m >= M || n >= N) return;
  real result = alpha * acc;
  if (beta != 0) result += beta * C[c_offset + m + n * ldc];
  C[c_offset + m + n * ldc] = result;
}
