// Host cost of NVIDIA's OpenCL launch path: clSetKernelArg against clEnqueueNDRangeKernel.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <chrono>
#include <cstdio>
#include <vector>

static const char* kSrc = R"CL(
__kernel void k24(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9,
                  int a10, int a11, int a12, int a13, int a14, int a15, int a16, int a17, int a18,
                  int a19, __global float* o0, __global float* o1, __global float* o2, __global float* o3) {
  if (get_global_id(0) == 0 && a0 < 0) o0[0] = o1[0] + o2[0] + o3[0] + a19;
}
)CL";
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { printf("FAIL %s = %d\n", #x, e_); return 1; } } while (0)
using Clock = std::chrono::steady_clock;
int main() {
  cl_platform_id plats[8]; cl_uint np = 0; CHECK(clGetPlatformIDs(8, plats, &np));
  cl_device_id dev = nullptr;
  for (cl_uint i = 0; i < np && !dev; ++i) { cl_uint nd; if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, &nd) != CL_SUCCESS) dev = nullptr; }
  if (!dev) { printf("no GPU\n"); return 1; }
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CHECK(err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &kSrc, nullptr, &err); CHECK(err);
  CHECK(clBuildProgram(p, 1, &dev, "", nullptr, nullptr));
  cl_kernel k = clCreateKernel(p, "k24", &err); CHECK(err);
  cl_kernel k2 = clCreateKernel(p, "k24", &err); CHECK(err);
  cl_mem b[4]; for (auto& x : b) { x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 1 << 20, nullptr, &err); CHECK(err); }
  auto set_all = [&](cl_kernel kk, int salt) {
    for (int i = 0; i < 20; ++i) { int v = i + salt; clSetKernelArg(kk, i, sizeof v, &v); }
    for (int i = 0; i < 4; ++i) clSetKernelArg(kk, 20 + i, sizeof(cl_mem), &b[i]);
  };
  set_all(k, 0); set_all(k2, 0);
  size_t g = 128 * 132, l = 128;
  const int n = 4000;
  auto run = [&](const char* name, auto body) {
    for (int r = 0; r < 3; ++r) {
      clFinish(q);
      auto t0 = Clock::now();
      for (int i = 0; i < n; ++i) body(i);
      auto t1 = Clock::now();
      clFinish(q);
      auto t2 = Clock::now();
      printf("%-34s %7.2f us a call (host), %7.2f with finish\n", name,
             std::chrono::duration<double, std::micro>(t1 - t0).count() / n,
             std::chrono::duration<double, std::micro>(t2 - t0).count() / n);
    }
  };
  run("24 args set", [&](int i) { set_all(k, i & 1); });
  run("enqueue", [&](int) { clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &l, 0, nullptr, nullptr); });
  run("24 args + enqueue", [&](int i) { set_all(k, i & 1); clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &l, 0, nullptr, nullptr); });
  run("2 enqueues", [&](int) { clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &l, 0, nullptr, nullptr); clEnqueueNDRangeKernel(q, k2, 1, nullptr, &g, &l, 0, nullptr, nullptr); });
  run("2x(24 args + enqueue)", [&](int i) { set_all(k, i & 1); clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &l, 0, nullptr, nullptr); set_all(k2, i & 1); clEnqueueNDRangeKernel(q, k2, 1, nullptr, &g, &l, 0, nullptr, nullptr); });
  run("enqueue + event", [&](int) { cl_event e; clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &l, 0, nullptr, &e); clReleaseEvent(e); });
  return 0;
}
