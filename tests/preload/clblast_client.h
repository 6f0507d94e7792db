// SPDX-License-Identifier: Apache-2.0
/* The program both CLBlast clients of libgemmtune_clblast's tests share (clblast_client.c): the
   GEMM cases, their data and reference, the dump of what each call returned, the comparison of
   two dumps and the benchmark. A client supplies CLBlast's GEMM entry points through
   client_api: client_c.c those of clblast_c.h, client_cpp.cpp those of clblast.h. */
#ifndef GEMMTUNE_TESTS_PRELOAD_CLBLAST_CLIENT_H
#define GEMMTUNE_TESTS_PRELOAD_CLBLAST_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { CLIENT_SINGLE, CLIENT_DOUBLE, CLIENT_HALF } client_precision;

/* The most GEMMs of one batched call (the clients convert the per-GEMM scalars into arrays of
   this size). */
#define CLIENT_MAX_BATCH 8

/* CLBlast's GEMM entry points, the scalars as doubles (each client converts them to its element
   type); layouts and transposes are CLBlast's values. Each returns CLBlast's status. */
typedef struct {
  int (*gemm)(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
              size_t n, size_t k, double alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b,
              size_t b_offset, size_t b_ld, double beta, cl_mem c, size_t c_offset, size_t c_ld,
              cl_command_queue* queue, cl_event* event);
  int (*strided)(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
                 size_t n, size_t k, double alpha, cl_mem a, size_t a_offset, size_t a_ld,
                 size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride,
                 double beta, cl_mem c, size_t c_offset, size_t c_ld, size_t c_stride,
                 size_t batch_count, cl_command_queue* queue, cl_event* event);
  int (*batched)(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
                 size_t n, size_t k, const double* alphas, cl_mem a, const size_t* a_offsets,
                 size_t a_ld, cl_mem b, const size_t* b_offsets, size_t b_ld, const double* betas,
                 cl_mem c, const size_t* c_offsets, size_t c_ld, size_t batch_count,
                 cl_command_queue* queue, cl_event* event);
} client_api;

/* The bits of the IEEE binary16 nearest to `value` (round to nearest even). */
uint16_t client_half(double value);

/* The client program: see the usage text in clblast_client.c. Returns the exit code. */
int client_main(int argc, char** argv, const char* program, const client_api* api);

#ifdef __cplusplus
}
#endif

#endif
