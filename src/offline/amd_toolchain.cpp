// SPDX-License-Identifier: Apache-2.0
#include "src/offline/amd_toolchain.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "src/core/configured.hpp"
#include "src/core/error.hpp"
#include "src/device/binary_cache.hpp"
#include "src/offline/process.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

constexpr int kMinimumClangMajor = 16;
constexpr const char* kClangVariable = "GEMMTUNE_AMD_CLANG";
constexpr const char* kBitcodeVariable = "GEMMTUNE_AMD_BITCODE";
// Newest first: a newer backend knows more ISAs and allocates registers as ROCm's does today.
constexpr int kNewestClangMajor = 20;

const char* kInstallHint =
    "install clang-16 (or newer), lld-16, llvm-16 and rocm-device-libs (Debian 12: apt-get install "
    "clang-16 lld-16 llvm-16 rocm-device-libs), or set GEMMTUNE_AMD_CLANG and GEMMTUNE_AMD_BITCODE";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_dir(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_directory(path, ec);
}

// clang's major version from `--version`, 0 when it does not say.
int clang_major_of(const std::string& clang, std::string* first_line) {
  const ProcessResult r = run_process({clang, "--version"});
  if (r.exit_code != 0) return 0;
  *first_line = r.output.substr(0, r.output.find('\n'));
  static const std::regex kVersion(R"(clang version (\d+)\.)");
  std::smatch m;
  return std::regex_search(*first_line, m, kVersion) ? std::stoi(m[1].str()) : 0;
}

// The program a variable names: a value that names none is the user's mistake, said with the
// variable and the value, never passed over for another program.
std::string named_program(const char* variable, const std::string& value) {
  const auto path = find_program({value});
  if (!path) {
    throw invalid_argument(std::string(variable) + "=" + value +
                           " is no executable (a path, or a name on PATH)");
  }
  return *path;
}

// A sibling tool of `clang`: "<name>-<major>" next to it or on PATH, else "<name>".
std::optional<std::string> sibling(const std::string& clang, const std::string& name, int major,
                                   const char* override_env) {
  if (const std::string o = env(override_env); !o.empty()) return named_program(override_env, o);
  const std::string suffixed = name + "-" + std::to_string(major);
  const fs::path dir = fs::path(clang).parent_path();
  return find_program({(dir / suffixed).string(), suffixed, (dir / name).string(), name});
}

std::string find_bitcode_dir() {
  std::error_code ec;
  if (const std::string d = env(kBitcodeVariable); !d.empty()) {
    if (!is_dir(d) || !fs::exists(fs::path(d) / "ockl.bc", ec)) {
      throw invalid_argument(std::string(kBitcodeVariable) + "=" + d +
                             " is no folder of ROCm device libraries (ockl.bc, oclc_*.bc)");
    }
    return d;
  }
  if (const std::string d = configured::amd_bitcode(); is_dir(d)) return d;
  std::vector<std::string> candidates = {"/opt/rocm/amdgcn/bitcode", "/opt/rocm/lib/amdgcn/bitcode",
                                         "/usr/lib/amdgcn/bitcode", "/usr/share/amdgcn/bitcode"};
  for (const auto& entry : fs::directory_iterator("/usr/lib", ec)) {
    candidates.push_back((entry.path() / "amdgcn" / "bitcode").string());
  }
  for (const auto& d : candidates) {
    if (is_dir(d) && fs::exists(fs::path(d) / "ockl.bc", ec)) return d;
  }
  return "";
}

}  // namespace

bool is_amdgpu_isa(const std::string& name) {
  static const std::regex kIsa("gfx[0-9]{1,2}[0-9a-f][0-9a-f]");
  return std::regex_match(name, kIsa);
}

int amdgpu_isa_version(const std::string& isa) {
  if (!is_amdgpu_isa(isa)) throw invalid_argument("'" + isa + "' is no AMDGPU ISA (e.g. gfx1012)");
  const std::string digits = isa.substr(3);
  const int major = std::stoi(digits.substr(0, digits.size() - 2));
  const int minor = std::stoi(digits.substr(digits.size() - 2, 1), nullptr, 16);
  const int stepping = std::stoi(digits.substr(digits.size() - 1), nullptr, 16);
  return major * 1000 + minor * 100 + stepping;
}

AmdToolchain AmdToolchain::find() {
  AmdToolchain t;
  std::vector<std::string> names;
  // A compiler the user names is the one used: never silently another.
  if (const std::string o = env(kClangVariable); !o.empty()) {
    t.clang = named_program(kClangVariable, o);
    t.clang_major = clang_major_of(t.clang, &t.version);
    if (t.clang_major < kMinimumClangMajor) {
      throw invalid_argument(std::string(kClangVariable) + "=" + o +
                             " is no clang >= " + std::to_string(kMinimumClangMajor));
    }
  }
  // Where the configure step found one (CMakeLists.txt), if it did.
  if (const std::string clang = configured::amd_clang(); !clang.empty()) names.push_back(clang);
  for (int major = kNewestClangMajor; major >= kMinimumClangMajor; --major) {
    names.push_back("clang-" + std::to_string(major));
  }
  names.push_back("clang");
  std::string rejected;
  for (const auto& name : names) {
    if (!t.clang.empty()) break;
    const auto path = find_program({name});
    if (!path) continue;
    const int major = clang_major_of(*path, &t.version);
    if (major >= kMinimumClangMajor) {
      t.clang = *path;
      t.clang_major = major;
      break;
    }
    rejected = *path + (major > 0 ? " is clang " + std::to_string(major) : " does not run");
  }
  if (t.clang.empty()) {
    throw Error(ErrorCode::kUnsupported, "no AMDGPU compiler (clang >= 16)" +
                                             (rejected.empty() ? "" : ": " + rejected) + "; " +
                                             kInstallHint);
  }
  const auto lld = sibling(t.clang, "ld.lld", t.clang_major, "GEMMTUNE_AMD_LLD");
  const auto objdump = sibling(t.clang, "llvm-objdump", t.clang_major, "GEMMTUNE_AMD_OBJDUMP");
  const auto llvm_as = sibling(t.clang, "llvm-as", t.clang_major, "GEMMTUNE_AMD_LLVM_AS");
  if (!lld)
    throw Error(ErrorCode::kUnsupported, "no ld.lld beside " + t.clang + "; " + kInstallHint);
  if (!objdump) {
    throw Error(ErrorCode::kUnsupported, "no llvm-objdump beside " + t.clang + "; " + kInstallHint);
  }
  t.lld = *lld;
  t.objdump = *objdump;
  t.llvm_as = llvm_as.value_or("");
  t.bitcode_dir = find_bitcode_dir();
  if (t.bitcode_dir.empty()) {
    throw Error(ErrorCode::kUnsupported, "no ROCm device libraries (ockl.bc, oclc_*.bc) found; " +
                                             std::string(kInstallHint));
  }
  return t;
}

std::string AmdToolchain::bitcode_dir_for(const std::string& isa,
                                          const std::string& work_dir) const {
  const std::string digits = isa.substr(3);
  const std::string file = "oclc_isa_version_" + digits + ".bc";
  std::error_code ec;
  if (fs::exists(fs::path(bitcode_dir) / file, ec)) return bitcode_dir;
  if (llvm_as.empty()) {
    throw Error(ErrorCode::kUnsupported, bitcode_dir + " lacks " + file +
                                             " and no llvm-as is there to make it; install llvm-" +
                                             std::to_string(clang_major));
  }
  // One folder per library folder and ISA, made once and reused; made under a temporary name and
  // renamed, so that two processes never see half of it.
  const fs::path dir =
      fs::path(work_dir) /
      ("bitcode-" + hash_hex128(bitcode_dir + "\n" + version).substr(0, 12) + "-" + digits);
  if (fs::exists(dir / file, ec)) return dir.string();
  const fs::path tmp = dir.string() + ".tmp." + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec)
    throw Error(ErrorCode::kUnsupported, "cannot create " + tmp.string() + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(bitcode_dir, ec)) {
    if (entry.path().extension() == ".bc")
      fs::create_symlink(entry.path(), tmp / entry.path().filename(), ec);
  }
  // The module's data layout is the compiler's own for the target (it differs between LLVM
  // versions); an empty OpenCL file compiled to IR names it.
  const fs::path empty = tmp / "empty.cl";
  std::ofstream(empty) << "\n";
  const ProcessResult ir =
      run_process({clang, "-x", "cl", "-target", "amdgcn-amd-amdhsa", "-mcpu=" + isa, "-nogpulib",
                   "-S", "-emit-llvm", "-o", "-", empty.string()});
  static const std::regex kLayout(R"(target datalayout = "[^"]*")");
  std::smatch layout;
  std::regex_search(ir.output, layout, kLayout);
  fs::remove(empty, ec);
  const fs::path ll = tmp / (file + ".ll");
  {
    std::ofstream out(ll);
    out << layout.str() << "\ntarget triple = \"amdgcn-amd-amdhsa\"\n"
        << "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant "
           "i32 "
        << amdgpu_isa_version(isa) << ", align 4\n";
  }
  const ProcessResult r = run_process({llvm_as, ll.string(), "-o", (tmp / file).string()});
  fs::remove(ll, ec);
  if (r.exit_code != 0) {
    fs::remove_all(tmp, ec);
    throw Error(ErrorCode::kUnsupported,
                "cannot make " + file + " with " + llvm_as + ": " + r.output);
  }
  fs::rename(tmp, dir, ec);
  if (ec) fs::remove_all(tmp, ec);  // another process made it first: use theirs
  if (!fs::exists(dir / file, ec)) {
    throw Error(ErrorCode::kUnsupported, "cannot make the device-library folder " + dir.string());
  }
  return dir.string();
}

}  // namespace gemmtune
