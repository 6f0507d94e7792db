// SPDX-License-Identifier: Apache-2.0
/* libgemmtune's C interface: the C++ interface of gemmtune/gemmtune.hpp for C and for foreign
   function interfaces (ctypes). Every function returns a gemmtune_status (0 on success);
   gemmtune_last_error() says why the calling thread's last failing call failed. Layouts and
   transposes take the CBLAS values (101 row-major, 102 column-major; 111 no, 112 transpose,
   113 conjugate transpose, which is the transpose for real numbers). Handles must be live: a
   null queue or buffer is refused, but a released or never-created cl_mem or cl_command_queue is
   undefined behaviour, as it is for OpenCL itself. */
#ifndef GEMMTUNE_C_H
#define GEMMTUNE_C_H

#include <stddef.h>
#include <stdint.h>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "gemmtune/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gemmtune_status {
  GEMMTUNE_SUCCESS = 0,
  GEMMTUNE_INVALID_ARGUMENT = -1,
  GEMMTUNE_INVALID_DIMENSION = -2,
  GEMMTUNE_INVALID_LEADING_DIMENSION = -3,
  GEMMTUNE_BUFFER_TOO_SMALL = -4,
  GEMMTUNE_UNSUPPORTED = -5,
  GEMMTUNE_NO_CONFIGURATION = -6,
  GEMMTUNE_DEVICE_FAILURE = -7,
  GEMMTUNE_INVALID_DATABASE = -8,
  GEMMTUNE_INTERNAL_ERROR = -9
} gemmtune_status;

typedef enum gemmtune_layout { GEMMTUNE_ROW_MAJOR = 101, GEMMTUNE_COL_MAJOR = 102 } gemmtune_layout;
typedef enum gemmtune_transpose {
  GEMMTUNE_NO_TRANS = 111,
  GEMMTUNE_TRANS = 112,
  GEMMTUNE_CONJ_TRANS = 113
} gemmtune_transpose;
typedef enum gemmtune_activation {
  GEMMTUNE_ACTIVATION_NONE = 0,
  GEMMTUNE_ACTIVATION_RELU = 1,
  GEMMTUNE_ACTIVATION_GELU = 2
} gemmtune_activation;

/* C = alpha * op(A) * op(B) + beta * C; beta == 0 does not read C, and alpha == 0 multiplies
   nothing of A and B (C becomes beta * C). */
GEMMTUNE_EXPORT gemmtune_status gemmtune_sgemm(gemmtune_layout layout,
                                               gemmtune_transpose a_transpose,
                                               gemmtune_transpose b_transpose, size_t m, size_t n,
                                               size_t k, float alpha, cl_mem a, size_t a_offset,
                                               size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                                               float beta, cl_mem c, size_t c_offset, size_t c_ld,
                                               cl_command_queue* queue, cl_event* event);
GEMMTUNE_EXPORT gemmtune_status gemmtune_dgemm(gemmtune_layout layout,
                                               gemmtune_transpose a_transpose,
                                               gemmtune_transpose b_transpose, size_t m, size_t n,
                                               size_t k, double alpha, cl_mem a, size_t a_offset,
                                               size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                                               double beta, cl_mem c, size_t c_offset, size_t c_ld,
                                               cl_command_queue* queue, cl_event* event);
/* Half storage (the bits of cl_half), float arithmetic. */
GEMMTUNE_EXPORT gemmtune_status gemmtune_hgemm(gemmtune_layout layout,
                                               gemmtune_transpose a_transpose,
                                               gemmtune_transpose b_transpose, size_t m, size_t n,
                                               size_t k, cl_half alpha, cl_mem a, size_t a_offset,
                                               size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                                               cl_half beta, cl_mem c, size_t c_offset, size_t c_ld,
                                               cl_command_queue* queue, cl_event* event);

/* Strided batches: GEMM i at offset + i * stride of each operand. */
GEMMTUNE_EXPORT gemmtune_status gemmtune_sgemm_strided_batched(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, float alpha, cl_mem a, size_t a_offset, size_t a_ld,
    size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride, float beta, cl_mem c,
    size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count, cl_command_queue* queue,
    cl_event* event);
GEMMTUNE_EXPORT gemmtune_status gemmtune_dgemm_strided_batched(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, double alpha, cl_mem a, size_t a_offset, size_t a_ld,
    size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride, double beta, cl_mem c,
    size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count, cl_command_queue* queue,
    cl_event* event);
GEMMTUNE_EXPORT gemmtune_status gemmtune_hgemm_strided_batched(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, cl_half alpha, cl_mem a, size_t a_offset, size_t a_ld,
    size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride, cl_half beta,
    cl_mem c, size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count,
    cl_command_queue* queue, cl_event* event);

/* Offsets batches: GEMM i at a_offsets[i], b_offsets[i], c_offsets[i] of the buffers. */
GEMMTUNE_EXPORT gemmtune_status gemmtune_sgemm_batched(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, float alpha, cl_mem a, const size_t* a_offsets, size_t a_ld,
    cl_mem b, const size_t* b_offsets, size_t b_ld, float beta, cl_mem c, const size_t* c_offsets,
    size_t c_ld, size_t batch_count, cl_command_queue* queue, cl_event* event);
GEMMTUNE_EXPORT gemmtune_status gemmtune_dgemm_batched(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, double alpha, cl_mem a, const size_t* a_offsets, size_t a_ld,
    cl_mem b, const size_t* b_offsets, size_t b_ld, double beta, cl_mem c, const size_t* c_offsets,
    size_t c_ld, size_t batch_count, cl_command_queue* queue, cl_event* event);
GEMMTUNE_EXPORT gemmtune_status gemmtune_hgemm_batched(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, cl_half alpha, cl_mem a, const size_t* a_offsets, size_t a_ld,
    cl_mem b, const size_t* b_offsets, size_t b_ld, cl_half beta, cl_mem c, const size_t* c_offsets,
    size_t c_ld, size_t batch_count, cl_command_queue* queue, cl_event* event);

/* sgemm with the fused epilogue: bias (n floats, may be NULL) then the activation. */
GEMMTUNE_EXPORT gemmtune_status gemmtune_sgemm_epilogue(
    gemmtune_layout layout, gemmtune_transpose a_transpose, gemmtune_transpose b_transpose,
    size_t m, size_t n, size_t k, float alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b,
    size_t b_offset, size_t b_ld, float beta, cl_mem c, size_t c_offset, size_t c_ld, cl_mem bias,
    gemmtune_activation activation, cl_command_queue* queue, cl_event* event);

/* The user database (NULL or "" removes it); see gemmtune::SetDatabase. */
GEMMTUNE_EXPORT gemmtune_status gemmtune_set_database(const char* path);
/* Why the calling thread's last failing call failed ("" when none did). */
GEMMTUNE_EXPORT const char* gemmtune_last_error(void);
/* "kSuccess", ... */
GEMMTUNE_EXPORT const char* gemmtune_status_name(gemmtune_status status);
GEMMTUNE_EXPORT void gemmtune_clear_cache(void);
GEMMTUNE_EXPORT uint16_t gemmtune_float_to_half(float value);
GEMMTUNE_EXPORT float gemmtune_half_to_float(uint16_t value);

#ifdef __cplusplus
}
#endif

#endif
