// SPDX-License-Identifier: Apache-2.0
#include "src/device/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_reader.hpp"
#include "src/core/text.hpp"
#include "src/device/device_profile.hpp"
#include "src/device/driver_diagnostics.hpp"

namespace gemmtune {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (std::isspace(static_cast<unsigned char>(s.back())) || s.back() == '\0')) {
    s.pop_back();
  }
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

std::string type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "gpu";
  if (t & CL_DEVICE_TYPE_CPU) return "cpu";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

// CL_DEVICE_BOARD_NAME_AMD, asked only of a driver that declares cl_amd_device_attribute_query
// (the extension that defines it); "" when the driver has none or the query fails.
std::string amd_board_name(const cl::Device& d, const std::string& extensions) {
  constexpr cl_device_info kBoardNameAmd = 0x4038;
  if ((" " + extensions + " ").find(" cl_amd_device_attribute_query ") == std::string::npos) {
    return "";
  }
  size_t size = 0;
  if (clGetDeviceInfo(d(), kBoardNameAmd, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  if (clGetDeviceInfo(d(), kBoardNameAmd, size, value.data(), nullptr) != CL_SUCCESS) return "";
  return trim(value);
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& d, int pi, int di) {
  DeviceInfo info;
  info.platform_index = pi;
  info.device_index = di;
  info.platform_name = trim(platform.getInfo<CL_PLATFORM_NAME>());
  info.platform_version = trim(platform.getInfo<CL_PLATFORM_VERSION>());
  info.name = trim(d.getInfo<CL_DEVICE_NAME>());
  info.vendor = trim(d.getInfo<CL_DEVICE_VENDOR>());
  info.driver_version = trim(d.getInfo<CL_DRIVER_VERSION>());
  info.device_version = trim(d.getInfo<CL_DEVICE_VERSION>());
  info.opencl_c_version = trim(d.getInfo<CL_DEVICE_OPENCL_C_VERSION>());
  if (const char* forced = std::getenv(kOpenClCOverrideVariable); forced && *forced) {
    info.opencl_c_version =
        std::string("OpenCL C ") + forced + " (" + kOpenClCOverrideVariable + ")";
  }
  info.type = type_name(d.getInfo<CL_DEVICE_TYPE>());
  info.compute_units = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.max_clock_mhz = d.getInfo<CL_DEVICE_MAX_CLOCK_FREQUENCY>();
  info.global_mem_bytes = d.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.max_alloc_bytes = d.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.local_mem_bytes = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.max_work_group_size = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  for (auto s : d.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>()) info.max_work_item_sizes.push_back(s);
  info.extensions = trim(d.getInfo<CL_DEVICE_EXTENSIONS>());
  info.board_name = amd_board_name(d, info.extensions);
  const std::string ext = " " + info.extensions + " ";
  info.has_fp16 = ext.find(" cl_khr_fp16 ") != std::string::npos;
  info.has_fp64 = ext.find(" cl_khr_fp64 ") != std::string::npos;
  info.has_subgroups = ext.find(" cl_khr_subgroups ") != std::string::npos ||
                       ext.find(" cl_intel_subgroups ") != std::string::npos;
  return info;
}

std::string device_list_text(const std::vector<Device>& devices) {
  std::ostringstream out;
  if (devices.empty()) return "no OpenCL device found";
  out << "available: ";
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i) out << "; ";
    out << devices[i].info.selector() << " " << devices[i].info.name << " ["
        << devices[i].info.profile << "]";
  }
  return out.str();
}

}  // namespace

bool DeviceInfo::opencl_c_1_1() const {
  return opencl_c_version.rfind("OpenCL C 1.1", 0) == 0 ||
         opencl_c_version.rfind("OpenCL C 1.0", 0) == 0;
}

bool DeviceInfo::nvidia() const {
  return lower(vendor).find("nvidia") != std::string::npos ||
         lower(platform_name).find("nvidia") != std::string::npos;
}

std::string DeviceInfo::selector() const {
  return std::to_string(platform_index) + ":" + std::to_string(device_index);
}

std::string DeviceInfo::id() const {
  std::string base = name;
  // PoCL names carry the host CPU after the architecture: keep the stable prefix.
  if (auto p = base.find('-'); lower(base).rfind("pthread", 0) == 0 && p != std::string::npos) {
    auto q = base.find('-', p + 1);
    if (q != std::string::npos) base = base.substr(0, base.find('-', q + 1));
  }
  std::string out;
  for (char c : lower(base)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

std::vector<std::string> extension_list(const DeviceInfo& d) {
  std::istringstream words(d.extensions);
  std::set<std::string> names{std::istream_iterator<std::string>(words), {}};
  return {names.begin(), names.end()};
}

void to_json(nlohmann::json& j, const DeviceInfo& d) {
  j = nlohmann::json{{"selector", d.selector()},
                     {"platform", d.platform_name},
                     {"platform_version", d.platform_version},
                     {"name", d.name},
                     {"vendor", d.vendor},
                     {"driver_version", d.driver_version},
                     {"device_version", d.device_version},
                     {"opencl_c_version", d.opencl_c_version},
                     {"type", d.type},
                     {"compute_units", d.compute_units},
                     {"max_clock_mhz", d.max_clock_mhz},
                     {"global_mem_bytes", d.global_mem_bytes},
                     {"max_alloc_bytes", d.max_alloc_bytes},
                     {"local_mem_bytes", d.local_mem_bytes},
                     {"max_work_group_size", d.max_work_group_size},
                     {"max_work_item_sizes", d.max_work_item_sizes},
                     {"fp16", d.has_fp16},
                     {"fp64", d.has_fp64},
                     {"subgroups", d.has_subgroups},
                     {"profile", d.profile}};
  if (!d.board_name.empty()) j["board_name"] = d.board_name;
}

void from_json(const nlohmann::json& j, DeviceInfo& d) {
  const JsonReader r(j);
  r.expect_object();
  d.platform_name = r.string_or("platform", "");
  d.platform_version = r.string_or("platform_version", "");
  d.name = r.string_or("name", "");
  d.board_name = r.string_or("board_name", "");
  d.vendor = r.string_or("vendor", "");
  d.driver_version = r.string_or("driver_version", "");
  d.device_version = r.string_or("device_version", "");
  d.opencl_c_version = r.string_or("opencl_c_version", "");
  d.type = r.string_or("type", "");
  constexpr int64_t kMaxUint32 = 0xFFFFFFFF;
  d.compute_units = static_cast<uint32_t>(r.integer_or("compute_units", 0, 0, kMaxUint32));
  d.max_clock_mhz = static_cast<uint32_t>(r.integer_or("max_clock_mhz", 0, 0, kMaxUint32));
  auto size = [&](const char* name) { return static_cast<uint64_t>(r.integer_or(name, 0, 0)); };
  d.global_mem_bytes = size("global_mem_bytes");
  d.max_alloc_bytes = size("max_alloc_bytes");
  d.local_mem_bytes = size("local_mem_bytes");
  d.max_work_group_size = size("max_work_group_size");
  d.max_work_item_sizes.clear();
  for (const auto& v : r.array("max_work_item_sizes", false)) {
    d.max_work_item_sizes.push_back(static_cast<uint64_t>(v.as_integer(0)));
  }
  d.has_fp16 = r.boolean_or("fp16", false);
  d.has_fp64 = r.boolean_or("fp64", false);
  d.has_subgroups = r.boolean_or("subgroups", false);
  d.profile = r.string_or("profile", "generic");
}

std::vector<Device> list_devices(const ProfileSet* profiles) {
  std::vector<Device> out;
  std::vector<cl::Platform> platforms;
  try {
    cl::Platform::get(&platforms);
  } catch (const cl::Error& e) {
    // The ICD loader reports "no platform" as an error; that is an empty list, not a failure.
    if (e.err() == CL_PLATFORM_NOT_FOUND_KHR) return out;
    throw Error(ErrorCode::kDevice, std::string("cannot list OpenCL platforms: ") + e.what() + " " +
                                        cl_error_name(e.err()));
  }
  for (size_t pi = 0; pi < platforms.size(); ++pi) {
    std::vector<cl::Device> devices;
    try {
      platforms[pi].getDevices(CL_DEVICE_TYPE_ALL, &devices);
    } catch (const cl::Error& e) {
      spdlog::warn("platform {} lists no devices ({})", pi, cl_error_name(e.err()));
      continue;
    }
    for (size_t di = 0; di < devices.size(); ++di) {
      Device d{describe(platforms[pi], devices[di], static_cast<int>(pi), static_cast<int>(di)),
               platforms[pi], devices[di]};
      if (profiles) {
        if (const auto* p = profiles->match(d.info)) d.info.profile = p->name;
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

Device select_device_from(const std::vector<Device>& devices, const std::string& selector) {
  if (devices.empty()) {
    throw Error(ErrorCode::kDevice,
                "no OpenCL device found (is an ICD such as pocl-opencl-icd installed?)");
  }
  if (selector.empty() || lower(selector) == "default") {
    for (const auto& d : devices) {
      if (d.info.type == "gpu") return d;
    }
    for (const auto& d : devices) {
      if (d.info.type == "cpu") return d;
    }
    return devices.front();
  }
  // "P:D" indices.
  if (auto colon = selector.find(':'); colon != std::string::npos) {
    const std::string ps = selector.substr(0, colon), ds = selector.substr(colon + 1);
    const bool numeric = !ps.empty() && !ds.empty() &&
                         std::all_of(ps.begin(), ps.end(), ::isdigit) &&
                         std::all_of(ds.begin(), ds.end(), ::isdigit);
    if (numeric) {
      for (const auto& d : devices) {
        if (std::to_string(d.info.platform_index) == ps &&
            std::to_string(d.info.device_index) == ds) {
          return d;
        }
      }
      throw invalid_argument("--device " + selector + " matches no device; " +
                             device_list_text(devices));
    }
  }
  std::vector<const Device*> matches;
  for (const auto& d : devices) {  // profile (architecture) name first
    if (lower(d.info.profile) == lower(selector)) matches.push_back(&d);
  }
  if (matches.empty()) {
    for (const auto& d : devices) {
      if (lower(d.info.name).find(lower(selector)) != std::string::npos) matches.push_back(&d);
    }
  }
  if (matches.empty()) {
    throw invalid_argument("--device '" + selector + "' matches no device; " +
                           device_list_text(devices));
  }
  if (matches.size() > 1) {
    spdlog::warn("--device '{}' matches {} devices; using {} {}", selector, matches.size(),
                 matches.front()->info.selector(), matches.front()->info.name);
  }
  return *matches.front();
}

Device select_device(const std::string& selector, const ProfileSet* profiles) {
  Device d = select_device_from(list_devices(profiles), selector);
  warn_device_notes(d.info);
  return d;
}

std::string cl_error_name(int code) {
  static const std::pair<int, const char*> kNames[] = {
      {0, "CL_SUCCESS"},
      {-1, "CL_DEVICE_NOT_FOUND"},
      {-2, "CL_DEVICE_NOT_AVAILABLE"},
      {-3, "CL_COMPILER_NOT_AVAILABLE"},
      {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
      {-5, "CL_OUT_OF_RESOURCES"},
      {-6, "CL_OUT_OF_HOST_MEMORY"},
      {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"},
      {-11, "CL_BUILD_PROGRAM_FAILURE"},
      {-30, "CL_INVALID_VALUE"},
      {-33, "CL_INVALID_DEVICE"},
      {-34, "CL_INVALID_CONTEXT"},
      {-36, "CL_INVALID_COMMAND_QUEUE"},
      {-38, "CL_INVALID_MEM_OBJECT"},
      {-44, "CL_INVALID_PROGRAM"},
      {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
      {-46, "CL_INVALID_KERNEL_NAME"},
      {-48, "CL_INVALID_KERNEL"},
      {-49, "CL_INVALID_ARG_INDEX"},
      {-50, "CL_INVALID_ARG_VALUE"},
      {-51, "CL_INVALID_ARG_SIZE"},
      {-52, "CL_INVALID_KERNEL_ARGS"},
      {-53, "CL_INVALID_WORK_DIMENSION"},
      {-54, "CL_INVALID_WORK_GROUP_SIZE"},
      {-55, "CL_INVALID_WORK_ITEM_SIZE"},
      {-56, "CL_INVALID_GLOBAL_OFFSET"},
      {-61, "CL_INVALID_BUFFER_SIZE"},
      {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
      {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  for (const auto& [c, n] : kNames) {
    if (c == code) return std::string(n) + " (" + std::to_string(code) + ")";
  }
  return "OpenCL error " + std::to_string(code);
}

}  // namespace gemmtune
