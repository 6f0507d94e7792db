// Shared definitions of the GEMM templates: the element type chosen by PRECISION and the vector
// types built from it. Included (textually, by the host) before a template's body.

#ifndef PRECISION
#define PRECISION 32  // 16 (half), 32 (float) or 64 (double)
#endif

#if PRECISION == 16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half real;
typedef half real1;
typedef half2 real2;
typedef half4 real4;
typedef half8 real8;
typedef float real_arg;  // alpha and beta travel as float: half kernel arguments are not portable
#elif PRECISION == 64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
typedef double real1;
typedef double2 real2;
typedef double4 real4;
typedef double8 real8;
typedef double real_arg;
#elif PRECISION == 32
typedef float real;
typedef float real1;
typedef float2 real2;
typedef float4 real4;
typedef float8 real8;
typedef float real_arg;
#else
#error "PRECISION must be 16, 32 or 64"
#endif

#define ZERO ((real)0)

// Loads and stores of `W` consecutive elements through a scalar pointer: only scalar alignment is
// required, so any leading dimension and offset works.
#define GT_VLOAD_1(p) (*(p))
#define GT_VLOAD_2(p) vload2(0, (p))
#define GT_VLOAD_4(p) vload4(0, (p))
#define GT_VLOAD_8(p) vload8(0, (p))
#define GT_VSTORE_1(v, p) (*(p) = (v))
#define GT_VSTORE_2(v, p) vstore2((v), 0, (p))
#define GT_VSTORE_4(v, p) vstore4((v), 0, (p))
#define GT_VSTORE_8(v, p) vstore8((v), 0, (p))
#define GT_CAT2(a, b) a##b
#define GT_CAT(a, b) GT_CAT2(a, b)
