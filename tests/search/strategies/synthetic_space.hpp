// SPDX-License-Identifier: Apache-2.0
// A SYNTHETIC recorded space for testing and tuning searchers without a GPU: the valid
// configurations of a real template space, each given a made-up time from a smooth function of the
// log2 parameters with interactions, a small deterministic ruggedness and regions that fail (as
// compile or run failures do on real devices). It behaves like a GEMM space; it is not a
// measurement of any device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/db/journal.hpp"
#include "src/kernel/kernel_spec.hpp"

namespace gemmtune::test {

// The journal of an "exhaustive run" over `space` (every valid configuration) for `problem`.
Journal synthetic_gemm_journal(const ParamSpace& space, const Problem& problem, uint64_t seed);

// The xgemm `gpu` space (limits of a typical discrete GPU) at 1024x1024x1024, as a journal.
Journal synthetic_xgemm_gpu_journal(uint64_t seed);

// Writes a recording (for --replay) of the xgemm `cpu` space, without device limits, for each of
// `shapes` to `path`; returns `path`.
std::string write_xgemm_cpu_replay(const std::string& path, const std::vector<Shape>& shapes,
                                   uint64_t seed);

}  // namespace gemmtune::test
