// SPDX-License-Identifier: Apache-2.0
#include "src/preload/dispatch.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>

#include <clblast.h>

namespace gemmtune::preload {

namespace {

// The sources of Explain that name a database: the configuration was tuned (measured) for the
// device. The others ("compiled-in default": a template's defaults or the safe path; "offline
// choice": the profile's starting configuration) were never measured here, where CLBlast's own
// tuning is the better bet.
constexpr const char* kDatabaseSourceSuffix = " database";
constexpr const char* kHalfExtension = "cl_khr_fp16";
// Decisions kept at most (then forgotten, all at once): an application's distinct problems are
// few, but nothing bounds them.
constexpr size_t kMaxDecisions = 4096;
// Room for a number printed with %.3g.
constexpr size_t kNumberText = 32;

Mode read_mode() {
  const char* value = std::getenv(kModeVariable);
  if (!value || !*value || std::strcmp(value, "on") == 0) return Mode::kOn;
  if (std::strcmp(value, "off") == 0) return Mode::kOff;
  if (std::strcmp(value, "log") == 0) return Mode::kLog;
  std::fprintf(stderr,
               "gemmtune_clblast: %s=%s is not off, on or log; every GEMM call goes to CLBlast\n",
               kModeVariable, value);
  return Mode::kOff;
}

thread_local int forward_depth = 0;

int code(clblast::StatusCode status) {
  return static_cast<int>(status);
}

// "kBufferTooSmall (buffer A holds ...)": libgemmtune's status and its message.
std::string status_text(StatusCode status) {
  return std::string(StatusName(status)) + " (" + LastErrorMessage() + ")";
}

bool ends_with(const std::string& text, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return text.size() >= n && text.compare(text.size() - n, n, suffix) == 0;
}

bool device_has(cl_command_queue queue, const char* extension) {
  cl_device_id device = nullptr;
  size_t size = 0;
  if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr) !=
          CL_SUCCESS ||
      clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size) != CL_SUCCESS) {
    return false;
  }
  std::string extensions(size, '\0');
  if (clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, extensions.data(), nullptr) !=
      CL_SUCCESS) {
    return false;
  }
  extensions = " " + std::string(extensions.c_str()) + " ";
  return extensions.find(std::string(" ") + extension + " ") != std::string::npos;
}

bool tuned(const Explanation& why) {
  return ends_with(why.source, kDatabaseSourceSuffix);
}

std::string served_by(const Explanation& why) {
  std::string text = why.kernel + " from the " + why.source + " " + why.origin;
  if (why.exact) return text + ", exact entry";
  text += ", model pick from entry " + why.entry;
  if (why.predicted_gflops > 0) {
    char gflops[kNumberText];
    std::snprintf(gflops, sizeof gflops, "%.3g", why.predicted_gflops);
    text += std::string(" (predicted ") + gflops + " GFLOPS)";
  }
  return text;
}

std::string not_tuned(const Explanation& why) {
  return "no tuned configuration (" + why.source + ": " + why.reason + ")";
}

GemmProblem problem_of(const Call& call) {
  GemmProblem problem;
  problem.layout = static_cast<Layout>(call.layout);
  problem.a_transpose = static_cast<Transpose>(call.a_transpose);
  problem.b_transpose = static_cast<Transpose>(call.b_transpose);
  problem.m = call.m;
  problem.n = call.n;
  problem.k = call.k;
  problem.precision = call.precision;
  problem.batch_count = call.batch_count;
  problem.offsets_batch = call.offsets_batch;
  return problem;
}

// The decision for `call`; `keep` tells whether it may be kept for the queue's later calls.
Decision judge(const Call& call, bool* keep) {
  *keep = false;
  const cl_command_queue queue = *call.queue;
  const GemmProblem problem = problem_of(call);
  Explanation why;
  StatusCode status = Explain(problem, queue, &why);
  if (status != StatusCode::kSuccess) {
    return {false, "libgemmtune cannot take it: " + status_text(status)};
  }
  *keep = true;  // libgemmtune now holds the queue
  if (call.precision == GemmPrecision::kHalf && !device_has(queue, kHalfExtension)) {
    // gemmtune's half computes in float and runs anywhere; CLBlast refuses such a device, and
    // an application may count on that refusal to take another path.
    return {false, std::string("the device has no ") + kHalfExtension + ": CLBlast's answer"};
  }
  if (!tuned(why)) return {false, not_tuned(why)};
  // Built now, so that a tuned configuration the device cannot build is known before the call.
  status = WarmUp(queue, {problem});
  if (status != StatusCode::kSuccess) {
    return {false, "libgemmtune could not build it: " + status_text(status)};
  }
  status = Explain(problem, queue, &why);  // the configuration that built
  if (status != StatusCode::kSuccess) {
    return {false, "libgemmtune cannot take it: " + status_text(status)};
  }
  if (!tuned(why)) return {false, "the tuned configuration did not build; " + not_tuned(why)};
  return {true, served_by(why)};
}

struct Key {
  cl_command_queue queue;
  GemmPrecision precision;
  int layout, a_transpose, b_transpose;
  size_t m, n, k, batch_count;
  bool offsets_batch;

  bool operator==(const Key& o) const {
    return queue == o.queue && precision == o.precision && layout == o.layout &&
           a_transpose == o.a_transpose && b_transpose == o.b_transpose && m == o.m && n == o.n &&
           k == o.k && batch_count == o.batch_count && offsets_batch == o.offsets_batch;
  }
};

struct KeyHash {
  size_t operator()(const Key& key) const {
    size_t h = std::hash<const void*>()(key.queue);
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (size_t v :
         {static_cast<size_t>(key.precision), static_cast<size_t>(key.layout),
          static_cast<size_t>(key.a_transpose), static_cast<size_t>(key.b_transpose), key.m, key.n,
          key.k, key.batch_count, static_cast<size_t>(key.offsets_batch)}) {
      mix(v);
    }
    return h;
  }
};

struct Decisions {
  std::mutex mutex;
  std::unordered_map<Key, Decision, KeyHash> kept;  // guarded by mutex
};

Decisions& decisions() {
  // Never destroyed: an application's threads may still call while the process exits.
  static Decisions* d = new Decisions;
  return *d;
}

const char* layout_name(int layout) {
  return layout == static_cast<int>(Layout::kRowMajor)   ? "row"
         : layout == static_cast<int>(Layout::kColMajor) ? "col"
                                                         : "layout?";
}

char transpose_letter(int transpose) {
  return transpose == static_cast<int>(Transpose::kNo)          ? 'N'
         : transpose == static_cast<int>(Transpose::kYes)       ? 'T'
         : transpose == static_cast<int>(Transpose::kConjugate) ? 'C'
                                                                : '?';
}

}  // namespace

Mode mode() {
  static const Mode m = read_mode();
  return m;
}

Decision decide(const Call& call) {
  if (!call.queue || !*call.queue) return {false, "no command queue"};
  const Key key{*call.queue, call.precision, call.layout, call.a_transpose, call.b_transpose,
                call.m,      call.n,         call.k,      call.batch_count, call.offsets_batch};
  Decisions& d = decisions();
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (auto it = d.kept.find(key); it != d.kept.end()) return it->second;
  }
  // Judged outside the lock (it may build a program); two threads judging one problem at once
  // come to the same decision.
  bool keep = false;
  Decision decision = judge(call, &keep);
  if (keep) {
    std::lock_guard<std::mutex> lock(d.mutex);
    if (d.kept.size() >= kMaxDecisions) d.kept.clear();
    d.kept.emplace(key, decision);
  }
  return decision;
}

bool forwarding() {
  return forward_depth > 0;
}

ForwardScope::ForwardScope() {
  ++forward_depth;
}

ForwardScope::~ForwardScope() {
  --forward_depth;
}

int clblast_status(std::optional<StatusCode> status, GemmPrecision precision) {
  using clblast::StatusCode;
  if (!status) return code(StatusCode::kNotImplemented);
  switch (*status) {
    case gemmtune::StatusCode::kSuccess:
      return code(StatusCode::kSuccess);
    case gemmtune::StatusCode::kInvalidArgument:
      return code(StatusCode::kInvalidValue);
    case gemmtune::StatusCode::kInvalidDimension:
      return code(StatusCode::kInvalidDimension);
    // libgemmtune's statuses name no operand; CLBlast's first is A's.
    case gemmtune::StatusCode::kInvalidLeadingDimension:
      return code(StatusCode::kInvalidLeadDimA);
    case gemmtune::StatusCode::kBufferTooSmall:
      return code(StatusCode::kInsufficientMemoryA);
    case gemmtune::StatusCode::kUnsupported:
      return precision == GemmPrecision::kDouble ? code(StatusCode::kNoDoublePrecision)
             : precision == GemmPrecision::kHalf ? code(StatusCode::kNoHalfPrecision)
                                                 : code(StatusCode::kNotImplemented);
    case gemmtune::StatusCode::kNoConfiguration:
      return code(StatusCode::kNotImplemented);
    case gemmtune::StatusCode::kDeviceFailure:
      return code(StatusCode::kUnknownError);
    case gemmtune::StatusCode::kInvalidDatabase:
    case gemmtune::StatusCode::kInternalError:
      break;
  }
  return code(StatusCode::kUnexpectedError);
}

void report(const Call& call, const char* server, const std::string& detail) {
  std::string line = std::string("gemmtune_clblast: ") + call.entry + " " +
                     layout_name(call.layout) + " " + transpose_letter(call.a_transpose) +
                     transpose_letter(call.b_transpose) + " " + std::to_string(call.m) + "x" +
                     std::to_string(call.n) + "x" + std::to_string(call.k);
  if (call.batched) line += " batch " + std::to_string(call.batch_count);
  line += ": " + std::string(server) + ": " + detail + "\n";
  std::fputs(line.c_str(), stderr);  // one write per line: lines of several threads never mix
}

std::string refusal_of(StatusCode status) {
  return "libgemmtune refused it: " + status_text(status);
}

}  // namespace gemmtune::preload
