// SPDX-License-Identifier: Apache-2.0
// CLBlast's GEMM entry points, defined under CLBlast's own names (the C functions of clblast_c.h
// and the explicit instantiations of clblast.h's templates for float, double and half), so that
// an application built against CLBlast reaches them first when this library is preloaded
// (LD_PRELOAD). Each hands the call to dispatch(): libgemmtune's Gemm, GemmStridedBatched or
// GemmBatched, or the real CLBlast's definition of the same entry point. CLBlast's complex GEMMs
// and every other routine are not defined here, so they stay CLBlast's.
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "gemmtune/gemmtune.hpp"
#include "src/preload/dispatch.hpp"
#include "src/preload/real_clblast.hpp"

// The library is built with hidden visibility; what CLBlast's headers declare is its interface.
#pragma GCC visibility push(default)
#include <clblast.h>
#include <clblast_c.h>
#pragma GCC visibility pop

namespace gemmtune::preload {

namespace {

// Why a call goes to CLBlast whatever the databases hold.
// CLBlast's GemmWithTempBuffer forms: the application manages CLBlast's scratch memory.
constexpr const char* kTempBufferGiven = "a temporary buffer for CLBlast was given";
constexpr const char* kScalarsDiffer = "the GEMMs of the batch have different alphas or betas";
constexpr const char* kNoScalars = "no alphas or no betas";

// A CLBlast element type as libgemmtune takes it.
template <typename T>
struct Storage;
template <>
struct Storage<float> {
  using Type = float;
  static constexpr GemmPrecision precision = GemmPrecision::kSingle;
  static Type of(float v) { return v; }
};
template <>
struct Storage<double> {
  using Type = double;
  static constexpr GemmPrecision precision = GemmPrecision::kDouble;
  static Type of(double v) { return v; }
};
template <>
struct Storage<cl_half> {
  using Type = gemmtune::half;
  static constexpr GemmPrecision precision = GemmPrecision::kHalf;
  static Type of(cl_half v) { return gemmtune::half{v}; }
};

// The names the log gives the C++ entry points.
template <typename T>
struct CppNames;
template <>
struct CppNames<float> {
  static constexpr const char* gemm = "clblast::Gemm<float>";
  static constexpr const char* batched = "clblast::GemmBatched<float>";
  static constexpr const char* strided = "clblast::GemmStridedBatched<float>";
};
template <>
struct CppNames<double> {
  static constexpr const char* gemm = "clblast::Gemm<double>";
  static constexpr const char* batched = "clblast::GemmBatched<double>";
  static constexpr const char* strided = "clblast::GemmStridedBatched<double>";
};
template <>
struct CppNames<cl_half> {
  static constexpr const char* gemm = "clblast::Gemm<half>";
  static constexpr const char* batched = "clblast::GemmBatched<half>";
  static constexpr const char* strided = "clblast::GemmStridedBatched<half>";
};

template <typename T>
Call call_of(const char* entry, int layout, int a_transpose, int b_transpose, size_t m, size_t n,
             size_t k, cl_command_queue* queue) {
  return Call{
      entry, Storage<T>::precision, layout, a_transpose, b_transpose, m, n, k, 1, false, false,
      queue};
}

template <typename T, typename Forward>
int gemm(const char* entry, int layout, int a_transpose, int b_transpose, size_t m, size_t n,
         size_t k, T alpha, cl_mem a, size_t a_offset, size_t a_ld, cl_mem b, size_t b_offset,
         size_t b_ld, T beta, cl_mem c, size_t c_offset, size_t c_ld, cl_command_queue* queue,
         cl_event* event, cl_mem temp_buffer, Forward&& forward) {
  const Call call = call_of<T>(entry, layout, a_transpose, b_transpose, m, n, k, queue);
  return dispatch(
      call, temp_buffer ? kTempBufferGiven : nullptr,
      [&] {
        return gemmtune::Gemm<typename Storage<T>::Type>(
            static_cast<Layout>(layout), static_cast<Transpose>(a_transpose),
            static_cast<Transpose>(b_transpose), m, n, k, Storage<T>::of(alpha), a, a_offset, a_ld,
            b, b_offset, b_ld, Storage<T>::of(beta), c, c_offset, c_ld, queue, event);
      },
      forward);
}

template <typename T, typename Forward>
int gemm_strided(const char* entry, int layout, int a_transpose, int b_transpose, size_t m,
                 size_t n, size_t k, T alpha, cl_mem a, size_t a_offset, size_t a_ld,
                 size_t a_stride, cl_mem b, size_t b_offset, size_t b_ld, size_t b_stride, T beta,
                 cl_mem c, size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count,
                 cl_command_queue* queue, cl_event* event, Forward&& forward) {
  Call call = call_of<T>(entry, layout, a_transpose, b_transpose, m, n, k, queue);
  call.batched = true;
  call.batch_count = batch_count;
  return dispatch(
      call, nullptr,
      [&] {
        return gemmtune::GemmStridedBatched<typename Storage<T>::Type>(
            static_cast<Layout>(layout), static_cast<Transpose>(a_transpose),
            static_cast<Transpose>(b_transpose), m, n, k, Storage<T>::of(alpha), a, a_offset, a_ld,
            a_stride, b, b_offset, b_ld, b_stride, Storage<T>::of(beta), c, c_offset, c_ld,
            c_stride, batch_count, queue, event);
      },
      forward);
}

// libgemmtune's GemmBatched takes one alpha and one beta for the batch; CLBlast's, one each.
template <typename T>
const char* scalars_refusal(const T* alphas, const T* betas, size_t batch_count) {
  if (!alphas || !betas) return kNoScalars;
  for (size_t i = 1; i < batch_count; ++i) {
    if (!(alphas[i] == alphas[0]) || !(betas[i] == betas[0])) return kScalarsDiffer;
  }
  return nullptr;
}

template <typename T, typename Forward>
int gemm_batched(const char* entry, int layout, int a_transpose, int b_transpose, size_t m,
                 size_t n, size_t k, const T* alphas, cl_mem a, const size_t* a_offsets,
                 size_t a_ld, cl_mem b, const size_t* b_offsets, size_t b_ld, const T* betas,
                 cl_mem c, const size_t* c_offsets, size_t c_ld, size_t batch_count,
                 cl_command_queue* queue, cl_event* event, Forward&& forward) {
  Call call = call_of<T>(entry, layout, a_transpose, b_transpose, m, n, k, queue);
  call.batched = true;
  call.batch_count = batch_count;
  call.offsets_batch = true;
  // An empty batch reads no scalar; libgemmtune refuses it and CLBlast answers.
  const T alpha = alphas && batch_count > 0 ? alphas[0] : T{};
  const T beta = betas && batch_count > 0 ? betas[0] : T{};
  return dispatch(
      call, scalars_refusal(alphas, betas, batch_count),
      [&] {
        return gemmtune::GemmBatched<typename Storage<T>::Type>(
            static_cast<Layout>(layout), static_cast<Transpose>(a_transpose),
            static_cast<Transpose>(b_transpose), m, n, k, Storage<T>::of(alpha), a, a_offsets, a_ld,
            b, b_offsets, b_ld, Storage<T>::of(beta), c, c_offsets, c_ld, batch_count, queue,
            event);
      },
      forward);
}

// The call passed on to `real` (CLBlast's definition), or nothing where CLBlast has none.
template <typename Function, typename... Args>
std::optional<int> call_real(Function real, Args... args) {
  if (!real) return std::nullopt;
  return static_cast<int>(real(args...));
}

}  // namespace

}  // namespace gemmtune::preload

namespace pre = gemmtune::preload;

// ---- the C interface (clblast_c.h) ----

#define GEMMTUNE_C_GEMM(NAME, T)                                                                  \
  CLBlastStatusCode NAME(const CLBlastLayout layout, const CLBlastTranspose a_transpose,          \
                         const CLBlastTranspose b_transpose, const size_t m, const size_t n,      \
                         const size_t k, const T alpha, const cl_mem a_buffer,                    \
                         const size_t a_offset, const size_t a_ld, const cl_mem b_buffer,         \
                         const size_t b_offset, const size_t b_ld, const T beta, cl_mem c_buffer, \
                         const size_t c_offset, const size_t c_ld, cl_command_queue* queue,       \
                         cl_event* event) {                                                       \
    static const auto real = pre::real_function(&NAME);                                           \
    return static_cast<CLBlastStatusCode>(pre::gemm<T>(                                           \
        #NAME, layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, a_offset, a_ld,        \
        b_buffer, b_offset, b_ld, beta, c_buffer, c_offset, c_ld, queue, event, nullptr, [&] {    \
          return pre::call_real(real, layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, \
                                a_offset, a_ld, b_buffer, b_offset, b_ld, beta, c_buffer,         \
                                c_offset, c_ld, queue, event);                                    \
        }));                                                                                      \
  }

#define GEMMTUNE_C_GEMM_STRIDED(NAME, T)                                                          \
  CLBlastStatusCode NAME(const CLBlastLayout layout, const CLBlastTranspose a_transpose,          \
                         const CLBlastTranspose b_transpose, const size_t m, const size_t n,      \
                         const size_t k, const T alpha, const cl_mem a_buffer,                    \
                         const size_t a_offset, const size_t a_ld, const size_t a_stride,         \
                         const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,         \
                         const size_t b_stride, const T beta, cl_mem c_buffer,                    \
                         const size_t c_offset, const size_t c_ld, const size_t c_stride,         \
                         const size_t batch_count, cl_command_queue* queue, cl_event* event) {    \
    static const auto real = pre::real_function(&NAME);                                           \
    return static_cast<CLBlastStatusCode>(pre::gemm_strided<T>(                                   \
        #NAME, layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, a_offset, a_ld,        \
        a_stride, b_buffer, b_offset, b_ld, b_stride, beta, c_buffer, c_offset, c_ld, c_stride,   \
        batch_count, queue, event, [&] {                                                          \
          return pre::call_real(real, layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, \
                                a_offset, a_ld, a_stride, b_buffer, b_offset, b_ld, b_stride,     \
                                beta, c_buffer, c_offset, c_ld, c_stride, batch_count, queue,     \
                                event);                                                           \
        }));                                                                                      \
  }

#define GEMMTUNE_C_GEMM_BATCHED(NAME, T)                                                           \
  CLBlastStatusCode NAME(const CLBlastLayout layout, const CLBlastTranspose a_transpose,           \
                         const CLBlastTranspose b_transpose, const size_t m, const size_t n,       \
                         const size_t k, const T* alphas, const cl_mem a_buffer,                   \
                         const size_t* a_offsets, const size_t a_ld, const cl_mem b_buffer,        \
                         const size_t* b_offsets, const size_t b_ld, const T* betas,               \
                         cl_mem c_buffer, const size_t* c_offsets, const size_t c_ld,              \
                         const size_t batch_count, cl_command_queue* queue, cl_event* event) {     \
    static const auto real = pre::real_function(&NAME);                                            \
    return static_cast<CLBlastStatusCode>(pre::gemm_batched<T>(                                    \
        #NAME, layout, a_transpose, b_transpose, m, n, k, alphas, a_buffer, a_offsets, a_ld,       \
        b_buffer, b_offsets, b_ld, betas, c_buffer, c_offsets, c_ld, batch_count, queue, event,    \
        [&] {                                                                                      \
          return pre::call_real(real, layout, a_transpose, b_transpose, m, n, k, alphas, a_buffer, \
                                a_offsets, a_ld, b_buffer, b_offsets, b_ld, betas, c_buffer,       \
                                c_offsets, c_ld, batch_count, queue, event);                       \
        }));                                                                                       \
  }

extern "C" {
GEMMTUNE_C_GEMM(CLBlastSgemm, float)
GEMMTUNE_C_GEMM(CLBlastDgemm, double)
GEMMTUNE_C_GEMM(CLBlastHgemm, cl_half)
GEMMTUNE_C_GEMM_STRIDED(CLBlastSgemmStridedBatched, float)
GEMMTUNE_C_GEMM_STRIDED(CLBlastDgemmStridedBatched, double)
GEMMTUNE_C_GEMM_STRIDED(CLBlastHgemmStridedBatched, cl_half)
GEMMTUNE_C_GEMM_BATCHED(CLBlastSgemmBatched, float)
GEMMTUNE_C_GEMM_BATCHED(CLBlastDgemmBatched, double)
GEMMTUNE_C_GEMM_BATCHED(CLBlastHgemmBatched, cl_half)
}

#undef GEMMTUNE_C_GEMM
#undef GEMMTUNE_C_GEMM_STRIDED
#undef GEMMTUNE_C_GEMM_BATCHED

// ---- the C++ interface (clblast.h) ----

namespace clblast {

template <typename T>
StatusCode Gemm(const Layout layout, const Transpose a_transpose, const Transpose b_transpose,
                const size_t m, const size_t n, const size_t k, const T alpha,
                const cl_mem a_buffer, const size_t a_offset, const size_t a_ld,
                const cl_mem b_buffer, const size_t b_offset, const size_t b_ld, const T beta,
                cl_mem c_buffer, const size_t c_offset, const size_t c_ld, cl_command_queue* queue,
                cl_event* event, cl_mem temp_buffer) {
  static const auto real = pre::real_function(&Gemm<T>);
  return static_cast<StatusCode>(pre::gemm<T>(
      pre::CppNames<T>::gemm, static_cast<int>(layout), static_cast<int>(a_transpose),
      static_cast<int>(b_transpose), m, n, k, alpha, a_buffer, a_offset, a_ld, b_buffer, b_offset,
      b_ld, beta, c_buffer, c_offset, c_ld, queue, event, temp_buffer, [&] {
        return pre::call_real(real, layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer,
                              a_offset, a_ld, b_buffer, b_offset, b_ld, beta, c_buffer, c_offset,
                              c_ld, queue, event, temp_buffer);
      }));
}

template <typename T>
StatusCode GemmBatched(const Layout layout, const Transpose a_transpose,
                       const Transpose b_transpose, const size_t m, const size_t n, const size_t k,
                       const T* alphas, const cl_mem a_buffer, const size_t* a_offsets,
                       const size_t a_ld, const cl_mem b_buffer, const size_t* b_offsets,
                       const size_t b_ld, const T* betas, cl_mem c_buffer, const size_t* c_offsets,
                       const size_t c_ld, const size_t batch_count, cl_command_queue* queue,
                       cl_event* event) {
  static const auto real = pre::real_function(&GemmBatched<T>);
  return static_cast<StatusCode>(pre::gemm_batched<T>(
      pre::CppNames<T>::batched, static_cast<int>(layout), static_cast<int>(a_transpose),
      static_cast<int>(b_transpose), m, n, k, alphas, a_buffer, a_offsets, a_ld, b_buffer,
      b_offsets, b_ld, betas, c_buffer, c_offsets, c_ld, batch_count, queue, event, [&] {
        return pre::call_real(real, layout, a_transpose, b_transpose, m, n, k, alphas, a_buffer,
                              a_offsets, a_ld, b_buffer, b_offsets, b_ld, betas, c_buffer,
                              c_offsets, c_ld, batch_count, queue, event);
      }));
}

template <typename T>
StatusCode GemmStridedBatched(const Layout layout, const Transpose a_transpose,
                              const Transpose b_transpose, const size_t m, const size_t n,
                              const size_t k, const T alpha, const cl_mem a_buffer,
                              const size_t a_offset, const size_t a_ld, const size_t a_stride,
                              const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
                              const size_t b_stride, const T beta, cl_mem c_buffer,
                              const size_t c_offset, const size_t c_ld, const size_t c_stride,
                              const size_t batch_count, cl_command_queue* queue, cl_event* event) {
  static const auto real = pre::real_function(&GemmStridedBatched<T>);
  return static_cast<StatusCode>(pre::gemm_strided<T>(
      pre::CppNames<T>::strided, static_cast<int>(layout), static_cast<int>(a_transpose),
      static_cast<int>(b_transpose), m, n, k, alpha, a_buffer, a_offset, a_ld, a_stride, b_buffer,
      b_offset, b_ld, b_stride, beta, c_buffer, c_offset, c_ld, c_stride, batch_count, queue, event,
      [&] {
        return pre::call_real(real, layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer,
                              a_offset, a_ld, a_stride, b_buffer, b_offset, b_ld, b_stride, beta,
                              c_buffer, c_offset, c_ld, c_stride, batch_count, queue, event);
      }));
}

// The instantiations CLBlast's library exports for the real types (half is cl_half), visible
// whatever the templates' declarations say.
#define GEMMTUNE_VISIBLE __attribute__((visibility("default")))
#define GEMMTUNE_INSTANTIATE(T)                                                                    \
  template GEMMTUNE_VISIBLE StatusCode Gemm<T>(                                                    \
      const Layout, const Transpose, const Transpose, const size_t, const size_t, const size_t,    \
      const T, const cl_mem, const size_t, const size_t, const cl_mem, const size_t, const size_t, \
      const T, cl_mem, const size_t, const size_t, cl_command_queue*, cl_event*, cl_mem);          \
  template GEMMTUNE_VISIBLE StatusCode GemmBatched<T>(                                             \
      const Layout, const Transpose, const Transpose, const size_t, const size_t, const size_t,    \
      const T*, const cl_mem, const size_t*, const size_t, const cl_mem, const size_t*,            \
      const size_t, const T*, cl_mem, const size_t*, const size_t, const size_t,                   \
      cl_command_queue*, cl_event*);                                                               \
  template GEMMTUNE_VISIBLE StatusCode GemmStridedBatched<T>(                                      \
      const Layout, const Transpose, const Transpose, const size_t, const size_t, const size_t,    \
      const T, const cl_mem, const size_t, const size_t, const size_t, const cl_mem, const size_t, \
      const size_t, const size_t, const T, cl_mem, const size_t, const size_t, const size_t,       \
      const size_t, cl_command_queue*, cl_event*);
GEMMTUNE_INSTANTIATE(float)
GEMMTUNE_INSTANTIATE(double)
GEMMTUNE_INSTANTIATE(cl_half)
#undef GEMMTUNE_INSTANTIATE
#undef GEMMTUNE_VISIBLE

}  // namespace clblast
