// SPDX-License-Identifier: Apache-2.0
// xgemm_fast, part 2: types and addresses. The vector types of the fragment reads, the DOT2 pair
// types, and where an element lives: in global memory (A_PTR, B_PTR through the transposes) and in
// the local tiles (padding, XOR swizzle, DOT2 interleaving), plus which chunks of the work-group
// tile a thread owns. Needs xgemm_fast_params.cl and common.cl.

// Vector types of the fragment reads, and their unpacking into private arrays.
#if VWM == 1
typedef real realM;
#define STORE_M(v, p) (*(p) = (v))
#define LOAD_M(p) (*(p))
#elif VWM == 2
typedef real2 realM;
#define STORE_M(v, p) vstore2((v), 0, (p))
#define LOAD_M(p) vload2(0, (p))
#elif VWM == 4
typedef real4 realM;
#define STORE_M(v, p) vstore4((v), 0, (p))
#define LOAD_M(p) vload4(0, (p))
#elif VWM == 8
typedef real8 realM;
#define STORE_M(v, p) vstore8((v), 0, (p))
#define LOAD_M(p) vload8(0, (p))
#elif VWM == 16
typedef real16 realM;
#define STORE_M(v, p) vstore16((v), 0, (p))
#define LOAD_M(p) vload16(0, (p))
#endif
#if VWN == 1
typedef real realN;
#define STORE_N(v, p) (*(p) = (v))
#elif VWN == 2
typedef real2 realN;
#define STORE_N(v, p) vstore2((v), 0, (p))
#elif VWN == 4
typedef real4 realN;
#define STORE_N(v, p) vstore4((v), 0, (p))
#elif VWN == 8
typedef real8 realN;
#define STORE_N(v, p) vstore8((v), 0, (p))
#endif

#if DOT2
// DOT2: why. AMD GPUs from gfx906 on (and gfx1011/gfx1012) multiply two half pairs and add them
// to a float in one instruction (v_dot2_f32_f16); a compiler can use it only where the kernel
// itself presents the operands as half pairs along K. So the local tiles hold half with k and
// k+1 of each row/column interleaved (one 2*VW-wide half load yields VW pairs), and the inner
// loop adds a(k)*b(k) + a(k+1)*b(k+1) to float accumulators, for PRECISION 1632 and 16 alike.
// The tiles are zero-filled beyond K, so an odd K or a partial last tile pairs with zeros.
// Everything DOT2 adds sits under #if DOT2: with DOT2=0 the kernel is the one without it.
#if PRECISION != 16 && PRECISION != 1632
#error "DOT2 pairs half values: it needs half storage (PRECISION 16 or 1632)"
#endif
#if !LDS
#error "DOT2 forms its pairs in local memory: it needs LDS=1"
#endif
// 2*VWM and 2*VWN: the width of one pair-interleaved chunk (a vector load of at most 16 halves).
#if VWM == 1
#define D2_AW 2
#elif VWM == 2
#define D2_AW 4
#elif VWM == 4
#define D2_AW 8
#elif VWM == 8
#define D2_AW 16
#else
#error "DOT2 needs VWM <= 8"
#endif
#if VWN == 1
#define D2_BW 2
#elif VWN == 2
#define D2_BW 4
#elif VWN == 4
#define D2_BW 8
#elif VWN == 8
#define D2_BW 16
#else
#error "DOT2 needs VWN <= 8"
#endif
typedef GT_CAT(float, D2_AW) d2A;  // VWM pairs (k, k+1) of consecutive rows, in float
typedef GT_CAT(float, D2_BW) d2B;
#if VWM == 1
typedef float accM;  // float accumulators also for PRECISION 16
#else
typedef GT_CAT(float, VWM) accM;
#endif
#define ACC_STORE_M(v, p) GT_CAT(GT_VSTORE_, VWM)(v, p)
typedef float acc_real;  // one lane of an accumulator
#define ACC_ZERO ((accM)(0.0f))
#if GT_HALF_MEMORY
#define D2_LOAD_A(p) GT_CAT(GT_MLOADA_, D2_AW)(p)
#define D2_LOAD_B(p) GT_CAT(GT_MLOADA_, D2_BW)(p)
#else
#define D2_LOAD_A(p) GT_CAT(convert_float, D2_AW)(*((__local const GT_CAT(half, D2_AW)*)(p)))
#define D2_LOAD_B(p) GT_CAT(convert_float, D2_BW)(*((__local const GT_CAT(half, D2_BW)*)(p)))
#endif
// LLVM does not turn the float expression of the pair loop into v_dot2_f32_f16 (it emits one
// v_fma_mix_f32 per product), so where the compiler targets AMD and has the dot2 builtin the loop
// calls it on half2 pairs (D2_FDOT2). The checks are nested: not every compiler has __has_builtin.
#define D2_FDOT2 0
#ifdef __AMDGCN__
#ifdef __has_builtin
#if __has_builtin(__builtin_amdgcn_fdot2)
#undef D2_FDOT2
#define D2_FDOT2 1
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#endif
#endif
// Unroll of the pair loop: KWI/2 pairs (KWI values of k), at least 1.
#if KWI >= 2
#define D2_UNROLL_8 4
#define D2_UNROLL_4 2
#define D2_UNROLL_2 1
#define D2_UNROLL GT_CAT(D2_UNROLL_, KWI)
#else
#define D2_UNROLL 1
#endif
#else
// Without DOT2 the accumulators are VWM-wide vectors of the arithmetic type.
typedef realM accM;
typedef real acc_real;
#define ACC_STORE_M(v, p) STORE_M(v, p)
#define ACC_ZERO ((realM)(ZERO))
#endif

// Element access of the operands in global memory (column-major, leading dimensions lda/ldb):
// addresses, and values of the arithmetic type.
#if TRANSA
#define A_PTR(m, k) (A + (k) + (m) * lda)
#else
#define A_PTR(m, k) (A + (m) + (k) * lda)
#endif
#if TRANSB
#define B_PTR(k, n) (B + (n) + (k) * ldb)
#else
#define B_PTR(k, n) (B + (k) + (n) * ldb)
#endif
#define A_AT(m, k) GT_LOAD(A_PTR(m, k))
#define B_AT(k, n) GT_LOAD(B_PTR(k, n))
// Aligned vector reads of the local tiles (converted for 16acc32, whose tiles hold half).
#if GT_HALF_MEMORY
#define LLOAD_M(p) GT_CAT(GT_MLOADA_, VWM)(p)
#define LLOAD_N(p) GT_CAT(GT_MLOADA_, VWN)(p)
#else
#define LLOAD_M(p) (*((__local const realM*)(p)))
#define LLOAD_N(p) (*((__local const realN*)(p)))
#endif
// Unaligned vector reads of global memory for the path without local memory.
#define GLOAD_M(p) GT_CAT(GT_MLOAD_, VWM)(p)

// Position in local memory of element x of row k: chunks of VW elements, optionally XOR-swizzled
// by the row so that column-wise stores from K-contiguous loads spread over the banks.
#if SWZ
#define SWIZZLE(k, x, VW, CHUNKS) (((((x) / (VW)) ^ ((k) & ((CHUNKS)-1))) * (VW)) + ((x) % (VW)))
#else
#define SWIZZLE(k, x, VW, CHUNKS) (x)
#endif
#if DOT2
// Rows k and k+1 interleaved: the pair of element x sits at 2x, 2x+1 of double row k/2.
#define AS_INDEX(buf, k, m)                                                   \
  ((buf) * (KWG * ASTRIDE) + ((k) >> 1) * (2 * ASTRIDE) +                    \
   2 * SWIZZLE((k) >> 1, m, VWM, MCHUNKS) + ((k)&1))
#define BS_INDEX(buf, k, n)                                                   \
  ((buf) * (KWG * BSTRIDE) + ((k) >> 1) * (2 * BSTRIDE) +                    \
   2 * SWIZZLE((k) >> 1, n, VWN, NCHUNKS) + ((k)&1))
#else
#define AS_INDEX(buf, k, m) ((buf) * (KWG * ASTRIDE) + (k) * ASTRIDE + SWIZZLE(k, m, VWM, MCHUNKS))
#if BKM
#define BS_INDEX(buf, k, n) ((buf) * B_TILE + (n) * BKSTRIDE + (k))  // K-major, not swizzled
#else
#define BS_INDEX(buf, k, n) ((buf) * (KWG * BSTRIDE) + (k) * BSTRIDE + SWIZZLE(k, n, VWN, NCHUNKS))
#endif
#endif
#if BKM
// BKV values of k of one column of the K-major B tile: one aligned vector read.
typedef GT_CAT(real, BKV) realK;
#if GT_HALF_MEMORY
#define LLOAD_K(p) GT_CAT(GT_MLOADA_, BKV)(p)
#else
#define LLOAD_K(p) (*((__local const realK*)(p)))
#endif
#endif

// First element of the i-th VWM-wide chunk of this thread's M fragment.
#if STRM
#define M_CHUNK(tx, i) (((i) * MDIMC + (tx)) * VWM)
#else
#define M_CHUNK(tx, i) ((tx) * MWI + (i) * VWM)
#endif
#if STRN
#define N_CHUNK(ty, j) (((j) * NDIMC + (ty)) * VWN)
#else
#define N_CHUNK(ty, j) ((ty) * NWI + (j) * VWN)
#endif
