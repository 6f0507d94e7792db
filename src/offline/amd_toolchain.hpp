// SPDX-License-Identifier: Apache-2.0
// The LLVM AMDGPU toolchain that builds kernels for AMD ISAs on a machine without an AMD card:
// clang (16 or newer: clang-15 caps gfx11 kernels at 128 VGPRs and spills where 16 does not),
// lld to link a code object as a runtime would load it, llvm-objdump for the instructions, and
// the ROCm device libraries that define get_local_id, barrier and friends.
#pragma once

#include <string>

namespace gemmtune {

struct AmdToolchain {
  std::string clang, lld, objdump, llvm_as;  // paths
  std::string bitcode_dir;                   // ROCm device libraries (oclc_*.bc, ockl.bc ...)
  int clang_major = 0;
  std::string version;  // clang's first --version line: part of every cache key

  // Looks in this order: $GEMMTUNE_AMD_CLANG (with $GEMMTUNE_AMD_LLD, $GEMMTUNE_AMD_OBJDUMP and
  // $GEMMTUNE_AMD_BITCODE), what the build was configured with, then PATH (clang-19 ... clang-16,
  // clang) and the usual device-library folders. Throws Error(kUnsupported) with one line naming
  // what is missing and how to get it, and Error(kInvalidArgument) naming the variable and its
  // value where one of those variables names something unusable (never another tool instead).
  static AmdToolchain find();

  // The device-library folder for `isa` (e.g. "gfx1100"): bitcode_dir itself when it holds the
  // ISA's version file, else a folder under `work_dir` that links every library of bitcode_dir
  // and adds that file (it defines one constant, the ISA version; some distributions lack the
  // newer ones). Throws Error(kUnsupported) when it cannot be made.
  std::string bitcode_dir_for(const std::string& isa, const std::string& work_dir) const;
};

// "gfx1012" -> 10102, "gfx906" -> 9006, "gfx90a" -> 9010: major, minor and stepping as the device
// libraries' __oclc_ISA_version encodes them. Throws Error(kInvalidArgument) for a name that is
// no AMDGPU ISA.
int amdgpu_isa_version(const std::string& isa);

// Whether `name` spells an AMDGPU ISA ("gfx" and 3 or 4 hexadecimal digits).
bool is_amdgpu_isa(const std::string& name);

}  // namespace gemmtune
