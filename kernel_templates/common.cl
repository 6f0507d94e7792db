// SPDX-License-Identifier: Apache-2.0
// Shared definitions of the GEMM templates: the element types chosen by PRECISION, their vector
// types, the loads and stores of matrix memory, and the batch arguments. Included (textually, by
// the host) before a template's body.
//
// Two element types: `real` is the type of the arithmetic (registers, accumulators), `mreal` the
// type of matrices in memory (global buffers and local tiles). They differ only for 16acc32,
// where matrices are half and the arithmetic is float. Every access to matrix memory goes through
// GT_LOAD / GT_STORE / GT_MLOAD_W / GT_MSTORE_W (and the aligned GT_MLOADA_W / GT_MSTOREA_W), so
// that the same template body serves every precision.

#ifndef PRECISION
#define PRECISION 32  // 16 (half), 32 (float), 64 (double) or 1632 (half memory, float arithmetic)
#endif

#if PRECISION == 16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half real;
typedef half real1;
typedef half2 real2;
typedef half4 real4;
typedef half8 real8;
typedef half16 real16;
typedef float real_arg;  // alpha and beta travel as float: half kernel arguments are not portable
#define GT_HALF_MEMORY 0
#elif PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef double real1;
typedef double2 real2;
typedef double4 real4;
typedef double8 real8;
typedef double16 real16;
typedef double real_arg;
#define GT_HALF_MEMORY 0
#elif PRECISION == 32 || PRECISION == 1632
typedef float real;
typedef float real1;
typedef float2 real2;
typedef float4 real4;
typedef float8 real8;
typedef float16 real16;
typedef float real_arg;
// 1632 (16acc32): vload_half / vstore_half (core OpenCL 1.2) convert on every load and store, so
// half matrices need no cl_khr_fp16; half appears only as a pointer type, as OpenCL 1.2 requires.
#define GT_HALF_MEMORY (PRECISION == 1632)
#else
#error "PRECISION must be 16, 32, 64 or 1632"
#endif

#define ZERO ((real)0)

// Loads and stores of `W` consecutive values of the arithmetic type through a scalar pointer
// (private arrays, and matrix memory when it holds the arithmetic type): only scalar alignment is
// required, so any leading dimension and offset works.
#define GT_VLOAD_1(p) (*(p))
#define GT_VLOAD_2(p) vload2(0, (p))
#define GT_VLOAD_4(p) vload4(0, (p))
#define GT_VLOAD_8(p) vload8(0, (p))
#define GT_VLOAD_16(p) vload16(0, (p))
#define GT_VSTORE_1(v, p) (*(p) = (v))
#define GT_VSTORE_2(v, p) vstore2((v), 0, (p))
#define GT_VSTORE_4(v, p) vstore4((v), 0, (p))
#define GT_VSTORE_8(v, p) vstore8((v), 0, (p))
#define GT_VSTORE_16(v, p) vstore16((v), 0, (p))
#define GT_CAT2(a, b) a##b
#define GT_CAT(a, b) GT_CAT2(a, b)

#if GT_HALF_MEMORY
#define mreal half
// One element, and W consecutive elements (element alignment), converted to and from float.
// Stores round to nearest even, as the host's reference does.
#define GT_LOAD(p) vload_half(0, (p))
#define GT_STORE(v, p) vstore_half_rte((v), 0, (p))
#define GT_MLOAD_1(p) vload_half(0, (p))
#define GT_MLOAD_2(p) vload_half2(0, (p))
#define GT_MLOAD_4(p) vload_half4(0, (p))
#define GT_MLOAD_8(p) vload_half8(0, (p))
#define GT_MLOAD_16(p) vload_half16(0, (p))
#define GT_MSTORE_1(v, p) vstore_half_rte((v), 0, (p))
#define GT_MSTORE_2(v, p) vstore_half2_rte((v), 0, (p))
#define GT_MSTORE_4(v, p) vstore_half4_rte((v), 0, (p))
#define GT_MSTORE_8(v, p) vstore_half8_rte((v), 0, (p))
#define GT_MSTORE_16(v, p) vstore_half16_rte((v), 0, (p))
// The same where the address is aligned to the whole vector: vloada_half keeps the load wide.
#define GT_MLOADA_1(p) vload_half(0, (p))
#define GT_MLOADA_2(p) vloada_half2(0, (p))
#define GT_MLOADA_4(p) vloada_half4(0, (p))
#define GT_MLOADA_8(p) vloada_half8(0, (p))
#define GT_MLOADA_16(p) vloada_half16(0, (p))
#define GT_MSTOREA_1(v, p) vstore_half_rte((v), 0, (p))
#define GT_MSTOREA_2(v, p) vstorea_half2_rte((v), 0, (p))
#define GT_MSTOREA_4(v, p) vstorea_half4_rte((v), 0, (p))
#define GT_MSTOREA_8(v, p) vstorea_half8_rte((v), 0, (p))
#define GT_MSTOREA_16(v, p) vstorea_half16_rte((v), 0, (p))
// A local array of `count` half elements named `name` (a __local half pointer). OpenCL 1.2
// without cl_khr_fp16 allows half only behind pointers, so the storage is declared as ushort.
#define GT_LOCAL_ARRAY(name, count) \
  __local ushort name##_bits[count];  \
  __local half* const name = (__local half*)name##_bits
#else
#define mreal real
#define GT_LOAD(p) (*(p))
#define GT_STORE(v, p) (*(p) = (v))
#define GT_MLOAD_1(p) GT_VLOAD_1(p)
#define GT_MLOAD_2(p) GT_VLOAD_2(p)
#define GT_MLOAD_4(p) GT_VLOAD_4(p)
#define GT_MLOAD_8(p) GT_VLOAD_8(p)
#define GT_MLOAD_16(p) GT_VLOAD_16(p)
#define GT_MSTORE_1(v, p) GT_VSTORE_1(v, p)
#define GT_MSTORE_2(v, p) GT_VSTORE_2(v, p)
#define GT_MSTORE_4(v, p) GT_VSTORE_4(v, p)
#define GT_MSTORE_8(v, p) GT_VSTORE_8(v, p)
#define GT_MSTORE_16(v, p) GT_VSTORE_16(v, p)
// Aligned: a plain vector dereference; the casts name __global, so these are for global matrix
// memory only.
#define GT_MLOADA_1(p) (*(p))
#define GT_MLOADA_2(p) (*(const __global real2*)(p))
#define GT_MLOADA_4(p) (*(const __global real4*)(p))
#define GT_MLOADA_8(p) (*(const __global real8*)(p))
#define GT_MLOADA_16(p) (*(const __global real16*)(p))
#define GT_MSTOREA_1(v, p) (*(p) = (v))
#define GT_MSTOREA_2(v, p) (*(__global real2*)(p) = (v))
#define GT_MSTOREA_4(v, p) (*(__global real4*)(p) = (v))
#define GT_MSTOREA_8(v, p) (*(__global real8*)(p) = (v))
#define GT_MSTOREA_16(v, p) (*(__global real16*)(p) = (v))
#define GT_LOCAL_ARRAY(name, count) __local real name[count]
#endif

// Batched GEMM (one launch for the whole batch; the batch index is the work-group index in
// dimension 2). BATCH_LAYOUT 0: a single GEMM, no extra arguments. 1 (strided): matrix b of an
// operand starts b * stride elements after the operand's offset. 2 (offsets): matrix b of A, B
// and C starts at batch_offsets[3b], [3b + 1], [3b + 2] elements after the operands' offsets;
// OpenCL 1.2 cannot pass an array of buffer pointers, so one buffer per operand and an array of
// element offsets into it stand in for the pointer-array form of batched BLAS.
#ifndef BATCH_LAYOUT
#define BATCH_LAYOUT 0
#endif
#if BATCH_LAYOUT == 0
#define GT_BATCH_ARGS
#define GT_BATCH_INDEX 0
#define GT_BATCH_A 0
#define GT_BATCH_B 0
#define GT_BATCH_C 0
#else
// Work-groups in dimension 2 per batch entry: a template that also splits K along dimension 2
// sets this to its split factor before the include.
#ifndef GT_BATCH_GROUPS_Z
#define GT_BATCH_GROUPS_Z 1
#endif
#define GT_BATCH_INDEX ((int)get_group_id(2) / (GT_BATCH_GROUPS_Z))
#endif
#if BATCH_LAYOUT == 1
#define GT_BATCH_ARGS , const int a_stride, const int b_stride, const int c_stride
#define GT_BATCH_A (GT_BATCH_INDEX * a_stride)
#define GT_BATCH_B (GT_BATCH_INDEX * b_stride)
#define GT_BATCH_C (GT_BATCH_INDEX * c_stride)
#elif BATCH_LAYOUT == 2
#define GT_BATCH_ARGS , const __global int* restrict batch_offsets
#define GT_BATCH_A (batch_offsets[3 * GT_BATCH_INDEX])
#define GT_BATCH_B (batch_offsets[3 * GT_BATCH_INDEX + 1])
#define GT_BATCH_C (batch_offsets[3 * GT_BATCH_INDEX + 2])
#elif BATCH_LAYOUT != 0
#error "BATCH_LAYOUT must be 0 (none), 1 (strided) or 2 (offsets)"
#endif
