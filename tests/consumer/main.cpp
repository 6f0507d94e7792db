// One row-major SGEMM through the installed libgemmtune, checked against a plain loop. Exits 0
// when right; 77 when OpenCL lists no device (1 under GEMMTUNE_REQUIRE_DEVICE).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gemmtune/gemmtune.hpp>

int main() {
  cl_platform_id platform;
  cl_device_id device;
  cl_uint count = 0;
  if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0 ||
      clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &count) != CL_SUCCESS) {
    std::fprintf(stderr, "no OpenCL device\n");
    return std::getenv("GEMMTUNE_REQUIRE_DEVICE") ? 1 : 77;
  }
  cl_int err;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  const size_t m = 37, n = 21, k = 13;
  std::vector<float> a(m * k), b(k * n), c(m * n, NAN);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3);
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2);
  auto buffer = [&](std::vector<float>& v) {
    return clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                          v.size() * sizeof(float), v.data(), &err);
  };
  cl_mem da = buffer(a), db = buffer(b), dc = buffer(c);
  cl_event event = nullptr;
  const auto status = gemmtune::Gemm<float>(gemmtune::Layout::kRowMajor, gemmtune::Transpose::kNo,
                                            gemmtune::Transpose::kNo, m, n, k, 1.0f, da, 0, k, db,
                                            0, n, 0.0f, dc, 0, n, &queue, &event);
  if (status != gemmtune::StatusCode::kSuccess) {
    std::fprintf(stderr, "Gemm: %s: %s\n", gemmtune::StatusName(status),
                 gemmtune::LastErrorMessage());
    return 1;
  }
  clWaitForEvents(1, &event);
  clReleaseEvent(event);
  clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, c.size() * sizeof(float), c.data(), 0, nullptr,
                      nullptr);
  int wrong = 0;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float sum = 0;
      for (size_t p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
      if (c[i * n + j] != sum) ++wrong;
    }
  }
  gemmtune::Explanation why;
  gemmtune::GemmProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  if (gemmtune::Explain(problem, queue, &why) == gemmtune::StatusCode::kSuccess) {
    std::printf("ran %s %s (%s)\n", why.kernel.c_str(), why.parameters.c_str(), why.source.c_str());
  }
  for (cl_mem mem : {da, db, dc}) clReleaseMemObject(mem);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  if (wrong) {
    std::fprintf(stderr, "%d wrong elements\n", wrong);
    return 1;
  }
  std::printf("consumer: a %zux%zux%zu GEMM through the installed gemmtune::gemmtune is right\n", m,
              n, k);
  return 0;
}
