// SPDX-License-Identifier: Apache-2.0
// A workload: the shapes an application runs and how much each matters. A text file, one shape a
// line, `MxNxK [weight]` (weight 1 when left out, '#' starts a comment); a shape listed twice adds
// its weights, so a log with one line per call (the library writes one with GEMMTUNE_LOG_SHAPES) is
// a workload as it stands, weighted by calls.
#pragma once

#include <string>
#include <vector>

#include "src/core/problem.hpp"

namespace gemmtune {

struct WorkloadShape {
  Shape shape;
  double weight = 1;
};

// The shapes in order of first appearance with their summed weights. Throws Error(kInvalidFile)
// naming the line of a bad shape or weight, and for a file without shapes.
std::vector<WorkloadShape> read_workload(const std::string& path);

// `total` shared in proportion to the weights, each share at least `minimum`.
std::vector<double> weighted_shares(const std::vector<WorkloadShape>& workload, double total,
                                    double minimum);

}  // namespace gemmtune
