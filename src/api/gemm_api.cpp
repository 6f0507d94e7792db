// SPDX-License-Identifier: Apache-2.0
// The C++ interface (gemmtune/gemmtune.hpp): checks the arguments in the caller's terms, maps
// them onto a Problem and GemmBuffers and hands them to the runtime. Every failure becomes a
// StatusCode here; nothing is thrown past these functions.
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "gemmtune/gemmtune.hpp"
#include "src/api/runtime.hpp"
#include "src/core/error.hpp"

namespace gemmtune {

namespace {

thread_local std::string last_error;

StatusCode status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return StatusCode::kInvalidArgument;
    case ErrorCode::kDevice:
      return StatusCode::kDeviceFailure;
    case ErrorCode::kUnsupported:
      return StatusCode::kUnsupported;
    default:
      return StatusCode::kInternalError;
  }
}

// Runs `body`, turning every exception into a status and the thread's last error message.
template <typename F>
StatusCode guarded(F&& body) {
  auto fail = [](StatusCode code, const std::string& message) {
    last_error = message;
    return code;
  };
  try {
    body();
    return StatusCode::kSuccess;
  } catch (const api::ApiError& e) {
    return fail(e.code(), e.what());
  } catch (const cl::Error& e) {
    return fail(StatusCode::kDeviceFailure,
                std::string("OpenCL error in ") + e.what() + ": " + cl_error_name(e.err()));
  } catch (const Error& e) {
    return fail(status_of(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(StatusCode::kInternalError, "out of host memory");
  } catch (const std::exception& e) {
    return fail(StatusCode::kInternalError, e.what());
  } catch (...) {
    return fail(StatusCode::kInternalError, "unknown exception");
  }
}

Activation internal(EpilogueActivation a) {
  return a == EpilogueActivation::kRelu   ? Activation::kRelu
         : a == EpilogueActivation::kGelu ? Activation::kGelu
                                          : Activation::kNone;
}

[[noreturn]] void refuse(StatusCode code, const std::string& message) {
  throw api::ApiError(code, message);
}

template <typename T>
struct Storage;
template <>
struct Storage<float> {
  static constexpr Precision precision = Precision::kFP32;
  static double value(float v) { return v; }
};
template <>
struct Storage<double> {
  static constexpr Precision precision = Precision::kFP64;
  static double value(double v) { return v; }
};
template <>
struct Storage<half> {
  static constexpr Precision precision = Precision::kFP16Acc32;
  static double value(half v) { return HalfToFloat(v); }
};

// Everything a call names, in the caller's terms.
struct Args {
  Layout layout = Layout::kRowMajor;
  Transpose a_transpose = Transpose::kNo, b_transpose = Transpose::kNo;
  size_t m = 0, n = 0, k = 0;
  double alpha = 1, beta = 0;
  Precision precision = Precision::kFP32;
  cl_mem a = nullptr, b = nullptr, c = nullptr;
  size_t a_offset = 0, b_offset = 0, c_offset = 0;
  size_t a_ld = 0, b_ld = 0, c_ld = 0;
  size_t a_stride = 0, b_stride = 0, c_stride = 0;
  size_t batch = 1;
  const size_t *a_offsets = nullptr, *b_offsets = nullptr, *c_offsets = nullptr;
  bool offsets_batch = false;
  EpilogueOptions epilogue;
  cl_command_queue* queue = nullptr;
  cl_event* event = nullptr;
};

bool transposed(Transpose t) {
  return t != Transpose::kNo;
}

// The element counts no call can index with the kernels' 32-bit ints; beyond them sizes would
// also overflow the arithmetic below.
constexpr size_t kLimit = size_t(1) << 40;

size_t buffer_bytes(cl_mem buffer, const char* name) {
  size_t bytes = 0;
  const cl_int err = clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr);
  if (err != CL_SUCCESS) {
    refuse(StatusCode::kInvalidArgument,
           fmt::format("{} is not a valid OpenCL buffer ({})", name, cl_error_name(err)));
  }
  return bytes;
}

// What every call and WarmUp refuse alike, before any buffer is looked at: enum values outside
// their enums, zero sizes, sizes no kernel indexes.
void check_problem(Layout layout, Transpose a_transpose, Transpose b_transpose, size_t m, size_t n,
                   size_t k, size_t batch, EpilogueActivation act) {
  if (layout != Layout::kRowMajor && layout != Layout::kColMajor) {
    refuse(StatusCode::kInvalidArgument, "layout is neither kRowMajor nor kColMajor");
  }
  for (Transpose t : {a_transpose, b_transpose}) {
    if (t != Transpose::kNo && t != Transpose::kYes && t != Transpose::kConjugate) {
      refuse(StatusCode::kInvalidArgument, "a transpose is not kNo, kYes or kConjugate");
    }
  }
  if (m == 0 || n == 0 || k == 0 || batch == 0) {
    refuse(StatusCode::kInvalidDimension,
           fmt::format("m, n, k and the batch count must be positive (m={} n={} k={} batch={})", m,
                       n, k, batch));
  }
  for (size_t v : {m, n, k, batch}) {
    if (v >= kLimit) refuse(StatusCode::kUnsupported, "a size or batch count beyond 2^40");
  }
  if (act != EpilogueActivation::kNone && act != EpilogueActivation::kRelu &&
      act != EpilogueActivation::kGelu) {
    refuse(StatusCode::kInvalidArgument, "an unknown activation");
  }
}

void execute(const Args& x) {
  if (!x.queue || !*x.queue) refuse(StatusCode::kInvalidArgument, "no command queue");
  const auto act = x.epilogue.activation;
  check_problem(x.layout, x.a_transpose, x.b_transpose, x.m, x.n, x.k, x.batch, act);
  for (size_t v : {x.a_ld, x.b_ld, x.c_ld, x.a_stride, x.b_stride, x.c_stride, x.a_offset,
                   x.b_offset, x.c_offset}) {
    if (v >= kLimit) refuse(StatusCode::kUnsupported, "a size, offset or stride beyond 2^40");
  }
  if (!x.a || !x.b || !x.c) refuse(StatusCode::kInvalidArgument, "a null buffer");
  if (x.offsets_batch && (!x.a_offsets || !x.b_offsets || !x.c_offsets)) {
    refuse(StatusCode::kInvalidArgument, "a batch of offsets needs the offsets of A, B and C");
  }

  const bool row = x.layout == Layout::kRowMajor;
  const bool ta = transposed(x.a_transpose), tb = transposed(x.b_transpose);
  // Each operand as stored: rows x cols in the caller's layout, and its leading dimension.
  struct Stored {
    const char* name;
    cl_mem buffer;
    size_t rows, cols, ld, offset, stride;
    const size_t* offsets;
  };
  const Stored operands[] = {
      {"A", x.a, ta ? x.k : x.m, ta ? x.m : x.k, x.a_ld, x.a_offset, x.a_stride, x.a_offsets},
      {"B", x.b, tb ? x.n : x.k, tb ? x.k : x.n, x.b_ld, x.b_offset, x.b_stride, x.b_offsets},
      {"C", x.c, x.m, x.n, x.c_ld, x.c_offset, x.c_stride, x.c_offsets}};
  const size_t element = static_cast<size_t>(element_bytes(x.precision));
  for (const Stored& o : operands) {
    const size_t line = row ? o.cols : o.rows;  // the length the leading dimension spans
    const size_t lines = row ? o.rows : o.cols;
    if (o.ld < line) {
      refuse(StatusCode::kInvalidLeadingDimension,
             fmt::format("the leading dimension of {} is {}, smaller than the {} it needs", o.name,
                         o.ld, line));
    }
    size_t first = o.offset;  // the first element of the last GEMM of the batch
    if (x.offsets_batch) {
      first = 0;
      for (size_t e = 0; e < x.batch; ++e) {
        if (o.offsets[e] >= kLimit) refuse(StatusCode::kUnsupported, "an offset beyond 2^40");
        first = std::max(first, o.offsets[e]);
      }
    } else {
      first += (x.batch - 1) * o.stride;
    }
    const size_t needed = (first + (lines - 1) * o.ld + line) * element;
    const size_t have = buffer_bytes(o.buffer, o.name);
    if (have < needed) {
      refuse(StatusCode::kBufferTooSmall,
             fmt::format("buffer {} holds {} bytes; the call reads up to byte {}", o.name, have,
                         needed));
    }
  }
  if (x.epilogue.bias && buffer_bytes(x.epilogue.bias, "the bias") < x.n * element) {
    refuse(StatusCode::kBufferTooSmall, fmt::format("the bias buffer holds fewer than n = {} "
                                                    "elements",
                                                    x.n));
  }

  Problem p;
  p.shape = {static_cast<int64_t>(x.m), static_cast<int64_t>(x.n), static_cast<int64_t>(x.k)};
  p.order = row ? Order::kRowMajor : Order::kColMajor;
  p.trans_a = ta;
  p.trans_b = tb;
  p.alpha = x.alpha;
  p.beta = x.beta;
  p.precision = x.precision;
  p.batch = static_cast<int64_t>(x.batch);
  p.batch_layout = x.offsets_batch && x.batch > 1 ? BatchLayout::kOffsets : BatchLayout::kStrided;
  p.epilogue.bias = x.epilogue.bias != nullptr;
  p.epilogue.activation = internal(act);

  GemmBuffers g;
  g.a = x.a;
  g.b = x.b;
  g.c = x.c;
  g.lda = static_cast<int64_t>(x.a_ld);
  g.ldb = static_cast<int64_t>(x.b_ld);
  g.ldc = static_cast<int64_t>(x.c_ld);
  g.bias = x.epilogue.bias;
  if (x.offsets_batch) {
    if (x.batch > 1) {
      g.a_offsets.assign(x.a_offsets, x.a_offsets + x.batch);
      g.b_offsets.assign(x.b_offsets, x.b_offsets + x.batch);
      g.c_offsets.assign(x.c_offsets, x.c_offsets + x.batch);
    } else {  // a batch of one is a single GEMM at the given offsets
      g.a_offset = static_cast<int64_t>(x.a_offsets[0]);
      g.b_offset = static_cast<int64_t>(x.b_offsets[0]);
      g.c_offset = static_cast<int64_t>(x.c_offsets[0]);
    }
  } else {
    g.a_offset = static_cast<int64_t>(x.a_offset);
    g.b_offset = static_cast<int64_t>(x.b_offset);
    g.c_offset = static_cast<int64_t>(x.c_offset);
    g.a_stride = static_cast<int64_t>(x.a_stride);
    g.b_stride = static_cast<int64_t>(x.b_stride);
    g.c_stride = static_cast<int64_t>(x.c_stride);
  }
  api::run(*x.queue, p, g, x.event);
}

template <typename T>
Args common(Layout layout, Transpose a_transpose, Transpose b_transpose, size_t m, size_t n,
            size_t k, T alpha, T beta, cl_command_queue* queue, cl_event* event) {
  Args x;
  x.layout = layout;
  x.a_transpose = a_transpose;
  x.b_transpose = b_transpose;
  x.m = m;
  x.n = n;
  x.k = k;
  x.alpha = Storage<T>::value(alpha);
  x.beta = Storage<T>::value(beta);
  x.precision = Storage<T>::precision;
  x.queue = queue;
  x.event = event;
  return x;
}

// The buffers and leading dimensions every form of the call names.
void operands(Args& x, cl_mem a, size_t a_ld, cl_mem b, size_t b_ld, cl_mem c, size_t c_ld) {
  x.a = a;
  x.b = b;
  x.c = c;
  x.a_ld = a_ld;
  x.b_ld = b_ld;
  x.c_ld = c_ld;
}

void offsets(Args& x, size_t a_offset, size_t b_offset, size_t c_offset) {
  x.a_offset = a_offset;
  x.b_offset = b_offset;
  x.c_offset = c_offset;
}

Problem internal_problem(const GemmProblem& q) {
  check_problem(q.layout, q.a_transpose, q.b_transpose, q.m, q.n, q.k, q.batch_count, q.activation);
  if (q.precision != GemmPrecision::kSingle && q.precision != GemmPrecision::kDouble &&
      q.precision != GemmPrecision::kHalf) {
    refuse(StatusCode::kInvalidArgument, "precision is not kSingle, kDouble or kHalf");
  }
  Problem p;
  p.shape = {static_cast<int64_t>(q.m), static_cast<int64_t>(q.n), static_cast<int64_t>(q.k)};
  p.order = q.layout == Layout::kColMajor ? Order::kColMajor : Order::kRowMajor;
  p.trans_a = transposed(q.a_transpose);
  p.trans_b = transposed(q.b_transpose);
  p.precision = q.precision == GemmPrecision::kDouble ? Precision::kFP64
                : q.precision == GemmPrecision::kHalf ? Precision::kFP16Acc32
                                                      : Precision::kFP32;
  p.batch = static_cast<int64_t>(q.batch_count);
  p.batch_layout =
      q.offsets_batch && q.batch_count > 1 ? BatchLayout::kOffsets : BatchLayout::kStrided;
  p.epilogue.bias = q.bias;
  p.epilogue.activation = internal(q.activation);
  return p;
}

}  // namespace

template <typename T>
StatusCode Gemm(Layout layout, Transpose a_transpose, Transpose b_transpose, size_t m, size_t n,
                size_t k, T alpha, const cl_mem a_buffer, size_t a_offset, size_t a_ld,
                const cl_mem b_buffer, size_t b_offset, size_t b_ld, T beta, cl_mem c_buffer,
                size_t c_offset, size_t c_ld, cl_command_queue* queue, cl_event* event) {
  return GemmEpilogue<T>(layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer, a_offset, a_ld,
                         b_buffer, b_offset, b_ld, beta, c_buffer, c_offset, c_ld,
                         EpilogueOptions{}, queue, event);
}

template <typename T>
StatusCode GemmEpilogue(Layout layout, Transpose a_transpose, Transpose b_transpose, size_t m,
                        size_t n, size_t k, T alpha, const cl_mem a_buffer, size_t a_offset,
                        size_t a_ld, const cl_mem b_buffer, size_t b_offset, size_t b_ld, T beta,
                        cl_mem c_buffer, size_t c_offset, size_t c_ld,
                        const EpilogueOptions& epilogue, cl_command_queue* queue, cl_event* event) {
  return guarded([&] {
    Args x = common(layout, a_transpose, b_transpose, m, n, k, alpha, beta, queue, event);
    operands(x, a_buffer, a_ld, b_buffer, b_ld, c_buffer, c_ld);
    offsets(x, a_offset, b_offset, c_offset);
    x.epilogue = epilogue;
    execute(x);
  });
}

template <typename T>
StatusCode GemmStridedBatched(Layout layout, Transpose a_transpose, Transpose b_transpose, size_t m,
                              size_t n, size_t k, T alpha, const cl_mem a_buffer, size_t a_offset,
                              size_t a_ld, size_t a_stride, const cl_mem b_buffer, size_t b_offset,
                              size_t b_ld, size_t b_stride, T beta, cl_mem c_buffer,
                              size_t c_offset, size_t c_ld, size_t c_stride, size_t batch_count,
                              cl_command_queue* queue, cl_event* event) {
  return guarded([&] {
    Args x = common(layout, a_transpose, b_transpose, m, n, k, alpha, beta, queue, event);
    operands(x, a_buffer, a_ld, b_buffer, b_ld, c_buffer, c_ld);
    offsets(x, a_offset, b_offset, c_offset);
    x.a_stride = a_stride;
    x.b_stride = b_stride;
    x.c_stride = c_stride;
    x.batch = batch_count;
    execute(x);
  });
}

template <typename T>
StatusCode GemmBatched(Layout layout, Transpose a_transpose, Transpose b_transpose, size_t m,
                       size_t n, size_t k, T alpha, const cl_mem a_buffer, const size_t* a_offsets,
                       size_t a_ld, const cl_mem b_buffer, const size_t* b_offsets, size_t b_ld,
                       T beta, cl_mem c_buffer, const size_t* c_offsets, size_t c_ld,
                       size_t batch_count, cl_command_queue* queue, cl_event* event) {
  return guarded([&] {
    Args x = common(layout, a_transpose, b_transpose, m, n, k, alpha, beta, queue, event);
    operands(x, a_buffer, a_ld, b_buffer, b_ld, c_buffer, c_ld);
    x.a_offsets = a_offsets;
    x.b_offsets = b_offsets;
    x.c_offsets = c_offsets;
    x.batch = batch_count;
    x.offsets_batch = true;
    execute(x);
  });
}

#define GEMMTUNE_INSTANTIATE(T)                                                                \
  template GEMMTUNE_EXPORT StatusCode Gemm<T>(                                                 \
      Layout, Transpose, Transpose, size_t, size_t, size_t, T, const cl_mem, size_t, size_t,   \
      const cl_mem, size_t, size_t, T, cl_mem, size_t, size_t, cl_command_queue*, cl_event*);  \
  template GEMMTUNE_EXPORT StatusCode GemmEpilogue<T>(                                         \
      Layout, Transpose, Transpose, size_t, size_t, size_t, T, const cl_mem, size_t, size_t,   \
      const cl_mem, size_t, size_t, T, cl_mem, size_t, size_t, const EpilogueOptions&,         \
      cl_command_queue*, cl_event*);                                                           \
  template GEMMTUNE_EXPORT StatusCode GemmStridedBatched<T>(                                   \
      Layout, Transpose, Transpose, size_t, size_t, size_t, T, const cl_mem, size_t, size_t,   \
      size_t, const cl_mem, size_t, size_t, size_t, T, cl_mem, size_t, size_t, size_t, size_t, \
      cl_command_queue*, cl_event*);                                                           \
  template GEMMTUNE_EXPORT StatusCode GemmBatched<T>(                                          \
      Layout, Transpose, Transpose, size_t, size_t, size_t, T, const cl_mem, const size_t*,    \
      size_t, const cl_mem, const size_t*, size_t, T, cl_mem, const size_t*, size_t, size_t,   \
      cl_command_queue*, cl_event*);
GEMMTUNE_INSTANTIATE(float)
GEMMTUNE_INSTANTIATE(double)
GEMMTUNE_INSTANTIATE(half)
#undef GEMMTUNE_INSTANTIATE

const char* LastErrorMessage() {
  return last_error.c_str();
}

StatusCode SetDatabase(const std::string& path) {
  return guarded([&] {
    try {
      api::set_user_database(path);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kInvalidFile) throw;
      refuse(StatusCode::kInvalidDatabase, e.what());
    }
  });
}

void ClearCache() {
  guarded([] { api::clear_all(); });
}

StatusCode Explain(const GemmProblem& problem, cl_command_queue queue, Explanation* explanation) {
  return guarded([&] {
    if (!queue || !explanation) refuse(StatusCode::kInvalidArgument, "no queue or no output");
    const api::Explained e = api::explain(queue, internal_problem(problem));
    Explanation out;
    out.device = e.device.name;
    out.profile = e.device.profile;
    out.kernel = e.choice.spec->name();
    out.parameters = to_string(e.choice.config);
    out.source = e.choice.source;
    out.origin = e.choice.origin;
    out.entry = e.choice.entry;
    out.exact = e.choice.exact;
    out.distance = e.choice.distance;
    out.predicted_gflops = e.choice.predicted_gflops;
    out.reason = e.choice.reason;
    out.alternatives = e.choice.alternatives;
    out.notes = e.notes;
    if (!e.choice.relaxed.empty()) {
      out.notes.push_back("the entry differs from the problem in: " + e.choice.relaxed);
    }
    *explanation = std::move(out);
  });
}

StatusCode WarmUp(cl_command_queue queue, const std::vector<GemmProblem>& problems) {
  return guarded([&] {
    if (!queue) refuse(StatusCode::kInvalidArgument, "no queue");
    for (const auto& q : problems) api::warm_up(queue, internal_problem(q));
  });
}

const char* StatusName(StatusCode status) {
  switch (status) {
    case StatusCode::kSuccess:
      return "kSuccess";
    case StatusCode::kInvalidArgument:
      return "kInvalidArgument";
    case StatusCode::kInvalidDimension:
      return "kInvalidDimension";
    case StatusCode::kInvalidLeadingDimension:
      return "kInvalidLeadingDimension";
    case StatusCode::kBufferTooSmall:
      return "kBufferTooSmall";
    case StatusCode::kUnsupported:
      return "kUnsupported";
    case StatusCode::kNoConfiguration:
      return "kNoConfiguration";
    case StatusCode::kDeviceFailure:
      return "kDeviceFailure";
    case StatusCode::kInvalidDatabase:
      return "kInvalidDatabase";
    case StatusCode::kInternalError:
      return "kInternalError";
  }
  return "unknown status";
}

}  // namespace gemmtune
