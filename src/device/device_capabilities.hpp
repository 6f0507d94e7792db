// SPDX-License-Identifier: Apache-2.0
// Device capabilities (a profile's "capabilities"): features of a device that kernel templates may
// use under a define the host adds to every build on such a device, declared as data in the
// device profile, each with its public source. Only the names gemmtune knows are accepted, each
// bound to one vendor:
//   ptx_cp_async  NVIDIA, compute capability 8.0 or later: PTX cp.async (CP_ASYNC_PTX=1), the
//                 asynchronous global-to-local copies of xgemm_fast's ASYNC stages.
//   ptx_fence_gpu NVIDIA, compute capability 7.0 or later: PTX fence.acq_rel.gpu (PTX_FENCES=1),
//                 the device-wide release and acquire of split-K's in-kernel reduction.
//   ptx_named_barriers NVIDIA, compute capability 7.0 or later: PTX bar.sync / bar.arrive on
//                 numbered barriers (PTX_NAMED_BARRIERS=1), the hand-over between xgemm_fast's
//                 producer rows (WSP) and the work-items that multiply.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gemmtune {

struct DeviceInfo;

struct Capability {
  std::string name;    // e.g. "ptx_cp_async"
  std::string source;  // the public source or measurement that says the device has it
};

// Reads "capabilities": [{"name": ..., "source": ...}] of profile `j` (none when absent).
// `vendor_contains` is the profile's match.vendor_contains: a capability binds the profile to its
// vendor, so a profile that may match another vendor's devices cannot declare it. Errors name
// `origin` and the field.
std::vector<Capability> capabilities_from_json(const nlohmann::json& j,
                                               const std::vector<std::string>& vendor_contains,
                                               const std::string& origin);
nlohmann::json capabilities_to_json(const std::vector<Capability>& capabilities);

// The build options of `capabilities` that `device` has, space-separated: the define of each
// whose vendor the device's is and, for NVIDIA's, whose least compute capability
// `nv_compute_capability` (major * 10 + minor, 0 where the device does not say) reaches. ""
// otherwise, so that a profile forced onto another device ($GEMMTUNE_DEVICE_PROFILE) never hands
// it a capability it lacks.
std::string capability_build_options(const std::vector<Capability>& capabilities,
                                     const DeviceInfo& device, int nv_compute_capability);

// Why a template's split-K in one launch must not run on `device` built with `build_options`,
// or "" where it may: on an NVIDIA device without PTX_FENCES (ptx_fence_gpu), whose OpenCL
// compiles mem_fence to membar.cta, a fence of the work-group's scope, so that one work-group's
// parts need not be visible to the work-group that adds them.
std::string in_kernel_reduction_refusal(const DeviceInfo& device, const std::string& build_options);

}  // namespace gemmtune
