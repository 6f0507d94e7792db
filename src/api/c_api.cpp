// SPDX-License-Identifier: Apache-2.0
// The C interface (gemmtune/gemmtune_c.h) over the C++ one: same checks, same statuses.
#include "gemmtune/gemmtune_c.h"

#include "gemmtune/gemmtune.hpp"

using gemmtune::half;
using gemmtune::Layout;
using gemmtune::Transpose;

namespace {

gemmtune_status status(gemmtune::StatusCode s) {
  return static_cast<gemmtune_status>(static_cast<int>(s));
}
// Values outside the enums pass through unchanged, and the C++ checks refuse them.
Layout layout(gemmtune_layout l) {
  return static_cast<Layout>(static_cast<int>(l));
}
Transpose transpose(gemmtune_transpose t) {
  return static_cast<Transpose>(static_cast<int>(t));
}
half to_half(cl_half bits) {
  half h;
  h.bits = bits;
  return h;
}

}  // namespace

extern "C" {

gemmtune_status gemmtune_sgemm(gemmtune_layout l, gemmtune_transpose ta, gemmtune_transpose tb,
                               size_t m, size_t n, size_t k, float alpha, cl_mem a, size_t a_offset,
                               size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld, float beta,
                               cl_mem c, size_t c_offset, size_t c_ld, cl_command_queue* queue,
                               cl_event* event) {
  return status(gemmtune::Gemm<float>(layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a,
                                      a_offset, a_ld, b, b_offset, b_ld, beta, c, c_offset, c_ld,
                                      queue, event));
}

gemmtune_status gemmtune_dgemm(gemmtune_layout l, gemmtune_transpose ta, gemmtune_transpose tb,
                               size_t m, size_t n, size_t k, double alpha, cl_mem a,
                               size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                               double beta, cl_mem c, size_t c_offset, size_t c_ld,
                               cl_command_queue* queue, cl_event* event) {
  return status(gemmtune::Gemm<double>(layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a,
                                       a_offset, a_ld, b, b_offset, b_ld, beta, c, c_offset, c_ld,
                                       queue, event));
}

gemmtune_status gemmtune_hgemm(gemmtune_layout l, gemmtune_transpose ta, gemmtune_transpose tb,
                               size_t m, size_t n, size_t k, cl_half alpha, cl_mem a,
                               size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset, size_t b_ld,
                               cl_half beta, cl_mem c, size_t c_offset, size_t c_ld,
                               cl_command_queue* queue, cl_event* event) {
  return status(gemmtune::Gemm<half>(layout(l), transpose(ta), transpose(tb), m, n, k,
                                     to_half(alpha), a, a_offset, a_ld, b, b_offset, b_ld,
                                     to_half(beta), c, c_offset, c_ld, queue, event));
}

gemmtune_status gemmtune_sgemm_strided_batched(
    gemmtune_layout l, gemmtune_transpose ta, gemmtune_transpose tb, size_t m, size_t n, size_t k,
    float alpha, cl_mem a, size_t a_offset, size_t a_ld, size_t a_stride, cl_mem b, size_t b_offset,
    size_t b_ld, size_t b_stride, float beta, cl_mem c, size_t c_offset, size_t c_ld,
    size_t c_stride, size_t batch_count, cl_command_queue* queue, cl_event* event) {
  return status(gemmtune::GemmStridedBatched<float>(
      layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a, a_offset, a_ld, a_stride, b,
      b_offset, b_ld, b_stride, beta, c, c_offset, c_ld, c_stride, batch_count, queue, event));
}

gemmtune_status gemmtune_dgemm_strided_batched(
    gemmtune_layout l, gemmtune_transpose ta, gemmtune_transpose tb, size_t m, size_t n, size_t k,
    double alpha, cl_mem a, size_t a_offset, size_t a_ld, size_t a_stride, cl_mem b,
    size_t b_offset, size_t b_ld, size_t b_stride, double beta, cl_mem c, size_t c_offset,
    size_t c_ld, size_t c_stride, size_t batch_count, cl_command_queue* queue, cl_event* event) {
  return status(gemmtune::GemmStridedBatched<double>(
      layout(l), transpose(ta), transpose(tb), m, n, k, alpha, a, a_offset, a_ld, a_stride, b,
      b_offset, b_ld, b_stride, beta, c, c_offset, c_ld, c_stride, batch_count, queue, event));
}

gemmtune_status gemmtune_hgemm_strided_batched(
    gemmtune_layout l, gemmtune_transpose ta, gemmtune_transpose tb, size_t m, size_t n, size_t k,
    cl_half alpha, cl_mem a, size_t a_offset, size_t a_ld, size_t a_stride, cl_mem b,
    size_t b_offset, size_t b_ld, size_t b_stride, cl_half beta, cl_mem c, size_t c_offset,
    size_t c_ld, size_t c_stride, size_t batch_count, cl_command_queue* queue, cl_event* event) {
  return status(gemmtune::GemmStridedBatched<half>(
      layout(l), transpose(ta), transpose(tb), m, n, k, to_half(alpha), a, a_offset, a_ld, a_stride,
      b, b_offset, b_ld, b_stride, to_half(beta), c, c_offset, c_ld, c_stride, batch_count, queue,
      event));
}

gemmtune_status gemmtune_sgemm_batched(gemmtune_layout l, gemmtune_transpose ta,
                                       gemmtune_transpose tb, size_t m, size_t n, size_t k,
                                       float alpha, cl_mem a, const size_t* a_offsets, size_t a_ld,
                                       cl_mem b, const size_t* b_offsets, size_t b_ld, float beta,
                                       cl_mem c, const size_t* c_offsets, size_t c_ld,
                                       size_t batch_count, cl_command_queue* queue,
                                       cl_event* event) {
  return status(gemmtune::GemmBatched<float>(layout(l), transpose(ta), transpose(tb), m, n, k,
                                             alpha, a, a_offsets, a_ld, b, b_offsets, b_ld, beta, c,
                                             c_offsets, c_ld, batch_count, queue, event));
}

gemmtune_status gemmtune_dgemm_batched(gemmtune_layout l, gemmtune_transpose ta,
                                       gemmtune_transpose tb, size_t m, size_t n, size_t k,
                                       double alpha, cl_mem a, const size_t* a_offsets, size_t a_ld,
                                       cl_mem b, const size_t* b_offsets, size_t b_ld, double beta,
                                       cl_mem c, const size_t* c_offsets, size_t c_ld,
                                       size_t batch_count, cl_command_queue* queue,
                                       cl_event* event) {
  return status(gemmtune::GemmBatched<double>(layout(l), transpose(ta), transpose(tb), m, n, k,
                                              alpha, a, a_offsets, a_ld, b, b_offsets, b_ld, beta,
                                              c, c_offsets, c_ld, batch_count, queue, event));
}

gemmtune_status gemmtune_hgemm_batched(gemmtune_layout l, gemmtune_transpose ta,
                                       gemmtune_transpose tb, size_t m, size_t n, size_t k,
                                       cl_half alpha, cl_mem a, const size_t* a_offsets,
                                       size_t a_ld, cl_mem b, const size_t* b_offsets, size_t b_ld,
                                       cl_half beta, cl_mem c, const size_t* c_offsets, size_t c_ld,
                                       size_t batch_count, cl_command_queue* queue,
                                       cl_event* event) {
  return status(gemmtune::GemmBatched<half>(
      layout(l), transpose(ta), transpose(tb), m, n, k, to_half(alpha), a, a_offsets, a_ld, b,
      b_offsets, b_ld, to_half(beta), c, c_offsets, c_ld, batch_count, queue, event));
}

gemmtune_status gemmtune_sgemm_epilogue(gemmtune_layout l, gemmtune_transpose ta,
                                        gemmtune_transpose tb, size_t m, size_t n, size_t k,
                                        float alpha, cl_mem a, size_t a_offset, size_t a_ld,
                                        cl_mem b, size_t b_offset, size_t b_ld, float beta,
                                        cl_mem c, size_t c_offset, size_t c_ld, cl_mem bias,
                                        gemmtune_activation activation, cl_command_queue* queue,
                                        cl_event* event) {
  gemmtune::EpilogueOptions e;
  e.bias = bias;
  e.activation = static_cast<gemmtune::EpilogueActivation>(static_cast<int>(activation));
  return status(gemmtune::GemmEpilogue<float>(layout(l), transpose(ta), transpose(tb), m, n, k,
                                              alpha, a, a_offset, a_ld, b, b_offset, b_ld, beta, c,
                                              c_offset, c_ld, e, queue, event));
}

gemmtune_status gemmtune_set_database(const char* path) {
  return status(gemmtune::SetDatabase(path ? path : ""));
}

const char* gemmtune_last_error(void) {
  return gemmtune::LastErrorMessage();
}

const char* gemmtune_status_name(gemmtune_status s) {
  return gemmtune::StatusName(static_cast<gemmtune::StatusCode>(static_cast<int>(s)));
}

void gemmtune_clear_cache(void) {
  gemmtune::ClearCache();
}

uint16_t gemmtune_float_to_half(float value) {
  return gemmtune::FloatToHalf(value).bits;
}

float gemmtune_half_to_float(uint16_t value) {
  half h;
  h.bits = value;
  return gemmtune::HalfToFloat(h);
}

}  // extern "C"
