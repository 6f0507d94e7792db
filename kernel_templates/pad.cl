// SPDX-License-Identifier: Apache-2.0
// Helper kernel of templates that declare "pad": copies a column-major matrix into another of at
// least the same size, filling the rows and columns beyond the source with zeros. The same
// kernel copies the padded result back (then the destination is the smaller matrix).
#include "common.cl"

#ifndef PAD_ROWS
#define PAD_ROWS 4  // rows each work-item copies, 16 apart: its loads are in flight together
#endif

// A work-group copies 16 * PAD_ROWS rows of 16 columns. One element a work-item left a GPU's
// memory idle between a load and its store (an H200 copied at about half its bandwidth).
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void pad_copy(const int src_rows, const int src_cols, const int src_ld, const int src_offset,
              const __global mreal* restrict src, const int dst_rows, const int dst_cols,
              const int dst_ld, const int dst_offset, __global mreal* restrict dst) {
  const int r0 = get_group_id(0) * (16 * PAD_ROWS) + get_local_id(0);
  const int c = get_global_id(1);
  if (c >= dst_cols) return;
  real v[PAD_ROWS];
#pragma unroll
  for (int i = 0; i < PAD_ROWS; ++i) {
    const int r = r0 + i * 16;
    v[i] = (r < src_rows && c < src_cols) ? GT_LOAD(src + src_offset + c * src_ld + r) : ZERO;
  }
#pragma unroll
  for (int i = 0; i < PAD_ROWS; ++i) {
    const int r = r0 + i * 16;
    if (r < dst_rows) GT_STORE(v[i], dst + dst_offset + c * dst_ld + r);
  }
}
