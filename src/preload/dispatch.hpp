// SPDX-License-Identifier: Apache-2.0
// Who serves a CLBlast GEMM call made through libgemmtune_clblast: libgemmtune, where it holds a
// tuned configuration for the problem on the queue's device and takes the arguments, else the
// real CLBlast, with CLBlast's own result. GEMMTUNE_CLBLAST chooses the mode: "off" passes every
// call to CLBlast; "on" (the default, also when unset or empty) serves as above; "log" does the
// same and prints one line per call on stderr naming who served it and why.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "gemmtune/gemmtune.hpp"

namespace gemmtune::preload {

inline constexpr const char* kModeVariable = "GEMMTUNE_CLBLAST";

enum class Mode { kOff, kOn, kLog };
// The mode GEMMTUNE_CLBLAST gives, read once. A value other than off, on and log is reported in
// one line and taken as off: a misspelt setting must not change what the application computes.
Mode mode();

// A GEMM call as the application made it; the layout and transposes are CLBlast's values, which
// gemmtune's enums share (101/102, 111/112/113).
struct Call {
  const char* entry = "";  // "CLBlastSgemm", "clblast::GemmBatched<double>", ...
  GemmPrecision precision = GemmPrecision::kSingle;
  int layout = 0, a_transpose = 0, b_transpose = 0;
  size_t m = 0, n = 0, k = 0;
  size_t batch_count = 1;
  bool batched = false;        // a batched entry point (the log names the batch)
  bool offsets_batch = false;  // GemmBatched rather than GemmStridedBatched
  cl_command_queue* queue = nullptr;
};

// Whether libgemmtune serves a call, and what serves it or why CLBlast does (the log's words).
struct Decision {
  bool serve = false;
  std::string detail;
};

// The decision for `call` before any argument other than its problem and queue is looked at:
// served where the configuration libgemmtune would run comes from a database (tuned, measured)
// and builds on the device; passed on where it is the safe path, a template's defaults or the
// profile's offline choice, where the device lacks what CLBlast needs for the precision, or where
// libgemmtune cannot take the problem. Kept per queue and problem once libgemmtune knows the
// queue: it then holds a reference, so the handle names the same queue until the process ends (or
// a ClearCache, which an application of CLBlast does not call).
Decision decide(const Call& call);

// True inside a call passed on to CLBlast: CLBlast's C entry points call its C++ ones through
// the dynamic linker, which finds this library's first; such a call goes straight on to CLBlast.
bool forwarding();

// Marks the calling thread as inside a call passed on to CLBlast while it lives.
class ForwardScope {
 public:
  ForwardScope();
  ~ForwardScope();
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;
};

// The CLBlast status for a call that neither libgemmtune nor CLBlast could serve (no CLBlast in
// the process): the nearest to libgemmtune's `status`, kNotImplemented where it had none.
int clblast_status(std::optional<StatusCode> status, GemmPrecision precision);

// One line on stderr: `call` served by `server` ("gemmtune" or "CLBlast") and why.
void report(const Call& call, const char* server, const std::string& detail);

// "libgemmtune refused it: " and libgemmtune's status and message (of the calling thread's last
// call).
std::string refusal_of(StatusCode status);

// CLBlast's kSuccess.
inline constexpr int kClblastSuccess = 0;

// Runs `call` through libgemmtune (`serve`, returning its StatusCode) or the real CLBlast
// (`forward`, returning CLBlast's status, or nothing when no CLBlast has the entry point), as
// decide() and the mode say; `refusal` (may be null) says why this call goes to CLBlast whatever
// the databases hold. A call libgemmtune refuses goes on to CLBlast: libgemmtune checks its
// arguments before it enqueues anything, and where a launch fails, the launches before it (copies
// into padded buffers, partial products) have not written C.
template <typename Serve, typename Forward>
int dispatch(const Call& call, const char* refusal, Serve&& serve, Forward&& forward) {
  const auto pass_on = [&](std::optional<StatusCode> refused) {
    ForwardScope scope;
    const std::optional<int> status = forward();
    return status ? *status : clblast_status(refused, call.precision);
  };
  if (forwarding()) return pass_on(std::nullopt);
  const Mode m = mode();
  if (m == Mode::kOff) return pass_on(std::nullopt);
  Decision decision = refusal ? Decision{false, refusal} : decide(call);
  std::optional<StatusCode> refused;
  if (decision.serve) {
    const StatusCode status = serve();
    if (status == StatusCode::kSuccess) {
      if (m == Mode::kLog) report(call, "gemmtune", decision.detail);
      return kClblastSuccess;
    }
    refused = status;
    decision.detail = refusal_of(status);
  }
  const int status = pass_on(refused);
  if (m == Mode::kLog) {
    report(call, "CLBlast", decision.detail + "; status " + std::to_string(status));
  }
  return status;
}

}  // namespace gemmtune::preload
