// SPDX-License-Identifier: Apache-2.0
// Real resource figures of a compiled kernel, where the driver exposes them: the OpenCL kernel
// queries (local and private memory), NVIDIA's ptxas report in the build log (-cl-nv-verbose),
// and the AMDGPU code object's metadata note (registers, spills, LDS). The bottleneck report uses
// them instead of the kernel spec's estimates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/device/opencl.hpp"
#include "src/core/result.hpp"

namespace gemmtune {

// What ptxas reports for one entry function.
struct PtxasFigures {
  int64_t registers = 0;
  int64_t shared_bytes = 0;
  int64_t stack_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
};

// The figures of `kernel` in a build log holding ptxas -v output; nullopt when the log has no
// report for it.
std::optional<PtxasFigures> parse_ptxas_log(const std::string& log, const std::string& kernel);

// One kernel's entry in the NT_AMDGPU_METADATA note of an AMDGPU code object (code object v3+).
struct AmdgpuKernelFigures {
  std::string name;
  int64_t vgpr_count = 0;
  int64_t sgpr_count = 0;
  int64_t agpr_count = 0;
  int64_t vgpr_spill_count = 0;
  int64_t sgpr_spill_count = 0;
  int64_t group_segment_fixed_size = 0;    // LDS bytes
  int64_t private_segment_fixed_size = 0;  // scratch bytes per work-item
  int64_t wavefront_size = 0;
  int64_t max_flat_workgroup_size = 0;  // the largest work-group the code object accepts
};

// Decodes a MessagePack document into JSON (map keys that are not strings become their JSON
// text). Throws Error(kInvalidFile) naming `origin` and the byte offset of malformed input.
nlohmann::json decode_msgpack(const uint8_t* data, size_t size, const std::string& origin);

// The metadata note of an AMDGPU ELF code object (an offload bundle holding one is searched for
// its ELF). Throws Error(kInvalidFile) for a malformed ELF or note; nullopt when the binary is not
// an AMDGPU code object or has no metadata note.
std::optional<nlohmann::json> amdgpu_metadata(const std::vector<uint8_t>& binary,
                                              const std::string& origin);

// The figures of `kernel` (matched on ".name", or ".symbol" without ".kd") in a code object.
std::optional<AmdgpuKernelFigures> parse_amdgpu_code_object(const std::vector<uint8_t>& binary,
                                                            const std::string& kernel,
                                                            const std::string& origin);

// Everything that can be learned about a built kernel on its device: CL_KERNEL_LOCAL_MEM_SIZE and
// CL_KERNEL_PRIVATE_MEM_SIZE always, registers and spills from ptxas (NVIDIA, `build_log` of a
// -cl-nv-verbose build) or from the program binary's AMDGPU metadata. Never throws: figures that
// cannot be had stay empty. `source` lists where the figures came from.
ResourceUsage query_kernel_resources(const cl::Device& device, const cl::Program& program,
                                     const cl::Kernel& kernel, const std::string& kernel_name,
                                     const std::string& build_log);

}  // namespace gemmtune
