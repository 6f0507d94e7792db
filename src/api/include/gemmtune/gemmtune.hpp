// SPDX-License-Identifier: Apache-2.0
// libgemmtune: the kernels gemmtune tuned, called from an application.
//
// The calls take OpenCL buffers, offsets and leading dimensions in the convention of the BLAS
// (and of CLBlast, so that switching is a change of namespace): Gemm<T>(layout, transpose a,
// transpose b, m, n, k, alpha, a, a_offset, a_ld, b, ..., beta, c, ..., &queue, &event). Nothing
// is thrown across this interface: every call returns a StatusCode, and LastErrorMessage() says
// why the last call of the calling thread failed.
//
// Which kernel and parameters run for a problem on a queue's device comes from, each layer
// overriding the one before: the template defaults and the databases compiled into the library,
// the system databases (share/gemmtune/databases/*.json of the installation), the databases the
// library's build embedded (GEMMTUNE_EMBED_DATABASES), and the user database (GEMMTUNE_DB, or
// SetDatabase). Explain() says which one was chosen and why.
//
// Calls from several threads are safe, also on one queue. Queues must be in-order: a call may
// enqueue several kernels that depend on each other (padding copies, the split-K reduction).
//
// Handles must be live: a null queue or buffer is refused (kInvalidArgument), but a released or
// never-created cl_mem, cl_command_queue or event pointer is undefined behaviour, as it is for
// OpenCL itself (the OpenCL loader may crash on it before gemmtune can check anything).
//
// Database files (GEMMTUNE_DB, SetDatabase, the system databases) are read only when they are
// regular files of at most 256 MiB; anything else (a folder, a device, a FIFO) is refused with
// kInvalidDatabase (SetDatabase) or ignored with a note (Explain), and the library goes on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "gemmtune/export.h"

namespace gemmtune {

enum class StatusCode : int {
  kSuccess = 0,
  kInvalidArgument = -1,          // a null queue or buffer, a bad enum value, ...
  kInvalidDimension = -2,         // m, n or k is zero, or a batch count of zero
  kInvalidLeadingDimension = -3,  // a leading dimension smaller than its matrix's rows/columns
  kBufferTooSmall = -4,           // a buffer smaller than offset + the matrix (or batch) needs
  kUnsupported = -5,              // the device lacks what the call needs (e.g. fp64), too large
  kNoConfiguration = -6,          // no configuration of any kernel runs this call on the device
  kDeviceFailure = -7,            // OpenCL reported an error
  kInvalidDatabase = -8,          // SetDatabase: a file that is not a readable gemmtune database
  kInternalError = -9,            // a bug in gemmtune
};

// The values CLBlast and the CBLAS use, so that a value passed through an int keeps its meaning.
enum class Layout { kRowMajor = 101, kColMajor = 102 };
enum class Transpose { kNo = 111, kYes = 112, kConjugate = 113 };  // kConjugate = kYes (real)

// Half-precision storage (IEEE 754 binary16, the bits of a cl_half). The kernels store A, B and C
// in half and compute in float (gemmtune's 16acc32 precision), so any OpenCL 1.2 device runs it.
struct half {
  uint16_t bits = 0;
};
GEMMTUNE_EXPORT half FloatToHalf(float value);  // rounds to nearest even
GEMMTUNE_EXPORT float HalfToFloat(half value);

// The fused epilogue: C = act(alpha * op(A) * op(B) + beta * C + bias), with `bias` (if not null)
// holding n values of the storage type, one per column of C, shared by every GEMM of a batch.
enum class EpilogueActivation { kNone, kRelu, kGelu };  // GELU in its tanh form
struct EpilogueOptions {
  cl_mem bias = nullptr;
  EpilogueActivation activation = EpilogueActivation::kNone;
};

// C = alpha * op(A) * op(B) + beta * C. Offsets and leading dimensions count elements; beta == 0
// does not read C (it may hold NaN), and alpha == 0 multiplies nothing of A and B (they may hold
// NaN: C becomes beta * C). With `event`, it receives an event that completes with the call
// (release it with clReleaseEvent).
template <typename T>
GEMMTUNE_EXPORT StatusCode Gemm(Layout layout, Transpose a_transpose, Transpose b_transpose,
                                size_t m, size_t n, size_t k, T alpha, const cl_mem a_buffer,
                                size_t a_offset, size_t a_ld, const cl_mem b_buffer,
                                size_t b_offset, size_t b_ld, T beta, cl_mem c_buffer,
                                size_t c_offset, size_t c_ld, cl_command_queue* queue,
                                cl_event* event = nullptr);

// Gemm followed by the fused epilogue, in one kernel.
template <typename T>
GEMMTUNE_EXPORT StatusCode GemmEpilogue(Layout layout, Transpose a_transpose, Transpose b_transpose,
                                        size_t m, size_t n, size_t k, T alpha,
                                        const cl_mem a_buffer, size_t a_offset, size_t a_ld,
                                        const cl_mem b_buffer, size_t b_offset, size_t b_ld, T beta,
                                        cl_mem c_buffer, size_t c_offset, size_t c_ld,
                                        const EpilogueOptions& epilogue, cl_command_queue* queue,
                                        cl_event* event = nullptr);

// `batch_count` GEMMs of one shape in one launch, GEMM i at offset + i * stride of each operand.
template <typename T>
GEMMTUNE_EXPORT StatusCode GemmStridedBatched(Layout layout, Transpose a_transpose,
                                              Transpose b_transpose, size_t m, size_t n, size_t k,
                                              T alpha, const cl_mem a_buffer, size_t a_offset,
                                              size_t a_ld, size_t a_stride, const cl_mem b_buffer,
                                              size_t b_offset, size_t b_ld, size_t b_stride, T beta,
                                              cl_mem c_buffer, size_t c_offset, size_t c_ld,
                                              size_t c_stride, size_t batch_count,
                                              cl_command_queue* queue, cl_event* event = nullptr);

// `batch_count` GEMMs of one shape in one launch, GEMM i at a_offsets[i], b_offsets[i] and
// c_offsets[i] of the operand buffers (OpenCL 1.2 passes no arrays of buffers to a kernel: one
// buffer per operand with per-GEMM offsets places the matrices as freely). One alpha and one
// beta for the whole batch.
template <typename T>
GEMMTUNE_EXPORT StatusCode GemmBatched(Layout layout, Transpose a_transpose, Transpose b_transpose,
                                       size_t m, size_t n, size_t k, T alpha, const cl_mem a_buffer,
                                       const size_t* a_offsets, size_t a_ld, const cl_mem b_buffer,
                                       const size_t* b_offsets, size_t b_ld, T beta,
                                       cl_mem c_buffer, const size_t* c_offsets, size_t c_ld,
                                       size_t batch_count, cl_command_queue* queue,
                                       cl_event* event = nullptr);

// Why the calling thread's last call that failed did so ("" when none did).
GEMMTUNE_EXPORT const char* LastErrorMessage();

// The user database, overriding the system and compiled-in ones: a gemmtune database file
// (`gemmtune search --db FILE`). An empty path removes it (GEMMTUNE_DB is then read again).
// Returns kInvalidDatabase, changing nothing, for a file that cannot be read as a database.
GEMMTUNE_EXPORT StatusCode SetDatabase(const std::string& path);

// Releases every cached program, kernel, workspace and the retained queues and contexts.
// Must not run while another thread is inside a gemmtune call.
GEMMTUNE_EXPORT void ClearCache();

enum class GemmPrecision { kSingle, kDouble, kHalf };  // kHalf: half storage, float arithmetic

// A problem as Explain and WarmUp take it.
struct GemmProblem {
  Layout layout = Layout::kRowMajor;
  Transpose a_transpose = Transpose::kNo, b_transpose = Transpose::kNo;
  size_t m = 0, n = 0, k = 0;
  GemmPrecision precision = GemmPrecision::kSingle;
  size_t batch_count = 1;
  bool offsets_batch = false;  // GemmBatched rather than GemmStridedBatched
  bool bias = false;
  EpilogueActivation activation = EpilogueActivation::kNone;
};

// Which configuration a call of `problem` on `queue`'s device would run, and why.
struct Explanation {
  std::string device;              // CL_DEVICE_NAME
  std::string profile;             // the device profile it matched ("generic" for none)
  std::string kernel;              // the kernel template, e.g. "xgemm_fast"
  std::string parameters;          // "MWG=64,NWG=64,..."
  std::string source;              // "user database", "embedded database", "system database",
                                   // "compiled-in database", "offline choice" (the device
                                   // profile's starting configuration: chosen offline, never
                                   // measured), "compiled-in default"
  std::string origin;              // the database file ("embedded/<file>" for an embedded one,
                                   // the profile file, "template defaults")
  std::string entry;               // the database entry used ("" for defaults)
  bool exact = false;              // the entry's shape is the problem's
  double distance = 0;             // log-space distance of the shapes when not exact
  double predicted_gflops = 0;     // the selection model's prediction for the problem (0: none)
  std::string reason;              // one line: the exact entry, the prediction and what it rests
                                   // on, or the safe path and why
  std::vector<std::string> alternatives;  // candidates the selection rejected, best first
  std::vector<std::string> notes;  // entries passed over and why (stale, another device, ...)
};
GEMMTUNE_EXPORT StatusCode Explain(const GemmProblem& problem, cl_command_queue queue,
                                   Explanation* explanation);

// Builds (or loads from the binary cache) the programs of `problems` on `queue`'s device ahead of
// the calls, so that the first call of each does not compile.
GEMMTUNE_EXPORT StatusCode WarmUp(cl_command_queue queue, const std::vector<GemmProblem>& problems);

// "kSuccess", "kInvalidArgument", ...
GEMMTUNE_EXPORT const char* StatusName(StatusCode status);

}  // namespace gemmtune
