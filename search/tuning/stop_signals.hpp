// SPDX-License-Identifier: Apache-2.0
// SIGINT and SIGTERM ask a search to stop: the evaluation in flight finishes and is journalled,
// the tuned database gets what was measured, and the command ends with a resume hint and exit
// status 128 + the signal (130, 143), so that a script can tell a stopped search from a finished
// one. A second signal ends the process at once (the journal already holds every result).
#pragma once

#include <atomic>
#include <csignal>
#include <string>

namespace gemmtune {

class StopSignals {
 public:
  // Installs the handlers; the destructor restores the previous ones.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Set by the first signal; what TuneSettings::interrupt and the refinement poll.
  const std::atomic<bool>* flag() const;
  // The first signal received (SIGINT or SIGTERM), 0 when none.
  int signal() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// The flag of the StopSignals in place (false while none is): for code that polls it.
const std::atomic<bool>* stop_requested();

// Throws Error(kInterrupted) carrying `signal`: "search stopped by SIGTERM; continue it with:
// gemmtune search --resume JOURNAL".
[[noreturn]] void throw_interrupted(int signal, const std::string& resume_command);

}  // namespace gemmtune
