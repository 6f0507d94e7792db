// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 3: the tile loads of the local-memory path. load_tile reads one K tile of A and
// B from global memory into registers (guarded at the matrix edges, GLV-wide where aligned);
// store_tile writes those registers into one buffer of the local tiles. Splitting the two lets
// the main loop issue the global loads of the next tile before computing on the current one.
// Needs xgemm_fast_layout.cl.

// Global memory -> registers for one K tile. Consecutive threads read consecutive addresses of
// the operand's contiguous dimension, so the loads coalesce for every layout. Each thread loads
// GLV-wide slots: slot l covers elements l*GLV .. l*GLV+GLV-1 of `ra` (`rb`), consecutive along
// the operand's contiguous dimension. A slot inside the matrix whose address is a multiple of the
// vector (`a_vec`, `b_vec` VEC_FULL: leading dimension and offset multiples of GLV) is one wide
// load. With GLH, a slot along k of an operand whose leading dimension and offset are multiples
// of GLV / 2 only (VEC_HALF: an even K with GLV 4, as every operand laid along k has leading
// dimension K when dense) is two half-wide loads. Every other slot loads its elements one by one,
// guarded. With GLV 1 every slot is one element. On an H200 (results/h200/half-loads/) the
// half-wide form gained 1-7% where the operand along k had it and K was at least 500; along m or
// n it went either way, and with producer rows it lost, so the slots along m and n keep element
// loads, and GLH is a parameter: its code costs speed even where it never runs.
#define VEC_NONE 0
#define VEC_HALF 1
#define VEC_FULL 2
inline int vec_class(const int ld, const int shift) {
  if (ld % GLV == 0 && shift % GLV == 0) return VEC_FULL;
  if (GLH && ld % (GLV / 2) == 0 && shift % (GLV / 2) == 0) return VEC_HALF;
  return VEC_NONE;
}
#if GLV > 1
#define GLOAD_SLOT(p) GT_CAT(GT_MLOADA_, GLV)(p)
#define STORE_SLOT(v, p) GT_CAT(GT_VSTORE_, GLV)((v), (p))
typedef GT_CAT(real, GLV) realG;
#endif
#if GLH
#if GLV != 4
#error "half-wide loads (GLH) split a 4-wide slot: they need GLV 4"
#endif
// A slot as two aligned 2-wide loads, at p and p + 2 elements along the contiguous dimension.
#define LOAD_HALVES(p, r)                                   \
  do {                                                      \
    GT_VSTORE_2((real2)GT_MLOADA_2(p), (r));                \
    GT_VSTORE_2((real2)GT_MLOADA_2((p) + 2), (r) + 2);      \
  } while (0)
#endif
inline void load_tile(const __global mreal* restrict A, const int lda,
                      const __global mreal* restrict B, const int ldb, const int M, const int N,
                      const int kend, const int m0, const int n0, const int k0, const int tid,
                      const int a_vec, const int b_vec, real ra[A_LOADS], real rb[B_LOADS]) {
#pragma unroll
  for (int l = 0; l < A_SLOTS; ++l) {
    if (A_PART && tid + l * LOADERS >= A_PIECES) continue;
    const int e = (tid + l * LOADERS) * GLV;
#if TRANSA
    const int k = e % KWG, m = e / KWG;  // the slot runs along k
    const int gm = m0 + m, gk = k0 + k;
#if GLV > 1
    if (a_vec == VEC_FULL && gm < M && gk + GLV <= kend) {
      STORE_SLOT((realG)GLOAD_SLOT(A_PTR(gm, gk)), ra + l * GLV);
      continue;
    }
#endif
#if GLH
    if (a_vec == VEC_HALF && gm < M && gk + GLV <= kend) {
      LOAD_HALVES(A_PTR(gm, gk), ra + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      ra[l * GLV + w] = (gm < M && gk + w < kend) ? A_AT(gm, gk + w) : ZERO;
    }
#else
    const int m = e % MWG, k = e / MWG;  // the slot runs along m
    const int gm = m0 + m, gk = k0 + k;
#if GLV > 1
    if (a_vec == VEC_FULL && gm + GLV <= M && gk < kend) {
      STORE_SLOT((realG)GLOAD_SLOT(A_PTR(gm, gk)), ra + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      ra[l * GLV + w] = (gm + w < M && gk < kend) ? A_AT(gm + w, gk) : ZERO;
    }
#endif
  }
#pragma unroll
  for (int l = 0; l < B_SLOTS; ++l) {
    if (B_PART && tid + l * LOADERS >= B_PIECES) continue;
    const int e = (tid + l * LOADERS) * GLV;
#if TRANSB
    const int n = e % NWG, k = e / NWG;  // the slot runs along n
    const int gn = n0 + n, gk = k0 + k;
#if GLV > 1
    if (b_vec == VEC_FULL && gn + GLV <= N && gk < kend) {
      STORE_SLOT((realG)GLOAD_SLOT(B_PTR(gk, gn)), rb + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      rb[l * GLV + w] = (gn + w < N && gk < kend) ? B_AT(gk, gn + w) : ZERO;
    }
#else
    const int k = e % KWG, n = e / KWG;  // the slot runs along k
    const int gn = n0 + n, gk = k0 + k;
#if GLV > 1
    if (b_vec == VEC_FULL && gn < N && gk + GLV <= kend) {
      STORE_SLOT((realG)GLOAD_SLOT(B_PTR(gk, gn)), rb + l * GLV);
      continue;
    }
#endif
#if GLH
    if (b_vec == VEC_HALF && gn < N && gk + GLV <= kend) {
      LOAD_HALVES(B_PTR(gk, gn), rb + l * GLV);
      continue;
    }
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
      rb[l * GLV + w] = (gn < N && gk + w < kend) ? B_AT(gk + w, gn) : ZERO;
    }
#endif
  }
}

// Registers -> local memory, element by element in the slots' order (so that padding, swizzle
// and the DOT2 pairing apply to each element).
inline void store_tile(__local mreal* As, __local mreal* Bs, const int buf, const int tid,
                       const real ra[A_LOADS], const real rb[B_LOADS]) {
#pragma unroll
  for (int l = 0; l < A_SLOTS; ++l) {
    if (A_PART && tid + l * LOADERS >= A_PIECES) continue;
    const int e = (tid + l * LOADERS) * GLV;
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
#if TRANSA
      GT_STORE(ra[l * GLV + w], As + AS_INDEX(buf, e % KWG + w, e / KWG));
#else
      GT_STORE(ra[l * GLV + w], As + AS_INDEX(buf, e / MWG, e % MWG + w));
#endif
    }
  }
#pragma unroll
  for (int l = 0; l < B_SLOTS; ++l) {
    if (B_PART && tid + l * LOADERS >= B_PIECES) continue;
    const int e = (tid + l * LOADERS) * GLV;
#if BKM && !TRANSB && GLV > 1 && !GT_HALF_MEMORY
    // The slot runs along k, as the K-major tile's row does: one aligned vector store.
    *((__local realG*)(Bs + BS_INDEX(buf, e % KWG, e / KWG))) =
        GT_CAT(vload, GLV)(0, rb + l * GLV);
    continue;
#endif
#pragma unroll
    for (int w = 0; w < GLV; ++w) {
#if TRANSB
      GT_STORE(rb[l * GLV + w], Bs + BS_INDEX(buf, e / NWG, e % NWG + w));
#else
      GT_STORE(rb[l * GLV + w], Bs + BS_INDEX(buf, e % KWG + w, e / KWG));
#endif
    }
  }
}
