// Probe: does NVIDIA's OpenCL run a kernel whose PTX declares a thread-block cluster, and do
// distributed shared memory reads work from OpenCL C inline PTX?
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <chrono>

static const char* kSrc = R"CL(
__kernel void probe(__global float* out, __global uint* ranks) {
  __local float s[256];
  const uint lid = get_local_id(0);
  uint rank, nrank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(nrank));
  s[lid] = (float)(get_group_id(0) * 1000 + lid);
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#ifdef DSMEM
  const uint peer = rank ^ 1u;
  const uint addr = (uint)(size_t)&s[255 - lid];
  uint remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(peer));
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  float v = (float)((get_group_id(0) ^ 1) * 1000 + 255 - lid);
#endif
  out[get_global_id(0)] = v;
  uint ncl;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(ncl));
  if (lid == 0) ranks[get_group_id(0)] = ncl * 10000 + rank * 100 + nrank;
}
)CL";

#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { printf("FAIL %s = %d\n", #x, e_); return 1; } } while (0)

int main(int argc, char** argv) {
  int cluster = argc > 1 ? atoi(argv[1]) : 2;
  cl_platform_id plats[8]; cl_uint np = 0;
  CHECK(clGetPlatformIDs(8, plats, &np));
  cl_device_id dev = nullptr;
  for (cl_uint i = 0; i < np && !dev; ++i) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, &nd) != CL_SUCCESS) dev = nullptr;
  }
  if (!dev) { printf("no GPU\n"); return 1; }
  cl_int err;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &err); CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err); CHECK(err);
  cl_program p = clCreateProgramWithSource(ctx, 1, &kSrc, nullptr, &err); CHECK(err);
  const char* opts = argc > 2 ? argv[2] : "";
  err = clBuildProgram(p, 1, &dev, opts, nullptr, nullptr);
  char log[65536]; size_t ll = 0;
  clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, &ll);
  printf("source build %d, log: %.*s\n", err, (int)ll, log);
  if (err) return 1;
  size_t bs = 0; CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bs, &bs, nullptr));
  std::string ptx(bs, '\0'); unsigned char* bp = (unsigned char*)&ptx[0];
  CHECK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bp, &bp, nullptr));
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  // The entry's directives go between its parameter list and its body.
  size_t entry = ptx.find(".entry probe");
  size_t body = ptx.find("{", entry);
  if (cluster > 0) {
    const char* extra = getenv("EXTRA_DIR") ? getenv("EXTRA_DIR") : "";
    std::string dir = "\n.reqnctapercluster " + std::to_string(cluster) + ", 1, 1\n" + extra + "\n";
    ptx.insert(body, dir);
  }
  FILE* f = fopen("probe.ptx", "w"); fputs(ptx.c_str(), f); fclose(f);
  const unsigned char* bin = (const unsigned char*)ptx.c_str(); size_t blen = ptx.size() + 1;
  cl_int bstat;
  cl_program p2 = clCreateProgramWithBinary(ctx, 1, &dev, &blen, &bin, &bstat, &err);
  printf("create from binary %d status %d\n", err, bstat);
  if (err) return 1;
  err = clBuildProgram(p2, 1, &dev, "", nullptr, nullptr);
  clGetProgramBuildInfo(p2, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, &ll);
  printf("binary build %d, log: %.*s\n", err, (int)ll, log);
  if (err) return 1;
  cl_kernel k = clCreateKernel(p2, "probe", &err); CHECK(err);
  const int groups = 264;
  cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, groups * 256 * 4, nullptr, &err); CHECK(err);
  cl_mem rk = clCreateBuffer(ctx, CL_MEM_READ_WRITE, groups * 4, nullptr, &err); CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof out, &out)); CHECK(clSetKernelArg(k, 1, sizeof rk, &rk));
  size_t g = groups * 256, l = 256;
  err = clEnqueueNDRangeKernel(q, k, 1, nullptr, &g, &l, 0, nullptr, nullptr);
  printf("enqueue %d\n", err);
  err = clFinish(q); printf("finish %d\n", err);
  std::vector<float> h(groups * 256); std::vector<cl_uint> r(groups);
  CHECK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, h.size() * 4, h.data(), 0, nullptr, nullptr));
  CHECK(clEnqueueReadBuffer(q, rk, CL_TRUE, 0, r.size() * 4, r.data(), 0, nullptr, nullptr));
  int bad = 0;
  for (int gi = 0; gi < groups; ++gi)
    for (int li = 0; li < 256; ++li) {
      float want = (float)((gi ^ 1) * 1000 + (255 - li));
      if (h[gi * 256 + li] != want) { if (bad < 5) printf("bad g%d l%d got %f want %f\n", gi, li, h[gi*256+li], want); ++bad; }
    }
  printf("ranks of groups 0..5: %u %u %u %u %u %u; wrong %d of %d\n", r[0], r[1], r[2], r[3], r[4], r[5], bad, groups * 256);
  return 0;
}
