// SPDX-License-Identifier: Apache-2.0
#include "src/verify/batch_placement.hpp"

#include <algorithm>
#include <cstring>

#include "src/verify/reference.hpp"

namespace gemmtune {

BatchPlacement::BatchPlacement(const Problem& problem, int64_t matrix_elements)
    : size(matrix_elements) {
  const int64_t batch = problem.batch;
  stride = batch == 1
               ? size
               : (size + kBatchStrideMultiple - 1) / kBatchStrideMultiple * kBatchStrideMultiple;
  for (int64_t e = 0; e < batch; ++e) {
    const int64_t slot = problem.batch_layout == BatchLayout::kOffsets ? batch - 1 - e : e;
    positions.push_back(slot * stride);
  }
}

std::vector<unsigned char> BatchPlacement::image(const std::vector<double>& dense, double gap,
                                                 Precision precision) const {
  if (positions.size() == 1) return pack_elements(dense, precision);
  std::vector<double> out(static_cast<size_t>(total()), gap);
  for (size_t e = 0; e < positions.size(); ++e) {
    const auto first = dense.begin() + static_cast<int64_t>(e) * size;
    std::copy(first, first + size, out.begin() + positions[e]);
  }
  return pack_elements(out, precision);
}

std::optional<int64_t> BatchPlacement::changed_gap(
    const std::vector<unsigned char>& bytes, const std::vector<unsigned char>& gap_element) const {
  const size_t eb = gap_element.size();
  for (int64_t slot = 0; positions.size() > 1 && slot < static_cast<int64_t>(positions.size());
       ++slot) {
    for (int64_t i = slot * stride + size; i < (slot + 1) * stride; ++i) {
      if (std::memcmp(bytes.data() + static_cast<size_t>(i) * eb, gap_element.data(), eb) != 0) {
        return i;
      }
    }
  }
  return std::nullopt;
}

}  // namespace gemmtune
