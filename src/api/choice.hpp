// SPDX-License-Identifier: Apache-2.0
// Where the configuration of a call comes from. Layers, each overriding the one before: the
// template defaults and the databases compiled into the library from results/, the system
// databases (share/gemmtune/databases/*.json beside the installed library or under the configured
// install prefix), the databases the build embedded (GEMMTUNE_EMBED_DATABASES) and the user
// database (SetDatabase, else $GEMMTUNE_DB). A database applies to a device of the same name or of
// the same (non-generic) profile; within one the configuration comes from the chooser of
// src/select (choose_configurations, whose first choice bench-suite's direct column runs too, and
// which `gemmtune db lookup` asks with the refusals of call_refusal):
// the entry of the problem's shape, else the entry predicted fastest for it, else the safe path
// where an entry's baseline is predicted to beat it; relaxed step by step when the exact family
// has no entry. An entry the current template does
// not accept (stale) is skipped with a warning, never an error: the template defaults always
// remain.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "src/api/assets.hpp"
#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/device/device.hpp"
#include "src/select/chooser.hpp"

namespace gemmtune::api {

struct Layer {
  std::string source;  // "user database", "embedded database", "system database",
                       // "compiled-in database"
  std::vector<const NamedDatabase*> databases;
};

// The databases of every layer, highest priority first; immutable once made.
struct DatabaseSnapshot {
  uint64_t generation = 0;
  std::vector<NamedDatabase> owned;  // user and system databases (compiled-in ones are Assets')
  std::vector<Layer> layers;
  std::vector<std::string> notes;  // files that could not be read
};

// The current snapshot; made on first use (reading $GEMMTUNE_DB and the system folders).
std::shared_ptr<const DatabaseSnapshot> database_snapshot();
// Replaces the user database ("" = $GEMMTUNE_DB again). Throws Error(kInvalidFile) for a file
// that is not a database, leaving the snapshot as it was.
void set_user_database(const std::string& path);
// The same with a database already read, named `origin` in Explain: for a program that holds its
// databases in memory (bench-suite's library column). set_user_database("") removes it.
void set_user_database(const Database& db, const std::string& origin);

// One configuration that may run a problem, and why (the chooser's, src/select/chooser.hpp).
using Choice = gemmtune::Choice;

// The chooser's choices, and its notes as the library reports them: one line each.
struct Choices {
  std::vector<Choice> choices;
  std::vector<std::string> notes;
};

// Why `config` of `spec` cannot run `problem` on `device` with `limits` (a precision the device
// lacks, an epilogue or batch layout the template has not, a device limit exceeded), or "": what
// the library refuses, and `gemmtune db lookup` with it.
Refusal call_refusal(const DeviceInfo& device, const DeviceLimits& limits, const Problem& problem);

// The configurations for `problem` on `device` (limits of its program builder), in order.
Choices choose(const DatabaseSnapshot& snapshot, const DeviceInfo& device,
               const DeviceLimits& limits, const Problem& problem);

}  // namespace gemmtune::api
