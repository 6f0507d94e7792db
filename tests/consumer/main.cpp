// SPDX-License-Identifier: Apache-2.0
// SGEMMs through the installed libgemmtune (the shared or the static library, as CMakeLists.txt
// links it), each checked against a plain loop: both storage orders, every transpose of A and B,
// odd shapes, offsets into the buffers, padded leading dimensions, beta 0 (C holds NaN, which must
// not be read) and beta 1/2. Exits 0 when all are right; 77 when OpenCL lists no device (1 under
// GEMMTUNE_REQUIRE_DEVICE).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <gemmtune/gemmtune.hpp>

namespace {

using gemmtune::Layout;
using gemmtune::Transpose;

struct Cl {
  cl_context context;
  cl_command_queue queue;
};

cl_mem upload(const Cl& cl, std::vector<float>& v) {
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            v.size() * sizeof(float), v.data(), &err);
  return err == CL_SUCCESS ? m : nullptr;
}

// One GEMM of m x n x k through gemmtune::Gemm, checked element by element (small integers:
// float sums are exact). Returns the number of wrong elements, or -1 when the call failed.
int check(const Cl& cl, Layout layout, Transpose ta, Transpose tb, size_t m, size_t n, size_t k,
          float beta) {
  const bool row = layout == Layout::kRowMajor;
  const bool a_t = ta == Transpose::kYes, b_t = tb == Transpose::kYes;
  // Each operand as stored: rows x cols; its leading dimension spans a row (row-major) or a
  // column, padded so that a kernel reading the wrong stride reads the wrong values.
  const size_t a_rows = a_t ? k : m, a_cols = a_t ? m : k;
  const size_t b_rows = b_t ? n : k, b_cols = b_t ? k : n;
  const size_t lda = (row ? a_cols : a_rows) + 1, ldb = (row ? b_cols : b_rows) + 2,
               ldc = (row ? n : m) + 3;
  const size_t a_off = 3, b_off = 1, c_off = 2;
  auto at = [&](size_t off, size_t ld, size_t r, size_t c) {
    return off + (row ? r * ld + c : c * ld + r);
  };
  std::vector<float> a(a_off + lda * (row ? a_rows : a_cols));
  std::vector<float> b(b_off + ldb * (row ? b_rows : b_cols));
  std::vector<float> c(c_off + ldc * (row ? m : n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2);
  for (size_t i = 0; i < c.size(); ++i) c[i] = beta == 0 ? NAN : float(int(i % 3));
  const std::vector<float> c0 = c;
  cl_mem da = upload(cl, a), db = upload(cl, b), dc = upload(cl, c);
  if (!da || !db || !dc) return -1;
  cl_event event = nullptr;
  cl_command_queue queue = cl.queue;
  const auto status = gemmtune::Gemm<float>(layout, ta, tb, m, n, k, 1.0f, da, a_off, lda, db,
                                            b_off, ldb, beta, dc, c_off, ldc, &queue, &event);
  int wrong = -1;
  if (status != gemmtune::StatusCode::kSuccess) {
    std::fprintf(stderr, "Gemm: %s: %s\n", gemmtune::StatusName(status),
                 gemmtune::LastErrorMessage());
  } else {
    clWaitForEvents(1, &event);
    clReleaseEvent(event);
    clEnqueueReadBuffer(cl.queue, dc, CL_TRUE, 0, c.size() * sizeof(float), c.data(), 0, nullptr,
                        nullptr);
    wrong = 0;
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        float sum = 0;
        for (size_t p = 0; p < k; ++p) {
          sum += a[a_t ? at(a_off, lda, p, i) : at(a_off, lda, i, p)] *
                 b[b_t ? at(b_off, ldb, j, p) : at(b_off, ldb, p, j)];
        }
        if (beta != 0) sum += beta * c0[at(c_off, ldc, i, j)];
        if (c[at(c_off, ldc, i, j)] != sum) ++wrong;
      }
    }
  }
  for (cl_mem mem : {da, db, dc}) clReleaseMemObject(mem);
  return wrong;
}

}  // namespace

// The first device of the first platform with one, or of the platform $GEMMTUNE_TEST_PLATFORM
// names (a substring of its name: the driver tests run the consumer on Mesa's OpenCL too).
bool find_device(cl_device_id* device) {
  cl_platform_id platforms[16];
  cl_uint count = 0;
  if (clGetPlatformIDs(16, platforms, &count) != CL_SUCCESS) return false;
  const char* wanted = std::getenv("GEMMTUNE_TEST_PLATFORM");
  for (cl_uint i = 0; i < count && i < 16; ++i) {
    char name[256] = {};
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
    if (wanted && *wanted && !std::strstr(name, wanted)) continue;
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, device, &n) == CL_SUCCESS && n > 0) {
      return true;
    }
  }
  return false;
}

int main() {
  cl_device_id device;
  if (!find_device(&device)) {
    std::fprintf(stderr, "no OpenCL device\n");
    return std::getenv("GEMMTUNE_REQUIRE_DEVICE") ? 1 : 77;
  }
  cl_int err;
  Cl cl;
  cl.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl.queue = clCreateCommandQueue(cl.context, device, 0, &err);
  struct Shape {
    size_t m, n, k;
    float beta;
  };
  int failed = 0, checked = 0;
  for (const Shape s : {Shape{37, 21, 13, 0.0f}, Shape{5, 33, 7, 0.5f}}) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
        for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
          const int wrong = check(cl, layout, ta, tb, s.m, s.n, s.k, s.beta);
          ++checked;
          if (wrong != 0) {
            ++failed;
            std::fprintf(stderr, "%zux%zux%zu %s %c%c beta %g: %s (%d)\n", s.m, s.n, s.k,
                         layout == Layout::kRowMajor ? "row-major" : "column-major",
                         ta == Transpose::kYes ? 'T' : 'N', tb == Transpose::kYes ? 'T' : 'N',
                         double(s.beta), wrong < 0 ? "the call failed" : "wrong elements", wrong);
          }
        }
      }
    }
  }
  gemmtune::Explanation why;
  gemmtune::GemmProblem problem;
  problem.m = 37;
  problem.n = 21;
  problem.k = 13;
  if (gemmtune::Explain(problem, cl.queue, &why) == gemmtune::StatusCode::kSuccess) {
    std::printf("ran %s %s (%s %s)\n", why.kernel.c_str(), why.parameters.c_str(),
                why.source.c_str(), why.origin.c_str());
  }
  clReleaseCommandQueue(cl.queue);
  clReleaseContext(cl.context);
  if (failed) {
    std::fprintf(stderr, "%d of %d GEMMs wrong\n", failed, checked);
    return 1;
  }
  std::printf(
      "consumer: %d GEMMs (every order and transpose, offsets, padded ld) through the "
      "installed %s are right\n",
      checked, GEMMTUNE_CONSUMER_TARGET);
  return 0;
}
