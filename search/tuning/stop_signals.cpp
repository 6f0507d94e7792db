// SPDX-License-Identifier: Apache-2.0
#include "search/tuning/stop_signals.hpp"

#include <cstring>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

// Lock-free atomics are safe to touch from a signal handler.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int sig) {
  int none = 0;
  if (!g_signal.compare_exchange_strong(none, sig)) {
    // A second signal: stop now, as the default action would have.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_stop = true;
}

}  // namespace

StopSignals::StopSignals() {
  g_stop = false;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int_);
  ::sigaction(SIGTERM, &sa, &old_term_);
}

StopSignals::~StopSignals() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

const std::atomic<bool>* StopSignals::flag() const {
  return &g_stop;
}

const std::atomic<bool>* stop_requested() {
  return &g_stop;
}

int StopSignals::signal() const {
  return g_signal.load();
}

void throw_interrupted(int signal, const std::string& resume_command) {
  const char* name = signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : nullptr;
  const std::string by = name ? name : "signal " + std::to_string(signal);
  throw Error(ErrorCode::kInterrupted,
              "search stopped by " + by +
                  " (what was measured is saved); continue it with: " + resume_command,
              signal > 0 ? signal : SIGINT);
}

}  // namespace gemmtune
