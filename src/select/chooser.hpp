// The one chooser: which configuration runs a problem on a device, given the databases in layers
// of priority. The library (src/api) calls it with its layers; bench-suite's direct column runs
// the library's first choice, so both run the same configuration. For each database that applies
// to the device (the same device name, or the same non-generic profile), the most specific lookup
// of the problem (its own key, the other storage order, without the epilogue, other batch counts)
// with a usable entry decides through select_configuration: the entry of the shape, else the
// candidate predicted fastest, else the safe path. Every kernel's entries compete. An entry the
// template no longer accepts (stale) is passed over with a note, never an error. After the
// databases: the device profile's offline starting configuration, then the fallback templates'
// defaults.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/db/database.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/selection.hpp"

namespace gemmtune {

// The template whose defaults are the safe path (taken where a baseline is predicted to win).
inline constexpr const char* kSafePathKernel = "xgemm_direct";
// The templates whose defaults run when no database entry or offline start applies, in order.
const std::vector<std::string>& fallback_kernels();

// One database and where it comes from.
struct ChooserLayer {
  std::string source;  // "user database", "embedded database", "compiled-in database", ...
  std::string origin;  // the database's name (its file)
  const Database* database = nullptr;
  bool note_mismatch = true;  // say so when it was tuned on another device
};

// One configuration that may run a problem, and why it was chosen.
struct Choice {
  const KernelSpec* spec = nullptr;
  Configuration config;  // complete
  std::string source;    // a layer's source, or "compiled-in default", "offline choice"
  std::string origin;    // the database, the profile, or "template defaults"
  std::string entry;     // the entry's key, "" for defaults
  bool exact = false;
  double distance = 0;
  std::string relaxed;  // what of the problem the entry differs in besides the shape ("" none)
  double gflops = 0;    // as measured for the entry
  double predicted_gflops = 0;            // the selection's prediction for the problem (0: none)
  std::string reason;                     // one line: why this configuration
  std::vector<std::string> alternatives;  // rejected candidates, best first
  // "exact", "model", "safe path", "offline choice" or "defaults".
  std::string kind;
  Shape tuned_shape;  // the shape of the entry the choice comes from (the problem's otherwise)
};

struct Choices {
  std::vector<Choice> choices;     // in order of preference; the defaults last
  std::vector<std::string> notes;  // entries and databases passed over, and why
};

// Why `config` of `spec` cannot run the problem on this device ("" when it can).
using Refusal = std::function<std::string(const KernelSpec& spec, const Configuration& config)>;

// The configurations for `problem` on `device` (whose profile is `profile`, may be null), in
// order of preference: one per applying database of `layers` (highest priority first), the
// profile's offline start, then the fallback templates' defaults. `specs` gives the templates
// (a kernel it does not know is passed over); `unusable` says what the device refuses.
Choices choose_configurations(const std::vector<ChooserLayer>& layers, const Problem& problem,
                              const DeviceInfo& device, const DeviceProfile* profile,
                              const SpecLookup& specs, const Refusal& unusable);

// Why `parameters` of `spec` are stale (a parameter or value the template no longer declares,
// or a constraint they break), or "".
std::string stale_reason(const KernelSpec& spec, const Configuration& parameters,
                         Precision precision);

}  // namespace gemmtune
