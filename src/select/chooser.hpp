// SPDX-License-Identifier: Apache-2.0
// The one chooser: which configuration runs a problem on a device, given the databases in layers
// of priority (within one source, the databases of this very device before those of devices that
// only share its profile). The library (src/api) calls it with its layers, bench-suite's direct
// column runs the library's first choice, and `gemmtune db lookup` calls it with the database it
// is given (and its search journals' candidates beside the database's entries), so all three
// choose alike. For each database that applies to the device (the same device name, or the same
// non-generic profile), the most specific lookup of the problem with a usable entry decides through
// select_configuration: the entry of the shape, else the candidate predicted fastest, else the
// safe path. The lookups are the problem's own key, then the key relaxed as the device profile's
// selection policy says (policy.hpp: the other storage order, without the epilogue, other batch
// counts). Every kernel's entries compete. An entry the template no longer accepts (stale) is
// passed over with a note, never an error. After the databases: the device profile's offline
// starting configuration, then the policy's default templates' defaults.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/db/database.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/select/policy.hpp"
#include "src/select/selection.hpp"

namespace gemmtune {

// One database and where it comes from.
struct ChooserLayer {
  std::string source;  // "user database", "embedded database", "compiled-in database", ...
  std::string origin;  // the database's name (its file)
  const Database* database = nullptr;
  bool note_mismatch = true;  // say so when it was tuned on another device
  // Candidates measured on the database's device besides its entries (`db lookup --journal`: the
  // fastest results of search journals), ranked together with the entries; null for none.
  const CandidatePool* more = nullptr;
};

// Where a choice comes from.
enum class ChoiceKind {
  kExact,          // the entry tuned for the problem's shape
  kMeasured,       // the configuration fastest at the measured shapes nearest (MeasuredRule)
  kModel,          // the entry the selection model predicts fastest at the shape
  kSafePath,       // the policy's safe-path template defaults: a baseline is predicted to win
  kOfflineChoice,  // the device profile's starting configuration (chosen offline, not measured)
  kDefaults,       // a default template's defaults: no entry applies
  kFallback,       // a default template's declared fallback: nothing before it fits the device
};
std::string to_string(ChoiceKind kind);  // "exact", "measured", "model", "safe path", "offline
                                         // choice", "defaults", "fallback"

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
  ChoiceKind kind = ChoiceKind::kDefaults;
  Shape tuned_shape;  // the shape of the entry the choice comes from (the problem's otherwise)
  // The selection behind a database layer's choice (every candidate ranked, the baseline); null
  // for an offline choice and for defaults.
  std::shared_ptr<const Selection> selection;
};

struct Choices {
  std::vector<Choice> choices;  // in order of preference; the defaults last
  std::vector<Note> notes;      // entries and databases passed over, and why
};

// Why `config` of `spec` cannot run the problem on this device ("" when it can).
using Refusal = std::function<std::string(const KernelSpec& spec, const Configuration& config)>;

// The configurations for `problem` on `device` (whose profile is `profile`, may be null; its
// selection policy applies), in order of preference: one per applying database of `layers`
// (highest priority first), the profile's offline start, then the default templates' defaults.
// `specs` gives the templates (a kernel it does not know is passed over); `unusable` says what
// the device refuses. Throws Error(kInvalidFile) for a profile whose selection policy is wrong.
Choices choose_configurations(const std::vector<ChooserLayer>& layers, const Problem& problem,
                              const DeviceInfo& device, const DeviceProfile* profile,
                              const SpecLookup& specs, const Refusal& unusable);

// Why `parameters` of `spec` are stale (a parameter or value the template no longer declares,
// or a constraint they break), or "".
std::string stale_reason(const KernelSpec& spec, const Configuration& parameters,
                         Precision precision);

}  // namespace gemmtune
