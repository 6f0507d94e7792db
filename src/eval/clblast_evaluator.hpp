// SPDX-License-Identifier: Apache-2.0
// An evaluator that tunes CLBlast's own GEMM kernels: it installs a configuration with
// clblast::OverrideParameters, times the whole clblast::Gemm call and verifies the output against
// the Eigen reference. The kernel specs clblast-xgemm and clblast-xgemm-direct describe the
// spaces; available only when gemmtune is built with CLBlast.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/eval/evaluator_factory.hpp"
#include "src/kernel/kernel_spec.hpp"

#ifdef GEMMTUNE_HAVE_CLBLAST
#include <clblast.h>
#endif

namespace gemmtune {

// Whether this build links CLBlast.
bool clblast_available();

// A CLBlast status code by name, e.g. "kNoHalfPrecision (-2045)", so that a failed call can be
// reported in words; an unknown code is given as its number. Available without CLBlast too.
std::string clblast_status_name(int status);

#ifdef GEMMTUNE_HAVE_CLBLAST
// CLBlast's precision for `p` (single for 16acc32, which CLBlast does not have).
clblast::Precision clblast_precision(Precision p);
#endif

// While alive, the process's stdout goes to stderr. CLBlast prints compiler logs on stdout, which
// carries gemmtune's tables and JSON; its calls that may compile are made under one of these.
class StdoutToStderr {
 public:
  StdoutToStderr();
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

// The evaluator of `spec` (a clblast-backend declaration) on `device`. Throws
// Error(kUnsupported) when gemmtune was built without CLBlast. `profile` may be null.
std::unique_ptr<DeviceEvaluator> make_clblast_evaluator(KernelSpec spec, const Device& device,
                                                        const DeviceProfile* profile,
                                                        const EvaluatorOptions& options);

}  // namespace gemmtune
