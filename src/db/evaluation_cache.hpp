// SPDX-License-Identifier: Apache-2.0
// The per-user cache of evaluations: every result a search measures is also recorded under the
// user's cache folder, keyed by everything that changes it (device, driver, template files,
// problem), and a later search of the same problem takes those results as known instead of
// measuring them again, from any working folder, without --resume. One journal file per key, so
// that searches of different problems never wait for each other.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/db/journal.hpp"

namespace gemmtune {

struct DeviceInfo;

// A hash of the template's declaration and of every OpenCL source beside it: a changed kernel
// file makes earlier results of that template stale.
std::string template_fingerprint(const std::string& templates_dir, const std::string& kernel);

class EvaluationCache {
 public:
  // `dir` is the cache root the binary cache also uses ("" = $XDG_CACHE_HOME/gemmtune, "none" =
  // no caches at all); the results go to its evaluations/ folder unless
  // $GEMMTUNE_EVALUATION_CACHE names another folder (or "none": results not cached).
  // The cache of one template's results: `kernel`, whose files `fingerprint` hashes.
  EvaluationCache(const std::string& dir, const DeviceInfo& device, std::string kernel,
                  std::string fingerprint);

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // The results recorded for `problem`, the latest per configuration. A run failure (a hang, a
  // driver crash) is not taken: it may not happen again. A foreign or unreadable file is ignored.
  std::vector<Result> load(const Problem& problem) const;
  // A writer appending to the problem's file; null (logged) when another search of the same
  // problem holds it or the folder cannot be written: the search then goes on without recording.
  std::unique_ptr<JournalWriter> writer(const Problem& problem) const;

  std::string path_of(const Problem& problem) const;

 private:
  std::string identity(const Problem& problem) const;
  std::string dir_;
  std::string device_;  // name and driver
  std::string kernel_;
  std::string fingerprint_;
};

}  // namespace gemmtune
