// SPDX-License-Identifier: Apache-2.0
/* A C application of CLBlast's C interface (clblast_c.h), built against the installed CLBlast:
   the program libgemmtune_clblast's tests run plain and preloaded (clblast_client.h). */
#include <clblast_c.h>

#include "clblast_client.h"

static int gemm(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
                size_t n, size_t k, double alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b,
                size_t b_offset, size_t b_ld, double beta, cl_mem c, size_t c_offset, size_t c_ld,
                cl_command_queue* queue, cl_event* event) {
  const CLBlastLayout l = (CLBlastLayout)layout;
  const CLBlastTranspose ta = (CLBlastTranspose)a_transpose, tb = (CLBlastTranspose)b_transpose;
  switch (precision) {
    case CLIENT_DOUBLE:
      return CLBlastDgemm(l, ta, tb, m, n, k, alpha, a, a_offset, a_ld, b, b_offset, b_ld, beta, c,
                          c_offset, c_ld, queue, event);
    case CLIENT_HALF:
      return CLBlastHgemm(l, ta, tb, m, n, k, client_half(alpha), a, a_offset, a_ld, b, b_offset,
                          b_ld, client_half(beta), c, c_offset, c_ld, queue, event);
    case CLIENT_SINGLE:
      break;
  }
  return CLBlastSgemm(l, ta, tb, m, n, k, (float)alpha, a, a_offset, a_ld, b, b_offset, b_ld,
                      (float)beta, c, c_offset, c_ld, queue, event);
}

static int strided(client_precision precision, int layout, int a_transpose, int b_transpose,
                   size_t m, size_t n, size_t k, double alpha, cl_mem a, size_t a_offset,
                   size_t a_ld, size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld,
                   size_t b_stride, double beta, cl_mem c, size_t c_offset, size_t c_ld,
                   size_t c_stride, size_t batch_count, cl_command_queue* queue, cl_event* event) {
  const CLBlastLayout l = (CLBlastLayout)layout;
  const CLBlastTranspose ta = (CLBlastTranspose)a_transpose, tb = (CLBlastTranspose)b_transpose;
  switch (precision) {
    case CLIENT_DOUBLE:
      return CLBlastDgemmStridedBatched(l, ta, tb, m, n, k, alpha, a, a_offset, a_ld, a_stride, b,
                                        b_offset, b_ld, b_stride, beta, c, c_offset, c_ld, c_stride,
                                        batch_count, queue, event);
    case CLIENT_HALF:
      return CLBlastHgemmStridedBatched(l, ta, tb, m, n, k, client_half(alpha), a, a_offset, a_ld,
                                        a_stride, b, b_offset, b_ld, b_stride, client_half(beta), c,
                                        c_offset, c_ld, c_stride, batch_count, queue, event);
    case CLIENT_SINGLE:
      break;
  }
  return CLBlastSgemmStridedBatched(l, ta, tb, m, n, k, (float)alpha, a, a_offset, a_ld, a_stride,
                                    b, b_offset, b_ld, b_stride, (float)beta, c, c_offset, c_ld,
                                    c_stride, batch_count, queue, event);
}

static int batched(client_precision precision, int layout, int a_transpose, int b_transpose,
                   size_t m, size_t n, size_t k, const double* alphas, cl_mem a,
                   const size_t* a_offsets, size_t a_ld, cl_mem b, const size_t* b_offsets,
                   size_t b_ld, const double* betas, cl_mem c, const size_t* c_offsets, size_t c_ld,
                   size_t batch_count, cl_command_queue* queue, cl_event* event) {
  const CLBlastLayout l = (CLBlastLayout)layout;
  const CLBlastTranspose ta = (CLBlastTranspose)a_transpose, tb = (CLBlastTranspose)b_transpose;
  float fa[CLIENT_MAX_BATCH], fb[CLIENT_MAX_BATCH];
  cl_half ha[CLIENT_MAX_BATCH], hb[CLIENT_MAX_BATCH];
  for (size_t g = 0; g < CLIENT_MAX_BATCH; ++g) {
    fa[g] = (float)alphas[g];
    fb[g] = (float)betas[g];
    ha[g] = client_half(alphas[g]);
    hb[g] = client_half(betas[g]);
  }
  switch (precision) {
    case CLIENT_DOUBLE:
      return CLBlastDgemmBatched(l, ta, tb, m, n, k, alphas, a, a_offsets, a_ld, b, b_offsets, b_ld,
                                 betas, c, c_offsets, c_ld, batch_count, queue, event);
    case CLIENT_HALF:
      return CLBlastHgemmBatched(l, ta, tb, m, n, k, ha, a, a_offsets, a_ld, b, b_offsets, b_ld, hb,
                                 c, c_offsets, c_ld, batch_count, queue, event);
    case CLIENT_SINGLE:
      break;
  }
  return CLBlastSgemmBatched(l, ta, tb, m, n, k, fa, a, a_offsets, a_ld, b, b_offsets, b_ld, fb, c,
                             c_offsets, c_ld, batch_count, queue, event);
}

int main(int argc, char** argv) {
  const client_api api = {gemm, strided, batched};
  return client_main(argc, argv, "clblast_client_c", &api);
}
