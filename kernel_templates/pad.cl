// SPDX-License-Identifier: Apache-2.0
// Helper kernel of templates that declare "pad": copies a column-major matrix into another of at
// least the same size, filling the rows and columns beyond the source with zeros. The same
// kernel copies the padded result back (then the destination is the smaller matrix).
#include "common.cl"

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void pad_copy(const int src_rows, const int src_cols, const int src_ld, const int src_offset,
              const __global mreal* restrict src, const int dst_rows, const int dst_cols,
              const int dst_ld, const int dst_offset, __global mreal* restrict dst) {
  const int r = get_global_id(0);
  const int c = get_global_id(1);
  if (r < dst_rows && c < dst_cols) {
    real v = ZERO;
    if (r < src_rows && c < src_cols) v = GT_LOAD(src + src_offset + c * src_ld + r);
    GT_STORE(v, dst + dst_offset + c * dst_ld + r);
  }
}
