// SPDX-License-Identifier: Apache-2.0
// Where the GEMMs of a batch lie in the one buffer per operand that measurements and checks use.
// Entries are `stride` elements apart, the stride rounded up from the matrix size, so that an
// awkward shape leaves gaps between them: NaN in A and B (a kernel that reads outside its matrix
// produces NaN) and a known fill in C (a kernel that writes outside its matrix is caught). The
// offsets layout stores the entries in reverse order, so that a call which ignored the offsets
// (or used them for the wrong entry) fails verification. A single GEMM is its dense matrix.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "src/core/problem.hpp"

namespace gemmtune {

constexpr int64_t kBatchStrideMultiple = 16;

struct BatchPlacement {
  int64_t size = 0;                // elements of one matrix
  int64_t stride = 0;              // distance of consecutive slots (the strided layout's stride)
  std::vector<int64_t> positions;  // where entry e starts

  BatchPlacement() = default;
  BatchPlacement(const Problem& problem, int64_t matrix_elements);
  int64_t total() const { return stride * static_cast<int64_t>(positions.size()); }

  // The buffer image of `dense` (entries one after the other), gaps `gap`, in `precision`.
  std::vector<unsigned char> image(const std::vector<double>& dense, double gap,
                                   Precision precision) const;
  // The first element of a gap in `bytes` that differs from `gap_element` (one packed element),
  // or nullopt when every gap is intact.
  std::optional<int64_t> changed_gap(const std::vector<unsigned char>& bytes,
                                     const std::vector<unsigned char>& gap_element) const;
};

}  // namespace gemmtune
