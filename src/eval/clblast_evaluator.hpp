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
#include "src/eval/evaluator.hpp"

namespace gemmtune {

struct ClblastEvaluatorOptions {
  std::string templates_dir;  // where clblast-xgemm.json and clblast-xgemm-direct.json live
  int warmup_runs = 1;
  int min_runs = 3;  // repetitions until both min_runs and min_time_ms are reached
  double min_time_ms = 20.0;
  int max_runs = 200;
  uint64_t data_seed = 42;
};

// Whether `kernel` names a CLBlast kernel spec ("clblast-xgemm", "clblast-xgemm-direct").
bool is_clblast_kernel(const std::string& kernel);

// Whether this build links CLBlast.
bool clblast_available();

// A CLBlast status code by name, e.g. "kNoHalfPrecision (-2045)", so that a failed call can be
// reported in words; an unknown code is given as its number. Available without CLBlast too.
std::string clblast_status_name(int status);

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

// The evaluator for the clblast-* kernels on `device`. Throws Error(kUnsupported) when gemmtune
// was built without CLBlast. `profile` may be null.
std::unique_ptr<Evaluator> make_clblast_evaluator(const Device& device,
                                                  const DeviceProfile* profile,
                                                  ClblastEvaluatorOptions options);

}  // namespace gemmtune
