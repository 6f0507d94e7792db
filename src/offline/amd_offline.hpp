// SPDX-License-Identifier: Apache-2.0
// Building a kernel template's configuration for an AMD ISA without the card (the offline AMD
// target): the same source and build options the runtime would get, compiled by the LLVM AMDGPU
// backend and linked into a code object, whose metadata gives the real resources (VGPRs, SGPRs,
// LDS, scratch, spills, the largest work-group it accepts) and whose disassembly shows the
// instructions that matter. Waves per SIMD follow from the device profile's register file, granule
// and wave size. Results are cached on disk by a hash of everything that changes them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/core/configuration.hpp"
#include "src/core/problem.hpp"
#include "src/core/result.hpp"
#include "src/device/device_profile.hpp"
#include "src/kernel/kernel_spec.hpp"
#include "src/offline/amd_toolchain.hpp"

namespace gemmtune {

// Instructions of the kernel's code that matter for GEMM speed on AMD, counted in its disassembly
// (each ISA generation spells them its way: ds_read_b128 / ds_load_b128 ...).
struct InstructionFacts {
  int64_t total = 0;
  int64_t dot2_f32_f16 = 0;      // v_dot2(c/acc)_f32_f16: two half products into a float
  int64_t fma_mix = 0;           // v_fma_mix*: one half product at a time, where dot2 is not used
  int64_t lds_read_b128 = 0;     // 128-bit local-memory reads
  int64_t global_load_b128 = 0;  // 128-bit global (or flat) loads
  int64_t scratch_ops = 0;       // scratch (private memory) loads and stores: spills
};

// A kernel that the template's calls launch besides the main one, built for the same target:
// the split-K reduce kernel (in the main kernel's program) and the padding helper (PadHelper).
struct AmdHelperBuild {
  std::string entry;
  int64_t vgprs = 0, sgprs = 0;
  int64_t vgpr_spills = 0, sgpr_spills = 0;
  int64_t lds_bytes = 0, scratch_bytes = 0;

  bool spills() const { return vgpr_spills > 0 || sgpr_spills > 0 || scratch_bytes > 0; }
};

void to_json(nlohmann::json& j, const AmdHelperBuild& h);
void from_json(const nlohmann::json& j, AmdHelperBuild& h);

struct AmdBuild {
  std::string kernel, entry, isa;
  Configuration config;
  int64_t wavefront = 0;
  int64_t work_group_size = 0;  // of the configuration
  int64_t vgprs = 0, sgprs = 0, agprs = 0;
  int64_t vgpr_spills = 0, sgpr_spills = 0;
  int64_t lds_bytes = 0;            // per work-group
  int64_t scratch_bytes = 0;        // per work-item
  int64_t max_work_group_size = 0;  // what the code object accepts (.max_flat_workgroup_size)
  InstructionFacts instructions;
  Occupancy occupancy;  // from the profile: registers, LDS, hardware
  // The compiler's own waves per SIMD (its kernel-resource-usage remark; 0 when it printed none).
  // It differs from `occupancy` where it counts LDS otherwise (per RDNA work-group processor).
  int64_t compiler_waves = 0;
  std::vector<AmdHelperBuild> helpers;  // those the template declares (split-K, pad, align_ld)
  double compile_s = 0;
  bool cached = false;

  // The main kernel's spills; helpers_spill() those of the helpers.
  bool spills() const { return vgpr_spills > 0 || sgpr_spills > 0 || scratch_bytes > 0; }
  bool helpers_spill() const;
  // Whether a launch with the configuration's work-group size would be refused.
  bool launch_refused() const {
    return max_work_group_size > 0 && work_group_size > max_work_group_size;
  }
  // "63 VGPRs, 26 SGPRs, LDS 16384 B, no spill, 16 waves/SIMD (hardware), work-group 256 of 256"
  std::string summary() const;
  // "XgemmFastReduce 9 VGPRs, no spill; pad_copy 14 VGPRs, no spill" ("" without helpers).
  std::string helpers_summary() const;
  // Three lines: kernel, ISA and configuration; summary(); the instruction counts.
  std::string report() const;
  // The figures as a measured entry carries them (registers, LDS, scratch, spilled VGPRs).
  ResourceUsage usage() const;
};

void to_json(nlohmann::json& j, const AmdBuild& b);

// What a build needs besides the configuration.
struct AmdTarget {
  const DeviceProfile* profile = nullptr;  // an AMD profile: its name is the ISA (gfx1012)
  int64_t wavefront = 0;                   // 0: the profile's first (native) size
};

// The wave size `target` builds with: the one asked for, else the profile's first. Throws
// Error(kInvalidArgument) when the target is no AMD profile or its ISA runs no such wave.
int64_t target_wavefront(const AmdTarget& target);

class AmdOfflineCompiler {
 public:
  // `cache_dir`: "" = beside the binary cache (BinaryCache::default_dir()), "none" = no cache.
  AmdOfflineCompiler(AmdToolchain toolchain, std::string templates_dir,
                     const std::string& cache_dir);

  const AmdToolchain& toolchain() const { return toolchain_; }

  // Builds `config` of `spec` for `problem` (precision, transposes, batch layout, epilogue) on
  // `target`. Throws Error(kInvalidArgument) for a configuration the template or the device's
  // limits refuse, Error(kCheckFailed) with the compiler's message when it does not build, and
  // Error(kUnsupported) when the toolchain cannot run.
  AmdBuild build(const KernelSpec& spec, const Problem& problem, const Configuration& config,
                 const AmdTarget& target) const;
  // What would refuse every build of `spec` on `target`, checked before any: the target (as
  // target_wavefront), and a template with no OpenCL source here (CLBlast's own kernels). Throws
  // Error(kInvalidArgument) naming it.
  void check_buildable(const KernelSpec& spec, const AmdTarget& target) const;

 private:
  AmdToolchain toolchain_;
  std::string templates_dir_;
  std::string cache_dir_;  // "" = none
};

// The limits an AMD profile sets on configurations offline: work-group size (1024, the AMDGPU
// maximum), local memory per work-group and registers per work-item from the profile's figures,
// and how a register cap is applied.
DeviceLimits offline_limits(const DeviceProfile& profile);

// Counts the instructions of InstructionFacts in llvm-objdump's disassembly.
InstructionFacts count_instructions(const std::string& disassembly);

}  // namespace gemmtune

namespace gemmtune {

// The AMD profile `name` of `profiles` (e.g. "gfx1012"), or throws Error(kInvalidArgument) listing
// the AMD profiles there are.
const DeviceProfile& find_offline_target(const ProfileSet& profiles, const std::string& name);

}  // namespace gemmtune
