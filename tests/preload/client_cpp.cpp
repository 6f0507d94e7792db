// SPDX-License-Identifier: Apache-2.0
// A C++ application of CLBlast's C++ interface (clblast.h: clblast::Gemm<T>, GemmBatched<T> and
// GemmStridedBatched<T>), built against the installed CLBlast: the program libgemmtune_clblast's
// tests run plain and preloaded (clblast_client.h).
#include <clblast.h>

#include <array>

#include "clblast_client.h"

namespace {

template <typename T>
T scalar(double value);
template <>
float scalar<float>(double value) {
  return static_cast<float>(value);
}
template <>
double scalar<double>(double value) {
  return value;
}
template <>
cl_half scalar<cl_half>(double value) {
  return client_half(value);
}

template <typename T>
int gemm_of(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
            double alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
            size_t b_ld, double beta, cl_mem c, size_t c_offset, size_t c_ld,
            cl_command_queue* queue, cl_event* event) {
  return static_cast<int>(clblast::Gemm<T>(
      static_cast<clblast::Layout>(layout), static_cast<clblast::Transpose>(a_transpose),
      static_cast<clblast::Transpose>(b_transpose), m, n, k, scalar<T>(alpha), a, a_offset, a_ld, b,
      b_offset, b_ld, scalar<T>(beta), c, c_offset, c_ld, queue, event));
}

template <typename T>
int strided_of(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
               double alpha, cl_mem a, size_t a_offset, size_t a_ld, size_t a_stride, cl_mem b,
               size_t b_offset, size_t b_ld, size_t b_stride, double beta, cl_mem c,
               size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count,
               cl_command_queue* queue, cl_event* event) {
  return static_cast<int>(clblast::GemmStridedBatched<T>(
      static_cast<clblast::Layout>(layout), static_cast<clblast::Transpose>(a_transpose),
      static_cast<clblast::Transpose>(b_transpose), m, n, k, scalar<T>(alpha), a, a_offset, a_ld,
      a_stride, b, b_offset, b_ld, b_stride, scalar<T>(beta), c, c_offset, c_ld, c_stride,
      batch_count, queue, event));
}

template <typename T>
int batched_of(int layout, int a_transpose, int b_transpose, size_t m, size_t n, size_t k,
               const double* alphas, cl_mem a, const size_t* a_offsets, size_t a_ld, cl_mem b,
               const size_t* b_offsets, size_t b_ld, const double* betas, cl_mem c,
               const size_t* c_offsets, size_t c_ld, size_t batch_count, cl_command_queue* queue,
               cl_event* event) {
  std::array<T, CLIENT_MAX_BATCH> typed_alphas, typed_betas;
  for (size_t g = 0; g < CLIENT_MAX_BATCH; ++g) {
    typed_alphas[g] = scalar<T>(alphas[g]);
    typed_betas[g] = scalar<T>(betas[g]);
  }
  return static_cast<int>(clblast::GemmBatched<T>(
      static_cast<clblast::Layout>(layout), static_cast<clblast::Transpose>(a_transpose),
      static_cast<clblast::Transpose>(b_transpose), m, n, k, typed_alphas.data(), a, a_offsets,
      a_ld, b, b_offsets, b_ld, typed_betas.data(), c, c_offsets, c_ld, batch_count, queue, event));
}

int gemm(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
         size_t n, size_t k, double alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b,
         size_t b_offset, size_t b_ld, double beta, cl_mem c, size_t c_offset, size_t c_ld,
         cl_command_queue* queue, cl_event* event) {
  auto call = precision == CLIENT_DOUBLE ? gemm_of<double>
              : precision == CLIENT_HALF ? gemm_of<cl_half>
                                         : gemm_of<float>;
  return call(layout, a_transpose, b_transpose, m, n, k, alpha, a, a_offset, a_ld, b, b_offset,
              b_ld, beta, c, c_offset, c_ld, queue, event);
}

int strided(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
            size_t n, size_t k, double alpha, cl_mem a, size_t a_offset, size_t a_ld,
            size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride, double beta,
            cl_mem c, size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count,
            cl_command_queue* queue, cl_event* event) {
  auto call = precision == CLIENT_DOUBLE ? strided_of<double>
              : precision == CLIENT_HALF ? strided_of<cl_half>
                                         : strided_of<float>;
  return call(layout, a_transpose, b_transpose, m, n, k, alpha, a, a_offset, a_ld, a_stride, b,
              b_offset, b_ld, b_stride, beta, c, c_offset, c_ld, c_stride, batch_count, queue,
              event);
}

int batched(client_precision precision, int layout, int a_transpose, int b_transpose, size_t m,
            size_t n, size_t k, const double* alphas, cl_mem a, const size_t* a_offsets,
            size_t a_ld, cl_mem b, const size_t* b_offsets, size_t b_ld, const double* betas,
            cl_mem c, const size_t* c_offsets, size_t c_ld, size_t batch_count,
            cl_command_queue* queue, cl_event* event) {
  auto call = precision == CLIENT_DOUBLE ? batched_of<double>
              : precision == CLIENT_HALF ? batched_of<cl_half>
                                         : batched_of<float>;
  return call(layout, a_transpose, b_transpose, m, n, k, alphas, a, a_offsets, a_ld, b, b_offsets,
              b_ld, betas, c, c_offsets, c_ld, batch_count, queue, event);
}

}  // namespace

int main(int argc, char** argv) {
  const client_api api = {gemm, strided, batched};
  return client_main(argc, argv, "clblast_client_cpp", &api);
}
