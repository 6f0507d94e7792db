// SPDX-License-Identifier: Apache-2.0
// OpenCL device discovery and selection.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/device/opencl.hpp"

namespace gemmtune {

class ProfileSet;

struct DeviceInfo {
  int platform_index = 0;
  int device_index = 0;
  std::string platform_name;
  std::string platform_version;
  std::string name;
  // CL_DEVICE_BOARD_NAME_AMD: the marketing name AMD's drivers give beside an ISA name such as
  // "gfx1030" (e.g. "AMD Radeon RX 6800 XT"); "" where the driver has none.
  std::string board_name;
  std::string vendor;
  std::string driver_version;
  std::string device_version;
  std::string opencl_c_version;
  std::string type;  // "gpu", "cpu", "accelerator", "other"
  uint32_t compute_units = 0;
  uint32_t max_clock_mhz = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint64_t local_mem_bytes = 0;
  uint64_t max_work_group_size = 0;
  std::vector<uint64_t> max_work_item_sizes;
  bool has_fp16 = false;
  bool has_fp64 = false;
  bool has_subgroups = false;
  std::string extensions;
  std::string profile = "generic";  // name of the matched devices/ profile

  // Whether kernels must be OpenCL C 1.1 (Mesa's Clover): built with -cl-std=CL1.1.
  bool opencl_c_1_1() const;
  // Whether the vendor or the platform names NVIDIA (some drivers leave one of them vague).
  bool nvidia() const;
  std::string selector() const;  // "P:D"
  // A short file-name-safe identifier, e.g. "nvidia-h200" or "pthread-skylake-avx512".
  std::string id() const;
};

// $GEMMTUNE_DEVICE_OPENCL_C ("1.1"): every device is taken to compile OpenCL C of that version
// only, as Clover's do; with PoCL's POCL_MAX_WORK_GROUP_SIZE=256 it stands in for a Clover device
// where no AMD card is at hand.
inline constexpr const char* kOpenClCOverrideVariable = "GEMMTUNE_DEVICE_OPENCL_C";

// The extensions the driver names (CL_DEVICE_EXTENSIONS), sorted, each once: what `gemmtune
// devices --json` shows. Not part of to_json: journals and databases name a device, not its driver.
std::vector<std::string> extension_list(const DeviceInfo& d);

void to_json(nlohmann::json& j, const DeviceInfo& d);
void from_json(const nlohmann::json& j, DeviceInfo& d);

struct Device {
  DeviceInfo info;
  cl::Platform platform;
  cl::Device device;
};

// Every device of every platform, with `profiles` matched (may be null). A machine with no
// OpenCL platform gives an empty list.
std::vector<Device> list_devices(const ProfileSet* profiles);

// Selects a device: "" = first GPU, else first CPU; "P:D" indices; a profile name (gfx1012); or a
// case-insensitive substring of the device name. A selector matching nothing throws an Error that
// lists the devices; several matches pick the first and log a warning. select_device also warns
// of what the driver's description of the device means (driver_diagnostics.hpp): for the commands
// that open a device for a user; the helper processes of a search use select_device_from.
Device select_device(const std::string& selector, const ProfileSet* profiles);
Device select_device_from(const std::vector<Device>& devices, const std::string& selector);

}  // namespace gemmtune
