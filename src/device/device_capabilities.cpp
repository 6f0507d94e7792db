// SPDX-License-Identifier: Apache-2.0
#include "src/device/device_capabilities.hpp"

#include <algorithm>

#include "src/core/error.hpp"
#include "src/core/text.hpp"
#include "src/device/device.hpp"

namespace gemmtune {

namespace {

// A capability gemmtune knows: the define the templates read, the one vendor whose devices may
// have it and, for NVIDIA, the least compute capability (major * 10 + minor; 0: any).
struct CapabilityRule {
  const char* name;
  const char* define;
  const char* vendor;
  int min_nv_compute_capability;
};

// cp.async: PTX ISA 7.0, "requires sm_80 or higher"; fence.acq_rel.gpu: PTX ISA 6.0, sm_70 or
// higher; bar.sync and bar.arrive with a barrier number and a thread count: sm_20 or higher,
// taken from sm_70 on, whose independent thread scheduling the producer rows' warps rely on.
// NVIDIA's OpenCL compiler takes inline PTX.
constexpr CapabilityRule kRules[] = {
    {"ptx_cp_async", "-DCP_ASYNC_PTX=1", "NVIDIA", 80},
    {"ptx_fence_gpu", "-DPTX_FENCES=1", "NVIDIA", 70},
    {"ptx_named_barriers", "-DPTX_NAMED_BARRIERS=1", "NVIDIA", 70}};

const CapabilityRule* rule_of(const std::string& name) {
  for (const auto& r : kRules) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

bool mentions(const std::string& haystack, const std::string& needle) {
  return lower(haystack).find(lower(needle)) != std::string::npos;
}

}  // namespace

std::vector<Capability> capabilities_from_json(const nlohmann::json& j,
                                               const std::vector<std::string>& vendor_contains,
                                               const std::string& origin) {
  std::vector<Capability> out;
  if (!j.contains("capabilities")) return out;
  const auto& list = j["capabilities"];
  const std::string shape =
      "field 'capabilities' must be an array of {\"name\": ..., \"source\": a public source}";
  if (!list.is_array()) throw invalid_file(origin, shape);
  for (const auto& e : list) {
    if (!e.is_object() || e.size() != 2 || !e.contains("name") || !e["name"].is_string() ||
        !e.contains("source") || !e["source"].is_string() ||
        e["source"].get<std::string>().empty()) {
      throw invalid_file(origin, shape);
    }
    const std::string name = e["name"].get<std::string>();
    const std::string field = "field 'capabilities." + name + "'";
    const CapabilityRule* rule = rule_of(name);
    if (!rule) throw invalid_file(origin, field + " names no capability gemmtune knows");
    const bool vendor_only =
        !vendor_contains.empty() &&
        std::all_of(vendor_contains.begin(), vendor_contains.end(),
                    [&](const std::string& v) { return mentions(v, rule->vendor); });
    if (!vendor_only) {
      throw invalid_file(origin, field + " needs a profile matched to " + rule->vendor +
                                     " devices only (match.vendor_contains)");
    }
    if (std::any_of(out.begin(), out.end(), [&](const Capability& c) { return c.name == name; })) {
      throw invalid_file(origin, field + " is declared twice");
    }
    out.push_back({name, e["source"].get<std::string>()});
  }
  return out;
}

nlohmann::json capabilities_to_json(const std::vector<Capability>& capabilities) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : capabilities) out.push_back({{"name", c.name}, {"source", c.source}});
  return out;
}

std::string in_kernel_reduction_refusal(const DeviceInfo& device,
                                        const std::string& build_options) {
  if (!device.nvidia() || build_options.find(rule_of("ptx_fence_gpu")->define) != std::string::npos)
    return "";
  return "needs device-scope fences, which NVIDIA's OpenCL gives only under the device profile's "
         "capability ptx_fence_gpu (compute capability 7.0 or later)";
}

std::string capability_build_options(const std::vector<Capability>& capabilities,
                                     const DeviceInfo& device, int nv_compute_capability) {
  std::string out;
  for (const auto& c : capabilities) {
    const CapabilityRule* rule = rule_of(c.name);
    if (!rule || !mentions(device.vendor, rule->vendor)) continue;
    if (nv_compute_capability < rule->min_nv_compute_capability) continue;
    out += (out.empty() ? "" : " ") + std::string(rule->define);
  }
  return out;
}

}  // namespace gemmtune
