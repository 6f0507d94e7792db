// A test-only GEMM kernel that misbehaves on purpose, chosen by the FAULT parameter:
//   0 correct, 1 never ends (hang), 2 writes far outside its buffers (crash),
//   3 does not compile, 4 computes a wrong result, 5 fails to build the way a crashing compiler
//   does (the log line LLVM prints as it aborts; faulty_compiler.json).
// Column-major C = alpha * A * B + beta * C (no transposes), one work-item per element of C.
#ifndef FAULT
#define FAULT 0
#endif
#ifndef WG
#define WG 8
#endif

#define real float
#define real_arg float

#if FAULT == 3
#error "deliberate compile failure (FAULT=3)"
#elif FAULT == 5
#error "LLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.fdot2 (deliberate, FAULT=5)"
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void faulty_gemm(const int M, const int N, const int K, const real_arg alpha, const real_arg beta,
                 const __global real* A, const int a_offset, const int lda,
                 const __global real* B, const int b_offset, const int ldb,
                 __global real* C, const int c_offset, const int ldc) {
  const int m = get_global_id(0);
  const int n = get_global_id(1);
  if (m >= M || n >= N) return;
  real acc = 0;
  for (int k = 0; k < K; ++k) acc += A[a_offset + m + k * lda] * B[b_offset + k + n * ldb];
  real result = alpha * acc;
  if (beta != 0) result += beta * C[c_offset + m + n * ldc];
#if FAULT == 1
  // Spins forever; the store keeps the compiler from removing the loop.
  while (M > 0) {
    C[c_offset + m + n * ldc] = result;
    result += 1;
  }
#elif FAULT == 2
  // Far beyond any buffer: unmapped memory on a CPU device.
  C[c_offset + (long)M * 4000000000L + m] = result;
#elif FAULT == 4
  result *= 2;
#endif
  C[c_offset + m + n * ldc] = result;
}
