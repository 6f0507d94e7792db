// SPDX-License-Identifier: Apache-2.0
// What the libgemmtune tests need besides the library: an OpenCL device, context and queue made
// with the plain OpenCL C API (as an application makes them), buffers, a scratch folder and a
// database file writer. Only the public header of the library is used.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gemmtune/gemmtune.hpp"
#include "tests/temp_dirs.hpp"

namespace gemmtune::api_test {

struct Cl {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string device_name;
  bool has_fp64 = false;

  template <typename T>
  cl_mem buffer(const std::vector<T>& host) const {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              host.size() * sizeof(T), const_cast<T*>(host.data()), &err);
    REQUIRE(err == CL_SUCCESS);
    return m;
  }
  template <typename T>
  void read(cl_command_queue q, cl_mem m, std::vector<T>& host) const {
    REQUIRE(clEnqueueReadBuffer(q, m, CL_TRUE, 0, host.size() * sizeof(T), host.data(), 0, nullptr,
                                nullptr) == CL_SUCCESS);
  }
  cl_command_queue new_queue() const {
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(context, device, 0, &err);
    REQUIRE(err == CL_SUCCESS);
    return q;
  }
};

// Whether platform `p` is the one $GEMMTUNE_TEST_PLATFORM names (a substring of its name; any
// platform when unset): the driver tests run the same tests on Mesa's OpenCL.
inline bool platform_wanted(cl_platform_id p) {
  const char* wanted = std::getenv("GEMMTUNE_TEST_PLATFORM");
  if (!wanted || !*wanted) return true;
  char name[256] = {};
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name - 1, name, nullptr);
  return std::string(name).find(wanted) != std::string::npos;
}

// The first GPU, else the first device of any type (of the platform $GEMMTUNE_TEST_PLATFORM
// names); null when OpenCL lists none.
inline const Cl* find_device() {
  static Cl* cl = []() -> Cl* {
    cl_uint platforms = 0;
    if (clGetPlatformIDs(0, nullptr, &platforms) != CL_SUCCESS || platforms == 0) return nullptr;
    std::vector<cl_platform_id> ids(platforms);
    clGetPlatformIDs(platforms, ids.data(), nullptr);
    for (cl_device_type type :
         {cl_device_type{CL_DEVICE_TYPE_GPU}, cl_device_type{CL_DEVICE_TYPE_ALL}}) {
      for (cl_platform_id p : ids) {
        if (!platform_wanted(p)) continue;
        cl_device_id d = nullptr;
        cl_uint n = 0;
        if (clGetDeviceIDs(p, type, 1, &d, &n) != CL_SUCCESS || n == 0) continue;
        auto* out = new Cl;
        out->platform = p;
        out->device = d;
        cl_int err = CL_SUCCESS;
        out->context = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &err);
        if (err != CL_SUCCESS) return nullptr;
        out->queue = clCreateCommandQueue(out->context, d, 0, &err);
        if (err != CL_SUCCESS) return nullptr;
        char text[1024] = {};
        clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof text - 1, text, nullptr);
        out->device_name = text;
        // The same trimming the library applies to device names.
        while (!out->device_name.empty() &&
               (out->device_name.back() == ' ' || out->device_name.back() == '\0')) {
          out->device_name.pop_back();
        }
        std::string extensions(8192, '\0');
        clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, extensions.size() - 1, &extensions[0], nullptr);
        out->has_fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
        return out;
      }
    }
    return nullptr;
  }();
  return cl;
}

// The device, or null after failing the test (GEMMTUNE_REQUIRE_DEVICE set: device tests must
// run) or warning that it is skipped.
inline const Cl* device_or_skip() {
  const Cl* cl = find_device();
  if (cl) return cl;
  const char* required = std::getenv("GEMMTUNE_REQUIRE_DEVICE");
  if (required && *required && std::string(required) != "0") {
    FAIL("no OpenCL device, and GEMMTUNE_REQUIRE_DEVICE is set");
  }
  // No assertion follows: under ctest (-w NoAssertions) a skipped test case fails, as every
  // device test of the main suite does.
  WARN("no OpenCL device: test skipped");
  return nullptr;
}

// A fresh folder under the system temp folder, removed when the test process exits.
inline std::string temp_dir() {
  return gemmtune::test::fresh_temp_dir("gemmtune-api-test");
}

// While it lives, the library takes the device profile `name` for the test device
// (GEMMTUNE_DEVICE_PROFILE), its plans dropped on both sides. Its end restores the library's
// state (no user database, no forced profile) also where a REQUIRE ends the test early.
class ForcedProfile {
 public:
  explicit ForcedProfile(const char* name) {
    REQUIRE(::setenv("GEMMTUNE_DEVICE_PROFILE", name, 1) == 0);
    ClearCache();
  }
  ~ForcedProfile() {
    SetDatabase("");
    ::unsetenv("GEMMTUNE_DEVICE_PROFILE");
    ClearCache();
  }
  ForcedProfile(const ForcedProfile&) = delete;
  ForcedProfile& operator=(const ForcedProfile&) = delete;
};

// xgemm_direct parameters every device runs (a 16x16 tile on 8x8 threads).
constexpr const char* kDirectParameters = R"({"WGD": 16, "MDIMCD": 8, "NDIMCD": 8, "MDIMAD": 8,
    "NDIMBD": 8, "KWID": 2, "VWMD": 1, "VWND": 1, "PADA": 1, "PADB": 1})";

struct DbEntry {
  std::string kernel, layout;
  int m, n, k;
  std::string parameters;  // a JSON object
  std::string extra = "";  // more fields of the entry ("\"baseline\": {...}"), or ""
};

// A gemmtune database for the device `device_name` (profile "generic", so that it matches by
// name only), row-major fp32 entries.
inline void write_database(const std::string& path, const std::string& device_name,
                           const std::vector<DbEntry>& entries) {
  std::ofstream out(path);
  out << R"({"format": "gemmtune-database", "schema_version": 1,
  "device": {"id": "test", "name": ")"
      << device_name << R"(", "vendor": "", "type": "cpu", "platform": "", "profile": "generic"},
  "metadata": {"created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z",
               "gemmtune_version": "0.1.0"},
  "entries": [)";
  for (size_t i = 0; i < entries.size(); ++i) {
    const DbEntry& e = entries[i];
    out << (i ? "," : "") << R"({"key": {"kernel": ")" << e.kernel << R"(", "precision": "32",
      "order": "row", "layout": ")"
        << e.layout << R"(", "batch": 1, "m": )" << e.m << ", \"n\": " << e.n << ", \"k\": " << e.k
        << R"(}, "parameters": )" << e.parameters << R"(, "gflops": 1.0, "status": "ok")"
        << (e.extra.empty() ? "" : ", " + e.extra) << "}";
  }
  out << "]}\n";
}

// One GEMM on `queue` checked against a plain loop, without Catch's assertions (which are not
// thread-safe): "" when right, else what went wrong.
template <typename T>
std::string run_quietly(const Cl& cl, cl_command_queue queue, Layout layout, Transpose ta_t,
                        size_t m, size_t n, size_t k, double beta, unsigned seed) {
  std::mt19937 rng(seed);
  const bool row = layout == Layout::kRowMajor, ta = ta_t != Transpose::kNo;
  const size_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const size_t lda = (row ? a_cols : a_rows) + 1, ldb = (row ? n : k) + 2, ldc = (row ? n : m) + 1;
  const size_t a_off = 3, b_off = 1, c_off = 2;
  auto at = [&](size_t off, size_t ld, size_t r, size_t c) {
    return off + (row ? r * ld + c : c * ld + r);
  };
  std::vector<T> ha(a_off + lda * (row ? a_rows : a_cols)), hb(b_off + ldb * (row ? k : n)),
      hc(c_off + ldc * (row ? m : n));
  for (auto& v : ha) v = static_cast<T>(static_cast<int>(rng() % 9) - 4);
  for (auto& v : hb) v = static_cast<T>(static_cast<int>(rng() % 9) - 4);
  for (auto& v : hc) v = beta == 0 ? std::nanf("") : static_cast<T>(static_cast<int>(rng() % 5));
  const std::vector<T> before = hc;
  cl_int err = CL_SUCCESS;
  auto make = [&](std::vector<T>& h) {
    return clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                          h.size() * sizeof(T), h.data(), &err);
  };
  cl_mem da = make(ha), db = make(hb), dc = make(hc);
  const StatusCode s = Gemm<T>(layout, ta_t, Transpose::kNo, m, n, k, T(1), da, a_off, lda, db,
                               b_off, ldb, static_cast<T>(beta), dc, c_off, ldc, &queue);
  std::string problem;
  if (s != StatusCode::kSuccess) {
    problem = std::string(StatusName(s)) + ": " + LastErrorMessage();
  } else {
    clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, hc.size() * sizeof(T), hc.data(), 0, nullptr,
                        nullptr);
    for (size_t i = 0; i < m && problem.empty(); ++i) {
      for (size_t j = 0; j < n; ++j) {
        double sum = 0;
        for (size_t p = 0; p < k; ++p) {
          sum += double(ha[ta ? at(a_off, lda, p, i) : at(a_off, lda, i, p)]) *
                 double(hb[at(b_off, ldb, p, j)]);
        }
        if (beta != 0) sum += beta * double(before[at(c_off, ldc, i, j)]);
        if (std::abs(double(hc[at(c_off, ldc, i, j)]) - sum) > 1e-3) {
          problem = "wrong C[" + std::to_string(i) + "," + std::to_string(j) + "]";
          break;
        }
      }
    }
  }
  for (cl_mem x : {da, db, dc}) clReleaseMemObject(x);
  return problem;
}

}  // namespace gemmtune::api_test
