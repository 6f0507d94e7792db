// SPDX-License-Identifier: Apache-2.0
// The one identity of a problem: every field of Problem that tells one problem from another,
// listed once (problem_key.cpp), with one canonical spelling, equality and order. Every key of
// the project derives from it (journals, the evaluation cache, the replay and compile caches,
// database entries, the library's call cache and plans, calibration, selection families),
// leaving out only the parts that key does not distinguish.
#pragma once

#include <string>

#include "src/core/problem.hpp"

namespace gemmtune {

// Parts of the identity a key may leave out (a bit set).
enum KeyParts : unsigned {
  kWholeProblem = 0,
  kWithoutShape = 1u << 0,    // problems that differ only in shape: a family
  kWithoutScaling = 1u << 1,  // alpha and beta (a database entry holds its scaling beside its key)
  kWithoutBatch = 1u << 2,    // the batch count and layout (the model transfers across them)
};

// A family: the problems one tuned configuration may serve, differing only in shape. The
// database's entries carry no scaling, so a family ignores it too.
constexpr unsigned kFamily = kWithoutShape | kWithoutScaling;

class ProblemKey {
 public:
  // Formats nothing and allocates nothing: the library compares keys on every call.
  explicit ProblemKey(const Problem& p, unsigned without = kWholeProblem);

  // Canonical spelling, '|'-separated in this order: shape, order, layout, precision, alpha,
  // beta, batch, epilogue, then "offsets" for an offsets batch ("64x64x64|row|NN|32|1|0|1|").
  // Left-out parts are left out of the text. The batch layout follows only where it is not the
  // default, so that keys written before it was part of the identity (the evaluation cache's file
  // names) still name the same problems.
  std::string to_string() const;

  bool operator==(const ProblemKey& o) const;
  bool operator!=(const ProblemKey& o) const { return !(*this == o); }
  bool operator<(const ProblemKey& o) const;

  // The problem as the key sees it: left-out parts at their defaults, a single GEMM strided.
  const Problem& problem() const { return p_; }
  unsigned without() const { return without_; }

 private:
  Problem p_;
  unsigned without_;
};

// What a result was measured for: the template and the problem's whole identity, equal only for
// results that may stand for each other (journals, the evaluation cache, replays).
std::string problem_key(const std::string& kernel, const Problem& p);

}  // namespace gemmtune
