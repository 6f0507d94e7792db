// SPDX-License-Identifier: Apache-2.0
/* The CLBlast client program of libgemmtune_clblast's tests (see clblast_client.h). It calls
   CLBlast's GEMM entry points as any application does, so that the same program runs plain
   (CLBlast serves every call) and with the library preloaded, and the two runs' results can be
   compared: every GEMM form in both storage orders and all four transposes, with offsets, padded
   leading dimensions, alpha and beta, batches, and arguments CLBlast refuses. */
#define _POSIX_C_SOURCE 200809L
#include "clblast_client.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clblast_c.h>

static const char* const kUsage =
    "usage: %s --dump FILE [--device P:D] [--threads N]\n"
    "         run every case, check each result against a reference computed on the host, and\n"
    "         write each call's status, event and result to FILE; then, with N > 1, N threads\n"
    "         at once, each running every case on a queue of its own (one context)\n"
    "       %s --compare FIRST SECOND\n"
    "         the second run's statuses and events as the first's, and its results within the\n"
    "         verification tolerance of the first's\n"
    "       %s --bench [--shapes MxNxK,...] [--precision s|d|h] [--layout row|col] [--runs N]\n"
    "                  [--device P:D]\n"
    "         the time of one call of each shape (A, B and C dense, alpha 1, beta 0)\n";

/* Exit codes: as gemmtune's (README: exit codes). */
enum { EXIT_CHECK_FAILED = 1, EXIT_BAD_INPUT = 2, EXIT_DEVICE_FAILURE = 3 };

/* gemmtune's verification rule (src/verify/reference.hpp): an output may differ from the exact
   result by kToleranceFactor * u * sqrt(K) times the sum of the magnitudes of its terms, u the
   unit roundoff of the arithmetic (CLBlast's half GEMM computes in half). */
static const double kToleranceFactor = 8.0;
static const double kRoundoffSingle = 5.9604644775390625e-08; /* 2^-24 */
static const double kRoundoffDouble = 1.1102230246251565e-16; /* 2^-53 */
static const double kRoundoffHalf = 4.8828125e-04;            /* 2^-11 */

/* Elements between the matrices of a batch and after the last, which no call may write. */
static const size_t kGap = 5;
/* Most OpenCL platforms and devices looked at. */
enum { kMaxPlatforms = 16, kMaxDevices = 64 };
/* Values are multiples of 1/kValueSteps in [-1, 1]: exact in every precision. */
static const int kValueSteps = 64;
static const char* const kDefaultShapes =
    "256x256x256,512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096,1000x1000x1000,"
    "64x4096x4096,4096x64x4096,8x4096x4096";
enum { kDefaultRuns = 10, kWarmupCalls = 2 };
/* Most threads of a run (--threads): each runs every case on a queue of its own. */
enum { kMaxThreads = 16 };

/* ---- half precision ---- */

uint16_t client_half(double value) {
  const float f = (float)value;
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)
    return (uint16_t)(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
  if (magnitude >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds beyond 65504 */
  if (magnitude < 0x38800000u) {                                   /* a subnormal half or zero */
    const uint32_t shift = 126u - (magnitude >> 23);
    if (shift > 24u) return sign;
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t bits = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (bits & 1u))) ++bits;
    return (uint16_t)(sign | bits);
  }
  uint32_t bits = ((magnitude - 0x38000000u) >> 13);
  const uint32_t rest = magnitude & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ++bits;
  return (uint16_t)(sign | bits);
}

static double half_value(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double v;
  if (exponent == 0) {
    v = ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa ? NAN : INFINITY;
  } else {
    v = ldexp(mantissa + 1024, exponent - 25);
  }
  return (bits & 0x8000) ? -v : v;
}

/* ---- the cases ---- */

enum form { FORM_GEMM, FORM_STRIDED, FORM_BATCHED };
/* An argument made wrong on purpose, and the status CLBlast answers it with. */
enum fault { FAULT_NONE, FAULT_ZERO_M, FAULT_SHORT_LD_A, FAULT_SMALL_C, FAULT_ZERO_BATCH };

typedef struct {
  enum form form;
  client_precision precision;
  int layout, a_transpose, b_transpose;
  size_t m, n, k;
  size_t pad[3];    /* added to the leading dimension of A, B and C */
  size_t offset[3]; /* where the first matrix of A, B and C starts */
  double alpha, beta;
  size_t batch;        /* GEMMs in the call (1 for FORM_GEMM) */
  int distinct_alphas; /* FORM_BATCHED: another alpha for each GEMM */
  enum fault fault;
} gemm_case;

static const int kLayouts[2] = {CLBlastLayoutRowMajor, CLBlastLayoutColMajor};
static const int kTransposes[4][2] = {{CLBlastTransposeNo, CLBlastTransposeNo},
                                      {CLBlastTransposeNo, CLBlastTransposeYes},
                                      {CLBlastTransposeYes, CLBlastTransposeNo},
                                      {CLBlastTransposeYes, CLBlastTransposeYes}};

static gemm_case make_case(enum form form, client_precision precision, int layout, int trans,
                           size_t m, size_t n, size_t k, size_t batch) {
  gemm_case c;
  memset(&c, 0, sizeof c);
  c.form = form;
  c.precision = precision;
  c.layout = layout;
  c.a_transpose = kTransposes[trans][0];
  c.b_transpose = kTransposes[trans][1];
  c.m = m;
  c.n = n;
  c.k = k;
  c.alpha = 1.5;
  c.beta = -0.5;
  c.batch = batch;
  return c;
}

static void set_geometry(gemm_case* c, size_t pad_a, size_t pad_b, size_t pad_c, size_t offset_a,
                         size_t offset_b, size_t offset_c) {
  c->pad[0] = pad_a;
  c->pad[1] = pad_b;
  c->pad[2] = pad_c;
  c->offset[0] = offset_a;
  c->offset[1] = offset_b;
  c->offset[2] = offset_c;
}

/* Every case, in a fixed order (the dumps of two runs are compared case by case). */
static size_t make_cases(gemm_case* out, size_t capacity) {
  size_t n = 0;
#define ADD(c)                      \
  do {                              \
    if (n < capacity) out[n] = (c); \
    ++n;                            \
  } while (0)
  for (int l = 0; l < 2; ++l) {
    for (int t = 0; t < 4; ++t) {
      /* Single precision: every order and transpose, offsets and padded leading dimensions. */
      gemm_case s = make_case(FORM_GEMM, CLIENT_SINGLE, kLayouts[l], t, 37, 21, 13, 1);
      set_geometry(&s, 3, 5, 2, 7, 3, 11);
      ADD(s);
      /* Double precision: the same, another shape. */
      gemm_case d = make_case(FORM_GEMM, CLIENT_DOUBLE, kLayouts[l], t, 29, 31, 17, 1);
      set_geometry(&d, 1, 0, 4, 0, 5, 2);
      ADD(d);
    }
  }
  {
    /* Dense, alpha 1 and beta 0 (C is not an input), and a row or column vector. */
    gemm_case dense = make_case(FORM_GEMM, CLIENT_SINGLE, CLBlastLayoutRowMajor, 0, 64, 48, 32, 1);
    dense.alpha = 1.0;
    dense.beta = 0.0;
    ADD(dense);
    ADD(make_case(FORM_GEMM, CLIENT_SINGLE, CLBlastLayoutColMajor, 2, 1, 7, 32, 1));
    ADD(make_case(FORM_GEMM, CLIENT_SINGLE, CLBlastLayoutRowMajor, 1, 32, 1, 7, 1));
    ADD(make_case(FORM_GEMM, CLIENT_HALF, CLBlastLayoutRowMajor, 0, 16, 16, 16, 1));
  }
  {
    /* Strided batches. */
    gemm_case s = make_case(FORM_STRIDED, CLIENT_SINGLE, CLBlastLayoutRowMajor, 0, 20, 12, 9, 3);
    set_geometry(&s, 2, 0, 1, 4, 0, 6);
    ADD(s);
    gemm_case sc = make_case(FORM_STRIDED, CLIENT_SINGLE, CLBlastLayoutColMajor, 2, 17, 10, 8, 2);
    set_geometry(&sc, 0, 3, 0, 0, 9, 1);
    ADD(sc);
    ADD(make_case(FORM_STRIDED, CLIENT_DOUBLE, CLBlastLayoutRowMajor, 1, 11, 14, 6, 2));
    ADD(make_case(FORM_STRIDED, CLIENT_HALF, CLBlastLayoutRowMajor, 0, 16, 16, 16, 2));
  }
  {
    /* Batches at per-GEMM offsets: one alpha and beta, then another alpha for each GEMM. */
    gemm_case b = make_case(FORM_BATCHED, CLIENT_SINGLE, CLBlastLayoutRowMajor, 0, 19, 13, 7, 3);
    set_geometry(&b, 1, 2, 3, 5, 0, 2);
    ADD(b);
    gemm_case bd = make_case(FORM_BATCHED, CLIENT_SINGLE, CLBlastLayoutColMajor, 1, 19, 13, 7, 3);
    bd.distinct_alphas = 1;
    ADD(bd);
    ADD(make_case(FORM_BATCHED, CLIENT_DOUBLE, CLBlastLayoutColMajor, 3, 9, 15, 11, 2));
    ADD(make_case(FORM_BATCHED, CLIENT_HALF, CLBlastLayoutRowMajor, 0, 16, 16, 16, 2));
  }
  {
    /* Arguments CLBlast refuses. */
    gemm_case f = make_case(FORM_GEMM, CLIENT_SINGLE, CLBlastLayoutRowMajor, 0, 16, 16, 16, 1);
    f.fault = FAULT_ZERO_M;
    ADD(f);
    f.fault = FAULT_SHORT_LD_A;
    ADD(f);
    f.fault = FAULT_SMALL_C;
    ADD(f);
    f.layout = CLBlastLayoutColMajor;
    f.a_transpose = CLBlastTransposeYes;
    ADD(f);
    gemm_case fs = make_case(FORM_STRIDED, CLIENT_SINGLE, CLBlastLayoutRowMajor, 0, 16, 16, 16, 2);
    fs.fault = FAULT_ZERO_BATCH;
    ADD(fs);
    fs.fault = FAULT_SMALL_C;
    ADD(fs);
    gemm_case fb = make_case(FORM_BATCHED, CLIENT_SINGLE, CLBlastLayoutRowMajor, 0, 16, 16, 16, 2);
    fb.fault = FAULT_ZERO_BATCH;
    ADD(fb);
    fb.fault = FAULT_SMALL_C;
    ADD(fb);
  }
#undef ADD
  return n;
}

static int fault_status(enum fault fault) {
  switch (fault) {
    case FAULT_ZERO_M:
      return CLBlastInvalidDimension;
    case FAULT_SHORT_LD_A:
      return CLBlastInvalidLeadDimA;
    case FAULT_SMALL_C:
      return CLBlastInsufficientMemoryC;
    case FAULT_ZERO_BATCH:
      return CLBlastInvalidBatchCount;
    case FAULT_NONE:
      break;
  }
  return CLBlastSuccess;
}

/* The status a case may return: the fault's, else success or the device's lack of the
   precision. */
static int acceptable(const gemm_case* c, int status) {
  if (c->fault != FAULT_NONE) return status == fault_status(c->fault);
  return status == CLBlastSuccess ||
         (c->precision == CLIENT_HALF && status == CLBlastNoHalfPrecision) ||
         (c->precision == CLIENT_DOUBLE && status == CLBlastNoDoublePrecision);
}

static const char* precision_name(client_precision p) {
  return p == CLIENT_DOUBLE ? "d" : p == CLIENT_HALF ? "h" : "s";
}

static size_t element_size(client_precision p) {
  return p == CLIENT_DOUBLE ? sizeof(cl_double)
         : p == CLIENT_HALF ? sizeof(cl_half)
                            : sizeof(cl_float);
}

static double roundoff(client_precision p) {
  return p == CLIENT_DOUBLE ? kRoundoffDouble : p == CLIENT_HALF ? kRoundoffHalf : kRoundoffSingle;
}

static char transpose_letter(int t) {
  return t == CLBlastTransposeNo ? 'N' : t == CLBlastTransposeYes ? 'T' : 'C';
}

/* One operand as stored: its lines (rows in row-major order, columns in column-major order) of
   `line` elements `ld` apart, and where each GEMM of the batch finds it. */
typedef struct {
  size_t rows, cols, line, lines, ld, extent, stride;
  size_t offsets[CLIENT_MAX_BATCH];
  size_t size; /* elements of the buffer */
} operand;

static operand make_operand(const gemm_case* c, int which, size_t rows, size_t cols) {
  operand o;
  memset(&o, 0, sizeof o);
  const int row = c->layout == CLBlastLayoutRowMajor;
  o.rows = rows;
  o.cols = cols;
  o.line = row ? cols : rows;
  o.lines = row ? rows : cols;
  o.ld = o.line + c->pad[which];
  o.extent = (o.lines - 1) * o.ld + o.line;
  o.stride = o.extent + kGap;
  const size_t batch = c->batch ? c->batch : 1;
  for (size_t g = 0; g < batch && g < CLIENT_MAX_BATCH; ++g) {
    /* A batch at offsets places its GEMMs back to front, unlike a strided one. */
    const size_t slot = c->form == FORM_BATCHED ? batch - 1 - g : g;
    o.offsets[g] = c->offset[which] + slot * o.stride;
  }
  o.size = c->offset[which] + batch * o.stride;
  return o;
}

static size_t stored_index(const operand* o, int row_major, size_t r, size_t col) {
  return row_major ? r * o->ld + col : r + col * o->ld;
}

static uint64_t next_random(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return *state >> 33;
}

static void fill(double* values, size_t count, uint64_t seed) {
  uint64_t state = seed;
  for (size_t i = 0; i < count; ++i) {
    values[i] =
        (double)((int)(next_random(&state) % (2 * kValueSteps + 1)) - kValueSteps) / kValueSteps;
  }
}

static void* pack(const double* values, size_t count, client_precision p) {
  void* bytes = malloc(count * element_size(p) + 1);
  for (size_t i = 0; i < count; ++i) {
    if (p == CLIENT_DOUBLE) {
      ((cl_double*)bytes)[i] = values[i];
    } else if (p == CLIENT_HALF) {
      ((cl_half*)bytes)[i] = client_half(values[i]);
    } else {
      ((cl_float*)bytes)[i] = (cl_float)values[i];
    }
  }
  return bytes;
}

static double unpack(const void* bytes, size_t i, client_precision p) {
  if (p == CLIENT_DOUBLE) return ((const cl_double*)bytes)[i];
  if (p == CLIENT_HALF) return half_value(((const cl_half*)bytes)[i]);
  return ((const cl_float*)bytes)[i];
}

/* ---- OpenCL ---- */

typedef struct {
  cl_device_id id;
  cl_context context;
  cl_command_queue queue;
  char name[256];
} client_device;

/* The device named "P:D" (platform and device index), else the first GPU, else the first
   device. Returns 0 on success. */
static int open_device(const char* spec, client_device* out) {
  cl_platform_id platforms[kMaxPlatforms];
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(kMaxPlatforms, platforms, &platform_count) != CL_SUCCESS) platform_count = 0;
  if (platform_count > kMaxPlatforms) platform_count = kMaxPlatforms;
  cl_device_id chosen = NULL;
  unsigned want_platform = 0, want_device = 0;
  if (spec && sscanf(spec, "%u:%u", &want_platform, &want_device) != 2) {
    fprintf(stderr, "clblast_client: --device %s is not P:D\n", spec);
    return EXIT_BAD_INPUT;
  }
  const cl_device_type passes[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
  for (int pass = 0; pass < 2 && !chosen; ++pass) {
    for (cl_uint p = 0; p < platform_count && !chosen; ++p) {
      cl_device_id devices[kMaxDevices];
      cl_uint count = 0;
      const cl_device_type type = spec ? CL_DEVICE_TYPE_ALL : passes[pass];
      if (clGetDeviceIDs(platforms[p], type, kMaxDevices, devices, &count) != CL_SUCCESS) continue;
      if (count > kMaxDevices) count = kMaxDevices;
      if (spec) {
        if (p == want_platform && want_device < count) chosen = devices[want_device];
      } else if (count > 0) {
        chosen = devices[0];
      }
    }
  }
  if (!chosen) {
    fprintf(stderr, "clblast_client: no OpenCL device%s%s\n", spec ? " " : "", spec ? spec : "");
    return EXIT_DEVICE_FAILURE;
  }
  cl_int err = CL_SUCCESS;
  out->context = clCreateContext(NULL, 1, &chosen, NULL, NULL, &err);
  if (err == CL_SUCCESS) out->queue = clCreateCommandQueue(out->context, chosen, 0, &err);
  if (err != CL_SUCCESS) {
    fprintf(stderr, "clblast_client: cannot open the OpenCL device (error %d)\n", err);
    return EXIT_DEVICE_FAILURE;
  }
  out->id = chosen;
  clGetDeviceInfo(chosen, CL_DEVICE_NAME, sizeof out->name, out->name, NULL);
  return 0;
}

static void close_device(client_device* d) {
  clReleaseCommandQueue(d->queue);
  clReleaseContext(d->context);
}

static cl_mem make_buffer(const client_device* d, const double* values, size_t count,
                          client_precision p) {
  void* bytes = pack(values, count, p);
  cl_int err = CL_SUCCESS;
  cl_mem buffer = clCreateBuffer(d->context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                 count * element_size(p), bytes, &err);
  free(bytes);
  return err == CL_SUCCESS ? buffer : NULL;
}

/* ---- one case ---- */

/* What a call returned: its status, whether it gave an event, and C as the call left it with
   the bound on each element's difference from the exact result (0: must be as before). */
typedef struct {
  int status, event;
  size_t count;
  double *values, *bounds;
} outcome;

/* Calls the case's entry point. */
static int call_case(const client_api* api, const gemm_case* c, client_device* d, cl_mem a,
                     cl_mem b, cl_mem cm, const operand* oa, const operand* ob, const operand* oc,
                     cl_event* event) {
  size_t m = c->m, batch = c->batch;
  size_t a_ld = oa->ld;
  if (c->fault == FAULT_ZERO_M) m = 0;
  if (c->fault == FAULT_SHORT_LD_A) a_ld = oa->line - 1;
  if (c->fault == FAULT_ZERO_BATCH) batch = 0;
  if (c->form == FORM_GEMM) {
    return api->gemm(c->precision, c->layout, c->a_transpose, c->b_transpose, m, c->n, c->k,
                     c->alpha, a, oa->offsets[0], a_ld, b, ob->offsets[0], ob->ld, c->beta, cm,
                     oc->offsets[0], oc->ld, &d->queue, event);
  }
  if (c->form == FORM_STRIDED) {
    return api->strided(c->precision, c->layout, c->a_transpose, c->b_transpose, m, c->n, c->k,
                        c->alpha, a, oa->offsets[0], a_ld, oa->stride, b, ob->offsets[0], ob->ld,
                        ob->stride, c->beta, cm, oc->offsets[0], oc->ld, oc->stride, batch,
                        &d->queue, event);
  }
  double alphas[CLIENT_MAX_BATCH], betas[CLIENT_MAX_BATCH];
  for (size_t g = 0; g < CLIENT_MAX_BATCH; ++g) {
    alphas[g] = c->distinct_alphas ? c->alpha + 0.25 * (double)g : c->alpha;
    betas[g] = c->beta;
  }
  return api->batched(c->precision, c->layout, c->a_transpose, c->b_transpose, m, c->n, c->k,
                      alphas, a, oa->offsets, a_ld, b, ob->offsets, ob->ld, betas, cm, oc->offsets,
                      oc->ld, batch, &d->queue, event);
}

/* The exact result of the case's GEMMs on C (`expected`) and each element's bound; elements no
   GEMM writes keep their value, bound 0. */
static void reference(const gemm_case* c, const operand* oa, const operand* ob, const operand* oc,
                      const double* a, const double* b, const double* c0, double* expected,
                      double* bounds) {
  const int row = c->layout == CLBlastLayoutRowMajor;
  const int ta = c->a_transpose != CLBlastTransposeNo, tb = c->b_transpose != CLBlastTransposeNo;
  const double tolerance = kToleranceFactor * roundoff(c->precision) * sqrt((double)c->k);
  for (size_t i = 0; i < oc->size; ++i) {
    expected[i] = c0[i];
    bounds[i] = 0.0;
  }
  for (size_t g = 0; g < c->batch; ++g) {
    const double alpha = c->distinct_alphas ? c->alpha + 0.25 * (double)g : c->alpha;
    for (size_t i = 0; i < c->m; ++i) {
      for (size_t j = 0; j < c->n; ++j) {
        double sum = 0.0, scale = 0.0;
        for (size_t l = 0; l < c->k; ++l) {
          const double x =
              a[oa->offsets[g] + (ta ? stored_index(oa, row, l, i) : stored_index(oa, row, i, l))];
          const double y =
              b[ob->offsets[g] + (tb ? stored_index(ob, row, j, l) : stored_index(ob, row, l, j))];
          sum += x * y;
          scale += fabs(x * y);
        }
        const size_t at = oc->offsets[g] + stored_index(oc, row, i, j);
        expected[at] = alpha * sum + c->beta * c0[at];
        bounds[at] = tolerance * (fabs(alpha) * scale + fabs(c->beta * c0[at]));
      }
    }
  }
}

static void label(const gemm_case* c, char* out, size_t size) {
  static const char* const forms[] = {"gemm", "gemm-strided", "gemm-batched"};
  static const char* const faults[] = {"", " m=0", " short-lda", " small-c", " batch=0"};
  snprintf(out, size,
           "%s%s %s %c%c %zux%zux%zu batch=%zu ld+%zu,%zu,%zu off=%zu,%zu,%zu a=%g b=%g%s%s",
           precision_name(c->precision), forms[c->form],
           c->layout == CLBlastLayoutRowMajor ? "row" : "col", transpose_letter(c->a_transpose),
           transpose_letter(c->b_transpose), c->m, c->n, c->k, c->batch, c->pad[0], c->pad[1],
           c->pad[2], c->offset[0], c->offset[1], c->offset[2], c->alpha, c->beta,
           c->distinct_alphas ? " distinct-alphas" : "", faults[c->fault]);
}

/* Runs one case and checks it: the status is one the case allows, a successful call gives an
   event that completes, and C holds the reference within the bounds. Returns 0 when it passes. */
static int run_case(const client_api* api, client_device* d, const gemm_case* c, outcome* out,
                    const char* name) {
  const int ta = c->a_transpose != CLBlastTransposeNo, tb = c->b_transpose != CLBlastTransposeNo;
  const operand oa = make_operand(c, 0, ta ? c->k : c->m, ta ? c->m : c->k);
  const operand ob = make_operand(c, 1, tb ? c->n : c->k, tb ? c->k : c->n);
  operand oc = make_operand(c, 2, c->m, c->n);
  if (c->fault == FAULT_SMALL_C) {
    /* One element short of the last element the call writes. */
    size_t last = 0;
    for (size_t g = 0; g < c->batch; ++g) last = oc.offsets[g] > last ? oc.offsets[g] : last;
    oc.size = last + oc.extent - 1;
  }
  double* a = malloc(oa.size * sizeof(double));
  double* b = malloc(ob.size * sizeof(double));
  double* c0 = malloc(oc.size * sizeof(double));
  fill(a, oa.size, 1);
  fill(b, ob.size, 2);
  fill(c0, oc.size, 3);
  cl_mem buffers[3] = {make_buffer(d, a, oa.size, c->precision),
                       make_buffer(d, b, ob.size, c->precision),
                       make_buffer(d, c0, oc.size, c->precision)};
  char text[256];
  label(c, text, sizeof text);
  int failed = 0;
  memset(out, 0, sizeof *out);
  out->count = oc.size;
  out->values = malloc(oc.size * sizeof(double));
  out->bounds = malloc(oc.size * sizeof(double));
  if (!buffers[0] || !buffers[1] || !buffers[2]) {
    fprintf(stderr, "%s: %s: cannot create the buffers\n", name, text);
    failed = 1;
  } else {
    cl_event event = NULL;
    out->status = call_case(api, c, d, buffers[0], buffers[1], buffers[2], &oa, &ob, &oc, &event);
    out->event = event != NULL;
    if (event) {
      cl_int state = CL_QUEUED;
      if (clWaitForEvents(1, &event) != CL_SUCCESS ||
          clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL) !=
              CL_SUCCESS ||
          state != CL_COMPLETE) {
        fprintf(stderr, "%s: %s: the call's event did not complete\n", name, text);
        failed = 1;
      }
      clReleaseEvent(event);
    } else if (out->status == CLBlastSuccess) {
      fprintf(stderr, "%s: %s: a successful call gave no event\n", name, text);
      failed = 1;
    }
    clFinish(d->queue);
    void* bytes = malloc(oc.size * element_size(c->precision));
    clEnqueueReadBuffer(d->queue, buffers[2], CL_TRUE, 0, oc.size * element_size(c->precision),
                        bytes, 0, NULL, NULL);
    for (size_t i = 0; i < oc.size; ++i) out->values[i] = unpack(bytes, i, c->precision);
    free(bytes);
  }
  double* expected = malloc(oc.size * sizeof(double));
  if (out->status == CLBlastSuccess) {
    reference(c, &oa, &ob, &oc, a, b, c0, expected, out->bounds);
  } else {
    for (size_t i = 0; i < oc.size; ++i) {
      expected[i] = c0[i]; /* a refused call writes nothing */
      out->bounds[i] = 0.0;
    }
  }
  if (!acceptable(c, out->status)) {
    fprintf(stderr, "%s: %s: status %d\n", name, text, out->status);
    failed = 1;
  }
  for (size_t i = 0; i < oc.size && !failed; ++i) {
    if (!(fabs(out->values[i] - expected[i]) <= out->bounds[i])) {
      fprintf(stderr, "%s: %s: element %zu is %.9g, expected %.9g (bound %.3g)\n", name, text, i,
              out->values[i], expected[i], out->bounds[i]);
      failed = 1;
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (buffers[i]) clReleaseMemObject(buffers[i]);
  }
  free(expected);
  free(a);
  free(b);
  free(c0);
  return failed;
}

/* One thread's share of a run: every case on its own queue; the first thread writes the dump. */
typedef struct {
  const client_api* api;
  client_device device;
  const gemm_case* cases;
  size_t count;
  FILE* dump; /* NULL: not written */
  const char* name;
  int failures;
} worker;

static void* work(void* arg) {
  worker* w = (worker*)arg;
  for (size_t i = 0; i < w->count; ++i) {
    outcome out;
    w->failures += run_case(w->api, &w->device, &w->cases[i], &out, w->name);
    if (w->dump) {
      char text[256];
      label(&w->cases[i], text, sizeof text);
      fprintf(w->dump, "case %zu %s | status %d event %d values %zu\n", i, text, out.status,
              out.event, out.count);
      for (size_t v = 0; v < out.count; ++v) {
        fprintf(w->dump, "%.17g %.17g\n", out.values[v], out.bounds[v]);
      }
    }
    free(out.values);
    free(out.bounds);
  }
  return NULL;
}

static int run_all(const client_api* api, const char* dump_path, const char* device, int threads,
                   const char* name) {
  client_device d;
  const int opened = open_device(device, &d);
  if (opened) return opened;
  FILE* dump = fopen(dump_path, "w");
  if (!dump) {
    fprintf(stderr, "%s: cannot write %s\n", name, dump_path);
    close_device(&d);
    return EXIT_BAD_INPUT;
  }
  const size_t count = make_cases(NULL, 0);
  gemm_case* cases = malloc(count * sizeof *cases);
  make_cases(cases, count);
  /* workers[0]: the pass that writes the dump, on the device's queue, alone. CLBlast 1.5 sets up
     a routine's tuning database on its first calls without a lock (two threads' first calls
     corrupt its heap), so the threads start once that pass has made every call once. */
  worker workers[kMaxThreads + 1];
  pthread_t ids[kMaxThreads + 1];
  for (int t = 0; t <= threads; ++t) {
    worker* w = &workers[t];
    memset(w, 0, sizeof *w);
    w->api = api;
    w->device = d;
    w->cases = cases;
    w->count = count;
    w->dump = t == 0 ? dump : NULL;
    w->name = name;
  }
  work(&workers[0]);
  int failures = workers[0].failures, started = 0;
  if (threads > 1) {
    for (int t = 1; t <= threads; ++t) {
      cl_int err = CL_SUCCESS;
      workers[t].device.queue = clCreateCommandQueue(d.context, d.id, 0, &err);
      if (err != CL_SUCCESS) {
        fprintf(stderr, "%s: cannot create a queue for thread %d (error %d)\n", name, t, err);
        failures = 1;
        break;
      }
      if (pthread_create(&ids[t], NULL, work, &workers[t]) != 0) {
        fprintf(stderr, "%s: cannot start thread %d\n", name, t);
        clReleaseCommandQueue(workers[t].device.queue);
        failures = 1;
        break;
      }
      started = t;
    }
    for (int t = 1; t <= started; ++t) {
      pthread_join(ids[t], NULL);
      clReleaseCommandQueue(workers[t].device.queue);
      failures += workers[t].failures;
    }
  }
  fclose(dump);
  close_device(&d);
  free(cases);
  printf("%s: %zu calls on %s, then %d threads, %d failed\n", name, count * (size_t)(1 + started),
         d.name, started, failures);
  return failures ? EXIT_CHECK_FAILED : 0;
}

/* ---- comparing two runs ---- */

static int read_line(FILE* f, char* line, size_t size) {
  if (!fgets(line, (int)size, f)) return 0;
  line[strcspn(line, "\n")] = '\0';
  return 1;
}

static int compare(const char* first_path, const char* second_path, const char* name) {
  FILE* first = fopen(first_path, "r");
  FILE* second = fopen(second_path, "r");
  if (!first || !second) {
    fprintf(stderr, "%s: cannot read %s\n", name, first ? second_path : first_path);
    if (first) fclose(first);
    if (second) fclose(second);
    return EXIT_BAD_INPUT;
  }
  char x[512], y[512];
  size_t cases = 0, values = 0, differences = 0;
  enum { kReported = 10 };
  while (read_line(first, x, sizeof x)) {
    if (!read_line(second, y, sizeof y)) {
      fprintf(stderr, "%s: %s ends before %s\n", name, second_path, first_path);
      differences = 1;
      break;
    }
    if (strncmp(x, "case ", 5) == 0) {
      ++cases;
      if (strcmp(x, y) != 0) {
        fprintf(stderr, "%s: the runs differ:\n  %s\n  %s\n", name, x, y);
        differences = 1;
        break;
      }
      continue;
    }
    double vx, bx, vy, by;
    if (sscanf(x, "%lf %lf", &vx, &bx) != 2 || sscanf(y, "%lf %lf", &vy, &by) != 2) {
      fprintf(stderr, "%s: not a dump line: '%s' or '%s'\n", name, x, y);
      differences = 1;
      break;
    }
    ++values;
    /* Each run is within its bound of the exact result. */
    if (!(fabs(vx - vy) <= bx + by) && !(vx == vy)) {
      if (differences < kReported) {
        fprintf(stderr, "%s: case %zu: %.9g and %.9g differ by more than %.3g\n", name, cases - 1,
                vx, vy, bx + by);
      }
      ++differences;
    }
  }
  if (!differences && read_line(second, y, sizeof y)) {
    fprintf(stderr, "%s: %s has more than %s\n", name, second_path, first_path);
    differences = 1;
  }
  fclose(first);
  fclose(second);
  if (differences) return EXIT_CHECK_FAILED;
  printf("%s: %zu calls alike, %zu values within tolerance\n", name, cases, values);
  return 0;
}

/* ---- the benchmark ---- */

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int bench(const client_api* api, const char* shapes, client_precision precision, int layout,
                 int runs, const char* device, const char* name) {
  client_device d;
  const int opened = open_device(device, &d);
  if (opened) return opened;
  printf("%s: %s precision on %s, %s-major, %d runs per shape\n", name,
         precision == CLIENT_DOUBLE ? "double"
         : precision == CLIENT_HALF ? "half"
                                    : "single",
         d.name, layout == CLBlastLayoutRowMajor ? "row" : "column", runs);
  int failed = 0;
  char* list = strdup(shapes);
  for (char *save = NULL, *shape = strtok_r(list, ",", &save); shape;
       shape = strtok_r(NULL, ",", &save)) {
    size_t m, n, k;
    if (sscanf(shape, "%zux%zux%zu", &m, &n, &k) != 3 || !m || !n || !k) {
      fprintf(stderr, "%s: shape '%s' is not MxNxK\n", name, shape);
      failed = EXIT_BAD_INPUT;
      break;
    }
    const int row = layout == CLBlastLayoutRowMajor;
    const size_t size[3] = {m * k, k * n, m * n};
    size_t largest = 0;
    for (int i = 0; i < 3; ++i) largest = size[i] > largest ? size[i] : largest;
    double* values = malloc(largest * sizeof(double));
    cl_mem buffers[3];
    for (int i = 0; i < 3; ++i) {
      fill(values, size[i], (uint64_t)i + 1);
      buffers[i] = make_buffer(&d, values, size[i], precision);
    }
    free(values);
    int status = CLBlastSuccess;
    double seconds = 0.0;
    if (!buffers[0] || !buffers[1] || !buffers[2]) {
      status = CLBlastTempBufferAllocFailure;
    } else {
      for (int w = 0; w < kWarmupCalls + runs && status == CLBlastSuccess; ++w) {
        if (w == kWarmupCalls) {
          clFinish(d.queue);
          seconds = now_seconds();
        }
        status = api->gemm(precision, layout, CLBlastTransposeNo, CLBlastTransposeNo, m, n, k, 1.0,
                           buffers[0], 0, row ? k : m, buffers[1], 0, row ? n : k, 0.0, buffers[2],
                           0, row ? n : m, &d.queue, NULL);
      }
      clFinish(d.queue);
      seconds = (now_seconds() - seconds) / runs;
    }
    if (status == CLBlastSuccess) {
      printf("bench %zux%zux%zu %.6f ms %.2f GFLOPS\n", m, n, k, seconds * 1e3,
             2.0 * (double)m * (double)n * (double)k / seconds * 1e-9);
    } else {
      printf("bench %zux%zux%zu status %d\n", m, n, k, status);
      failed = EXIT_CHECK_FAILED;
    }
    fflush(stdout);
    for (int i = 0; i < 3; ++i) {
      if (buffers[i]) clReleaseMemObject(buffers[i]);
    }
  }
  free(list);
  close_device(&d);
  return failed;
}

/* ---- the command line ---- */

int client_main(int argc, char** argv, const char* program, const client_api* api) {
  const char *dump = NULL, *device = NULL, *shapes = kDefaultShapes;
  const char* compared[2] = {NULL, NULL};
  int benchmark = 0, runs = kDefaultRuns, layout = CLBlastLayoutRowMajor, threads = 1;
  client_precision precision = CLIENT_SINGLE;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(arg, "--bench") == 0) {
      benchmark = 1;
      continue;
    }
    if (!value) {
      fprintf(stderr, kUsage, program, program, program);
      return EXIT_BAD_INPUT;
    }
    ++i;
    if (strcmp(arg, "--dump") == 0) {
      dump = value;
    } else if (strcmp(arg, "--device") == 0) {
      device = value;
    } else if (strcmp(arg, "--compare") == 0 && i + 1 < argc) {
      compared[0] = value;
      compared[1] = argv[++i];
    } else if (strcmp(arg, "--shapes") == 0) {
      shapes = value;
    } else if (strcmp(arg, "--threads") == 0 && atoi(value) > 0 && atoi(value) <= kMaxThreads) {
      threads = atoi(value);
    } else if (strcmp(arg, "--runs") == 0 && atoi(value) > 0) {
      runs = atoi(value);
    } else if (strcmp(arg, "--precision") == 0 && strchr("sdh", value[0]) && value[0] &&
               !value[1]) {
      precision = value[0] == 'd' ? CLIENT_DOUBLE : value[0] == 'h' ? CLIENT_HALF : CLIENT_SINGLE;
    } else if (strcmp(arg, "--layout") == 0 && (!strcmp(value, "row") || !strcmp(value, "col"))) {
      layout = strcmp(value, "row") == 0 ? CLBlastLayoutRowMajor : CLBlastLayoutColMajor;
    } else {
      fprintf(stderr, "%s: bad option %s %s\n", program, arg, value);
      return EXIT_BAD_INPUT;
    }
  }
  if (benchmark) return bench(api, shapes, precision, layout, runs, device, program);
  if (compared[0]) return compare(compared[0], compared[1], program);
  if (dump) return run_all(api, dump, device, threads, program);
  fprintf(stderr, kUsage, program, program, program);
  return EXIT_BAD_INPUT;
}
