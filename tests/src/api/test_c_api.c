// SPDX-License-Identifier: Apache-2.0
/* libgemmtune's C interface from C: an sgemm (column-major, A transposed, offsets, padded
   leading dimensions, beta 0 on NaN), a strided batched sgemm and an hgemm, each checked
   against a plain loop; and a status for a bad argument. Exits 0 when all hold; with no OpenCL
   device it exits 77 (skipped), or 1 when GEMMTUNE_REQUIRE_DEVICE is set. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemmtune/gemmtune_c.h"

static int failures = 0;

#define EXPECT(cond, ...)                    \
  do {                                       \
    if (!(cond)) {                           \
      fprintf(stderr, "FAILED: " #cond " "); \
      fprintf(stderr, __VA_ARGS__);          \
      fprintf(stderr, "\n");                 \
      ++failures;                            \
    }                                        \
  } while (0)

static cl_context context;
static cl_command_queue queue;

static cl_mem make(void* host, size_t bytes) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clCreateBuffer failed: %d\n", err);
    exit(1);
  }
  return m;
}

/* Column-major C (m x n, ldc) = alpha * A^T * B, A stored k x m (lda), B k x n (ldb). */
static double expected(const float* a, size_t lda, const float* b, size_t ldb, size_t i, size_t j,
                       size_t k, float alpha) {
  double sum = 0;
  for (size_t p = 0; p < k; ++p) sum += (double)a[p + i * lda] * (double)b[p + j * ldb];
  return alpha * sum;
}

static int check_sgemm(void) {
  const size_t m = 33, n = 17, k = 9, lda = k + 2, ldb = k + 1, ldc = m + 3;
  const size_t a_off = 4, b_off = 3, c_off = 5;
  const size_t a_size = a_off + lda * m, b_size = b_off + ldb * n, c_size = c_off + ldc * n;
  float* a = malloc(a_size * sizeof(float));
  float* b = malloc(b_size * sizeof(float));
  float* c = malloc(c_size * sizeof(float));
  for (size_t i = 0; i < a_size; ++i) a[i] = (float)((int)(i * 7 % 11) - 5) / 4.0f;
  for (size_t i = 0; i < b_size; ++i) b[i] = (float)((int)(i * 5 % 13) - 6) / 4.0f;
  for (size_t i = 0; i < c_size; ++i) c[i] = NAN;
  cl_mem da = make(a, a_size * sizeof(float)), db = make(b, b_size * sizeof(float)),
         dc = make(c, c_size * sizeof(float));
  cl_event event = NULL;
  gemmtune_status s =
      gemmtune_sgemm(GEMMTUNE_COL_MAJOR, GEMMTUNE_TRANS, GEMMTUNE_NO_TRANS, m, n, k, 1.5f, da,
                     a_off, lda, db, b_off, ldb, 0.0f, dc, c_off, ldc, &queue, &event);
  EXPECT(s == GEMMTUNE_SUCCESS, "sgemm: %s: %s", gemmtune_status_name(s), gemmtune_last_error());
  if (s == GEMMTUNE_SUCCESS) {
    EXPECT(event != NULL, "sgemm returned no event");
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
    clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, c_size * sizeof(float), c, 0, NULL, NULL);
    int wrong = 0;
    for (size_t j = 0; j < n; ++j) {
      for (size_t i = 0; i < m; ++i) {
        const double e = expected(a + a_off, lda, b + b_off, ldb, i, j, k, 1.5f);
        if (!(fabs(c[c_off + i + j * ldc] - e) <= 1e-4 * (1 + fabs(e)))) ++wrong;
      }
    }
    EXPECT(wrong == 0, "sgemm: %d wrong elements", wrong);
  }
  /* A leading dimension too small for A (k x m stored column-major needs lda >= k). */
  s = gemmtune_sgemm(GEMMTUNE_COL_MAJOR, GEMMTUNE_TRANS, GEMMTUNE_NO_TRANS, m, n, k, 1.0f, da, 0,
                     k - 1, db, 0, ldb, 0.0f, dc, 0, ldc, &queue, NULL);
  EXPECT(s == GEMMTUNE_INVALID_LEADING_DIMENSION, "got %s", gemmtune_status_name(s));
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  clReleaseMemObject(dc);
  free(a);
  free(b);
  free(c);
  return 0;
}

static void check_batched_and_half(void) {
  /* Row-major 3 GEMMs of 5 x 6 x 4, dense, strided; then the same in half storage. */
  enum { M = 5, N = 6, K = 4, B = 3 };
  float a[B * M * K], b[B * K * N], c[B * M * N];
  cl_half ha[B * M * K], hb[B * K * N], hc[B * M * N];
  for (int i = 0; i < B * M * K; ++i) a[i] = (float)(i % 5 - 2);
  for (int i = 0; i < B * K * N; ++i) b[i] = (float)(i % 3 - 1);
  for (int i = 0; i < B * M * K; ++i) ha[i] = gemmtune_float_to_half(a[i]);
  for (int i = 0; i < B * K * N; ++i) hb[i] = gemmtune_float_to_half(b[i]);
  cl_mem da = make(a, sizeof a), db = make(b, sizeof b), dc = make(c, sizeof c);
  gemmtune_status s = gemmtune_sgemm_strided_batched(
      GEMMTUNE_ROW_MAJOR, GEMMTUNE_NO_TRANS, GEMMTUNE_NO_TRANS, M, N, K, 1.0f, da, 0, K, M * K, db,
      0, N, K * N, 0.0f, dc, 0, N, M * N, B, &queue, NULL);
  EXPECT(s == GEMMTUNE_SUCCESS, "batched: %s: %s", gemmtune_status_name(s), gemmtune_last_error());
  cl_mem dha = make(ha, sizeof ha), dhb = make(hb, sizeof hb), dhc = make(hc, sizeof hc);
  s = gemmtune_hgemm(GEMMTUNE_ROW_MAJOR, GEMMTUNE_NO_TRANS, GEMMTUNE_NO_TRANS, M, N, K,
                     gemmtune_float_to_half(1.0f), dha, 0, K, dhb, 0, N,
                     gemmtune_float_to_half(0.0f), dhc, 0, N, &queue, NULL);
  EXPECT(s == GEMMTUNE_SUCCESS, "hgemm: %s: %s", gemmtune_status_name(s), gemmtune_last_error());
  clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL);
  clEnqueueReadBuffer(queue, dhc, CL_TRUE, 0, sizeof hc, hc, 0, NULL, NULL);
  int wrong = 0, wrong_half = 0;
  for (int e = 0; e < B; ++e) {
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        float sum = 0;
        for (int p = 0; p < K; ++p) sum += a[e * M * K + i * K + p] * b[e * K * N + p * N + j];
        if (c[e * M * N + i * N + j] != sum) ++wrong;
        if (e == 0 && gemmtune_half_to_float(hc[i * N + j]) != sum) ++wrong_half;
      }
    }
  }
  EXPECT(wrong == 0, "batched: %d wrong elements", wrong);
  EXPECT(wrong_half == 0, "hgemm: %d wrong elements", wrong_half);
  cl_mem all[] = {da, db, dc, dha, dhb, dhc};
  for (int i = 0; i < 6; ++i) clReleaseMemObject(all[i]);
}

int main(void) {
  cl_platform_id platform;
  cl_device_id device;
  cl_uint n = 0;
  const char* required = getenv("GEMMTUNE_REQUIRE_DEVICE");
  const int must = required && *required && strcmp(required, "0") != 0;
  if (clGetPlatformIDs(1, &platform, &n) != CL_SUCCESS || n == 0 ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &n) != CL_SUCCESS || n == 0) {
    fprintf(stderr, "no OpenCL device%s\n", must ? " (GEMMTUNE_REQUIRE_DEVICE is set)" : "");
    return must ? 1 : 77;
  }
  cl_int err;
  context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  queue = clCreateCommandQueue(context, device, 0, &err);
  check_sgemm();
  check_batched_and_half();
  gemmtune_status s =
      gemmtune_sgemm(GEMMTUNE_ROW_MAJOR, GEMMTUNE_NO_TRANS, GEMMTUNE_NO_TRANS, 0, 1, 1, 1.0f, NULL,
                     0, 1, NULL, 0, 1, 0.0f, NULL, 0, 1, &queue, NULL);
  EXPECT(s == GEMMTUNE_INVALID_DIMENSION, "got %s", gemmtune_status_name(s));
  gemmtune_clear_cache();
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (failures) return 1;
  printf("C API: sgemm, strided batched sgemm, hgemm and a status check passed\n");
  return 0;
}
