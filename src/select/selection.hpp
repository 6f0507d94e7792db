// SPDX-License-Identifier: Apache-2.0
// Which configuration serves a problem: the database entry tuned for its shape when there is one
// (exact matches first), else the candidate the model (model.hpp) predicts fastest. Candidates
// are the configurations of every entry of a device's database and, where given, the fastest few
// results per problem of search journals; each is predicted at the target from its measurement
// nearest to it and ranked by prediction x exp(-distance_penalty x sqrt(log distance)). Where an
// entry carries a baseline (what CLBlast or the fallback kernel reaches at its shape) and the
// prediction for the target says the choice would lose to the baseline predicted there, the safe
// path (the policy's template defaults, policy.hpp) is chosen instead, and the explanation says
// so.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/db/database.hpp"
#include "src/select/model.hpp"
#include "src/select/policy.hpp"

namespace gemmtune {

class KernelSpec;

enum class MeasurementSource { kDatabase, kJournal };
std::string to_string(MeasurementSource source);  // "database", "journal"

// One measurement of a configuration.
struct Measurement {
  Problem problem;  // as measured (with the candidate's kernel)
  double gflops = 0;
  MeasurementSource source = MeasurementSource::kDatabase;
  std::string origin;  // the file
  std::string entry;   // the database entry's key, or "<shape> in the journal"
  ResourceUsage usage;
  std::optional<Baseline> baseline;  // a database entry's
};

// One configuration of one kernel and everything measured of it.
struct SelectionCandidate {
  std::string kernel;
  Configuration parameters;
  std::vector<Measurement> measurements;
};

// Candidates gathered from databases and journals; one per (kernel, parameters).
class CandidatePool {
 public:
  // Every entry of `db` with status ok, named `origin`, and its configurations measured at many
  // shapes (Database::measurements).
  void add_database(const Database& db, const std::string& origin);
  // The `per_problem` fastest successful results of each problem of a journal (read_journal;
  // throws Error(kInvalidFile) for a file that is not one).
  void add_journal(const std::string& path, size_t per_problem);
  void add(const std::string& kernel, const Configuration& parameters, Measurement m);
  const std::vector<SelectionCandidate>& candidates() const { return candidates_; }
  bool empty() const { return candidates_.empty(); }

 private:
  // The candidate of `kernel` with `parameters`, added without measurements if absent.
  SelectionCandidate& candidate(const std::string& kernel, const Configuration& parameters);

  std::vector<SelectionCandidate> candidates_;
  std::map<std::pair<std::string, std::string>, size_t> index_;
};

// A candidate predicted at the target.
struct RankedCandidate {
  std::string kernel;
  Configuration parameters;
  Measurement from;     // the measurement the prediction starts from
  double distance = 0;  // log distance of `from` from the target
  Estimate estimate;    // at the target
  double score = 0;     // estimate.gflops x exp(-distance_penalty x sqrt(distance))
  std::string reason;   // one line
};

using SpecLookup = std::function<const KernelSpec*(const std::string& kernel)>;

// What was passed over and why, in one line; its kind says what it was, so that a caller acts on
// a kind (the library warns of stale entries) and never on the wording.
struct Note {
  enum class Kind {
    kStale,             // an entry whose parameters the template no longer accepts
    kUnusable,          // a candidate the device, the library or the problem refuses
    kOutsideModel,      // a kernel without a work-group tile, at a shape the model does not predict
    kOtherDevice,       // a database tuned on another device
    kDefaultsUnusable,  // a fallback template's defaults, which the device refuses
  };
  Kind kind = Kind::kUnusable;
  std::string text;
};

struct SelectOptions {
  ModelConstants constants = SelectionPolicy::defaults().model;
  MeasuredRule measured = SelectionPolicy::defaults().measured;
  int64_t skinny_side = SelectionPolicy::defaults().skinny_side;  // SelectionPolicy::skinny_side
  SpecLookup specs;  // declarations for the tile geometry (null: parameters by name)
  // Why a candidate cannot run the target here (its kind, and the reason as its text); nullopt
  // when it can. Null: every one can.
  std::function<std::optional<Note>(const SelectionCandidate&)> unusable;
  // The safe path: taken when the choice is predicted to lose to the baseline. Empty kernel:
  // there is none (the choice stands, and the explanation says it may lose).
  std::string safe_kernel;
  Configuration safe_parameters;
  size_t alternatives = 4;  // rejected candidates described in Selection::rejected
};

struct Selection {
  // kMeasured: by what the candidates ran at the measured shapes nearest (MeasuredRule).
  enum class Kind { kNone, kExact, kMeasured, kModel, kSafePath };
  Kind kind = Kind::kNone;
  std::optional<RankedCandidate> chosen;  // for kSafePath: the safe path, its estimate the baseline
  std::vector<RankedCandidate> ranked;    // usable candidates, best score first
  std::optional<double> baseline_gflops;  // predicted at the target
  std::string baseline_source;            // "clblast at 1024x1024x1024 (entry ...)"
  std::string reason;                     // one line: why the choice
  std::vector<std::string> rejected;      // the best alternatives and why not, one line each
  std::vector<Note> notes;                // candidates passed over and why
};
std::string to_string(Selection::Kind kind);  // "none", "exact", "measured", "model", "safe path"

// `family` names the measurements that count (its kernel and shape aside: precision, order,
// layout, batch, batch layout, epilogue); `target` is the problem to serve.
Selection select_configuration(const std::vector<SelectionCandidate>& candidates,
                               const EntryKey& family, const Problem& target,
                               const DeviceModel& device, const SelectOptions& options);

}  // namespace gemmtune
