// SPDX-License-Identifier: Apache-2.0
#include "src/offline/amd_offline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/binary_cache.hpp"
#include "src/device/device.hpp"
#include "src/device/kernel_resources.hpp"
#include "src/kernel/kernel_source.hpp"
#include "src/offline/process.hpp"

namespace gemmtune {

namespace fs = std::filesystem;

namespace {

// Bump when what a cached result holds changes, so that older files are never read as new.
constexpr int kCacheFormat = 4;  // 4: the helper kernels
// AMDGPU's largest work-group: the runtimes report 1024 for every ISA gemmtune targets.
constexpr int64_t kAmdMaxWorkGroupSize = 1024;
// The compile error shown in a one-line message: the first lines carry the cause.
constexpr size_t kErrorLines = 6;

// A private folder for one build's files, removed with it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "gemmtune-amd-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) {
      throw Error(ErrorCode::kUnsupported,
                  "cannot create a temporary folder under " + fs::temp_directory_path().string());
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

std::vector<std::string> split_options(const std::string& options) {
  std::istringstream in(options);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

std::string first_lines(const std::string& text, size_t n) {
  std::istringstream in(text);
  std::string line, out;
  for (size_t i = 0; i < n && std::getline(in, line);) {
    if (line.empty()) continue;
    out += (out.empty() ? "" : " | ") + line;
    ++i;
  }
  return out;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw Error(ErrorCode::kUnsupported, "cannot write " + path);
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// The occupancy that -Rpass-analysis=kernel-resource-usage reports for `entry`, 0 when none.
int64_t remarked_waves(const std::string& log, const std::string& entry) {
  static const std::regex kName(R"(remark: Function Name: (\S+))");
  static const std::regex kOccupancy(R"(remark:\s+Occupancy \[waves/SIMD\]: (\d+))");
  std::istringstream in(log);
  std::string line, current;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kName)) {
      current = m[1].str();
    } else if (current == entry && std::regex_search(line, m, kOccupancy)) {
      return std::stoll(m[1].str());
    }
  }
  return 0;
}

void from_cache_json(const nlohmann::json& j, AmdBuild& b) {
  b.vgprs = j.at("vgprs").get<int64_t>();
  b.sgprs = j.at("sgprs").get<int64_t>();
  b.agprs = j.at("agprs").get<int64_t>();
  b.vgpr_spills = j.at("vgpr_spills").get<int64_t>();
  b.sgpr_spills = j.at("sgpr_spills").get<int64_t>();
  b.lds_bytes = j.at("lds_bytes").get<int64_t>();
  b.scratch_bytes = j.at("scratch_bytes").get<int64_t>();
  b.max_work_group_size = j.at("max_work_group_size").get<int64_t>();
  const auto& i = j.at("instructions");
  b.instructions.total = i.at("total").get<int64_t>();
  b.instructions.dot2_f32_f16 = i.at("dot2_f32_f16").get<int64_t>();
  b.instructions.fma_mix = i.at("fma_mix").get<int64_t>();
  b.instructions.lds_read_b128 = i.at("lds_read_b128").get<int64_t>();
  b.instructions.global_load_b128 = i.at("global_load_b128").get<int64_t>();
  b.instructions.scratch_ops = i.at("scratch_ops").get<int64_t>();
  b.compile_s = j.at("compile_s").get<double>();
  b.compiler_waves = j.at("compiler_waves").get<int64_t>();
  b.helpers = j.at("helpers").get<std::vector<AmdHelperBuild>>();
}

AmdHelperBuild helper_of(const AmdgpuKernelFigures& f) {
  AmdHelperBuild h;
  h.entry = f.name;
  h.vgprs = f.vgpr_count;
  h.sgprs = f.sgpr_count;
  h.vgpr_spills = f.vgpr_spill_count;
  h.sgpr_spills = f.sgpr_spill_count;
  h.lds_bytes = f.group_segment_fixed_size;
  h.scratch_bytes = f.private_segment_fixed_size;
  return h;
}

}  // namespace

InstructionFacts count_instructions(const std::string& disassembly) {
  // An instruction line of llvm-objdump: indentation, the mnemonic, operands, "// address: bytes".
  static const std::regex kInstruction(
      R"(^\s+([sv]_\w+|ds_\w+|global_\w+|flat_\w+|buffer_\w+|scratch_\w+|image_\w+|exp\b\w*))");
  InstructionFacts f;
  std::istringstream in(disassembly);
  std::string line;
  std::smatch m;
  auto starts = [](const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; };
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, kInstruction)) continue;
    const std::string op = m[1].str();
    ++f.total;
    // gfx9 spells it v_dot2_f32_f16, gfx10 also v_dot2c_f32_f16 (accumulating into its
    // destination), gfx11 v_dot2acc_f32_f16: one instruction, two half products into a float.
    if (starts(op, "v_dot2") && op.find("f32_f16") != std::string::npos) ++f.dot2_f32_f16;
    if (starts(op, "v_fma_mix")) ++f.fma_mix;
    if (op == "ds_read_b128" || op == "ds_load_b128") ++f.lds_read_b128;
    if (op == "global_load_dwordx4" || op == "global_load_b128" || op == "flat_load_dwordx4" ||
        op == "flat_load_b128") {
      ++f.global_load_b128;
    }
    // OpenCL kernels reach global memory through global_/flat_ instructions; buffer_ and
    // scratch_ instructions touch only private memory (scratch) in them.
    if (starts(op, "scratch_") || starts(op, "buffer_load") || starts(op, "buffer_store")) {
      ++f.scratch_ops;
    }
  }
  return f;
}

std::string AmdBuild::summary() const {
  std::string s = fmt::format("{} VGPRs, {} SGPRs, LDS {} B, ", vgprs, sgprs, lds_bytes);
  s += spills()
           ? fmt::format("SPILLS ({} VGPRs, {} B scratch per lane)", vgpr_spills, scratch_bytes)
           : "no spill";
  s += fmt::format(", {} waves/SIMD ({}; the compiler says {}), wave{}, work-group {} of {}",
                   occupancy.waves, occupancy.limiter, compiler_waves, wavefront, work_group_size,
                   max_work_group_size);
  if (launch_refused()) s += " (REFUSED at launch)";
  return s;
}

bool AmdBuild::helpers_spill() const {
  return std::any_of(helpers.begin(), helpers.end(), [](const auto& h) { return h.spills(); });
}

std::string AmdBuild::helpers_summary() const {
  std::string s;
  for (const auto& h : helpers) {
    s += fmt::format("{}{} {} VGPRs, {}", s.empty() ? "" : "; ", h.entry, h.vgprs,
                     h.spills() ? fmt::format("SPILLS ({} VGPRs, {} B scratch per lane)",
                                              h.vgpr_spills, h.scratch_bytes)
                                : "no spill");
  }
  return s;
}

std::string AmdBuild::report() const {
  const std::string helper_line = helpers.empty() ? "" : "\n  helpers: " + helpers_summary();
  return fmt::format(
      "{} on {}: {}\n  {}{}\n  instructions: {} in all, v_dot2_f32_f16 {}, v_fma_mix {}, 128-bit "
      "LDS reads {}, 128-bit global loads {}, scratch {}{}\n",
      kernel, isa, to_string(config), summary(), helper_line, instructions.total,
      instructions.dot2_f32_f16, instructions.fma_mix, instructions.lds_read_b128,
      instructions.global_load_b128, instructions.scratch_ops,
      cached ? " (cached)" : fmt::format(" ({:.1f} s)", compile_s));
}

ResourceUsage AmdBuild::usage() const {
  ResourceUsage u;
  u.registers = vgprs;
  u.local_mem_bytes = lds_bytes;
  u.private_mem_bytes = scratch_bytes;
  u.spills = vgpr_spills + sgpr_spills;
  u.source = "offline AMDGPU build for " + isa;
  return u;
}

void to_json(nlohmann::json& j, const AmdBuild& b) {
  j = nlohmann::json{{"kernel", b.kernel},
                     {"isa", b.isa},
                     {"wavefront", b.wavefront},
                     {"config", configuration_to_json(b.config)},
                     {"work_group_size", b.work_group_size},
                     {"vgprs", b.vgprs},
                     {"sgprs", b.sgprs},
                     {"agprs", b.agprs},
                     {"vgpr_spills", b.vgpr_spills},
                     {"sgpr_spills", b.sgpr_spills},
                     {"lds_bytes", b.lds_bytes},
                     {"scratch_bytes", b.scratch_bytes},
                     {"spills", b.spills()},
                     {"max_work_group_size", b.max_work_group_size},
                     {"launch_refused", b.launch_refused()},
                     {"waves_per_simd", b.occupancy.waves},
                     {"waves_by_registers", b.occupancy.waves_by_registers},
                     {"waves_by_lds", b.occupancy.waves_by_lds},
                     {"occupancy_limiter", b.occupancy.limiter},
                     {"compiler_waves", b.compiler_waves},
                     {"instructions",
                      {{"total", b.instructions.total},
                       {"dot2_f32_f16", b.instructions.dot2_f32_f16},
                       {"fma_mix", b.instructions.fma_mix},
                       {"lds_read_b128", b.instructions.lds_read_b128},
                       {"global_load_b128", b.instructions.global_load_b128},
                       {"scratch_ops", b.instructions.scratch_ops}}},
                     {"compile_s", b.compile_s},
                     {"cached", b.cached}};
  j["helpers"] = b.helpers;
}

void to_json(nlohmann::json& j, const AmdHelperBuild& h) {
  j = nlohmann::json{{"entry", h.entry},
                     {"vgprs", h.vgprs},
                     {"sgprs", h.sgprs},
                     {"vgpr_spills", h.vgpr_spills},
                     {"sgpr_spills", h.sgpr_spills},
                     {"lds_bytes", h.lds_bytes},
                     {"scratch_bytes", h.scratch_bytes},
                     {"spills", h.spills()}};
}

void from_json(const nlohmann::json& j, AmdHelperBuild& h) {
  h.entry = j.at("entry").get<std::string>();
  h.vgprs = j.at("vgprs").get<int64_t>();
  h.sgprs = j.at("sgprs").get<int64_t>();
  h.vgpr_spills = j.at("vgpr_spills").get<int64_t>();
  h.sgpr_spills = j.at("sgpr_spills").get<int64_t>();
  h.lds_bytes = j.at("lds_bytes").get<int64_t>();
  h.scratch_bytes = j.at("scratch_bytes").get<int64_t>();
}

DeviceLimits offline_limits(const DeviceProfile& profile) {
  DeviceInfo info;
  info.max_work_group_size = kAmdMaxWorkGroupSize;
  info.max_work_item_sizes = {kAmdMaxWorkGroupSize, kAmdMaxWorkGroupSize, kAmdMaxWorkGroupSize};
  info.local_mem_bytes =
      static_cast<uint64_t>(profile.figure_if("lds_per_workgroup_bytes").value_or(0));
  return device_limits(info, &profile);
}

AmdOfflineCompiler::AmdOfflineCompiler(AmdToolchain toolchain, std::string templates_dir,
                                       const std::string& cache_dir)
    : toolchain_(std::move(toolchain)), templates_dir_(std::move(templates_dir)) {
  if (cache_dir != "none") {
    cache_dir_ = ((cache_dir.empty() ? fs::path(BinaryCache::default_dir()) : fs::path(cache_dir)) /
                  "offline-amd")
                     .string();
  }
}

int64_t target_wavefront(const AmdTarget& target) {
  if (!target.profile || !is_amdgpu_isa(target.profile->name)) {
    throw invalid_argument(
        "an offline target must be an AMD profile named by its ISA (gfx1012, ...)");
  }
  const DeviceProfile& profile = *target.profile;
  // Without a list in the profile, wave64: what every AMD ISA before gfx10 runs.
  constexpr int64_t kDefaultWave = 64;
  const auto& sizes = profile.wavefront_sizes;
  const int64_t wave =
      target.wavefront > 0 ? target.wavefront : (sizes.empty() ? kDefaultWave : sizes[0]);
  if (!sizes.empty() && std::find(sizes.begin(), sizes.end(), wave) == sizes.end()) {
    throw invalid_argument(
        fmt::format("{} runs no wave{} (profile {})", profile.name, wave, profile.file));
  }
  return wave;
}

void AmdOfflineCompiler::check_buildable(const KernelSpec& spec, const AmdTarget& target) const {
  target_wavefront(target);
  if (spec.backend() == Backend::kClblast) {
    throw invalid_argument(spec.name() +
                           " is CLBlast's own kernel, which CLBlast compiles itself: there is no "
                           "source here to build offline (its gemmtune counterparts are xgemm "
                           "and xgemm_direct)");
  }
  if (spec.source_file().empty()) {
    throw invalid_argument(spec.name() + " names no OpenCL source to build offline");
  }
}

AmdBuild AmdOfflineCompiler::build(const KernelSpec& spec, const Problem& problem,
                                   const Configuration& partial, const AmdTarget& target) const {
  check_buildable(spec, target);
  const DeviceProfile& profile = *target.profile;
  AmdBuild b;
  b.kernel = spec.name();
  b.entry = spec.entry_point();
  b.isa = profile.name;
  b.wavefront = target_wavefront(target);
  const auto& sizes = profile.wavefront_sizes;
  b.config = spec.complete(partial);
  const DeviceLimits limits = offline_limits(profile);
  if (const auto why =
          spec.check(b.config, limits, {{"ELEM_BYTES", element_bytes(problem.precision)}})) {
    throw invalid_argument("configuration " + to_string(b.config) + " is not valid on " +
                           profile.name + ": " + *why);
  }
  const Context ctx{{"ELEM_BYTES", element_bytes(problem.precision)}};
  b.work_group_size = spec.work_group_size(b.config, ctx).value_or(0);

  const std::string source = load_kernel_source(templates_dir_, spec.source_file());
  const std::string options =
      kernel_build_options(spec, problem, b.config, limits, profile.build_options);
  // The padding helper where the template's calls copy operands (its source and options join the
  // cache identity only then).
  const LaunchDeclaration& launch = spec.launch();
  const bool pads = launch.padded || !launch.align_ld.empty();
  const std::string pad_source = pads ? load_kernel_source(templates_dir_, PadHelper::kSource) : "";
  const std::string pad_options =
      pads ? pad_helper_options(problem.precision) + " " + profile.build_options : "";
  std::vector<std::string> compile = {toolchain_.clang, "-x",      "cl",
                                      "-cl-std=CL1.2",  "-target", "amdgcn-amd-amdhsa",
                                      "-mcpu=" + b.isa, "-O3"};
  if (b.wavefront == 64 && sizes.size() > 1 && sizes[0] != 64)
    compile.push_back("-mwavefrontsize64");

  const std::string identity =
      fmt::format("offline-amd {}\n{}\n{} wave{}\n{}\n{}\n{}\n{}", kCacheFormat, toolchain_.version,
                  b.isa, b.wavefront, options, source, pad_options, pad_source);
  const std::string key = hash_hex128(identity);
  const std::string cached_file = cache_dir_.empty() ? "" : cache_dir_ + "/" + key + ".json";
  if (!cached_file.empty() && fs::exists(cached_file)) {
    try {
      const auto j = nlohmann::json::parse(read_text_file(cached_file));
      if (j.at("identity").get<std::string>() == identity) {
        from_cache_json(j.at("build"), b);
        b.cached = true;
        b.occupancy =
            estimate_occupancy(profile, b.vgprs, b.lds_bytes, b.work_group_size, b.wavefront);
        return b;
      }
    } catch (const std::exception& e) {
      spdlog::debug("ignoring the offline cache file {}: {}", cached_file, e.what());
    }
  }

  const ScratchDir scratch;
  const std::string work = cache_dir_.empty() ? scratch.file("bitcode") : cache_dir_;
  fs::create_directories(work);
  const std::string device_libs =
      "--rocm-device-lib-path=" + toolchain_.bitcode_dir_for(b.isa, work);
  // Compiles `text` with `opts` into scratch files named `stem`: the object (for the disassembly),
  // the linked code object's bytes (for the metadata) and the compiler's remarks.
  struct Built {
    std::string object, code_file, remarks;
    std::vector<uint8_t> code;
  };
  auto compile_object = [&](const std::string& stem, const std::string& text,
                            const std::string& opts, const std::string& what) {
    const std::string cl = scratch.file(stem + ".cl"), obj = scratch.file(stem + ".o"),
                      hsaco = scratch.file(stem + ".hsaco");
    write_text(cl, text);
    std::vector<std::string> args = compile;
    for (auto& o : split_options(opts)) args.push_back(o);
    args.insert(args.end(),
                {device_libs, "-Rpass-analysis=kernel-resource-usage", "-c", "-o", obj, cl});
    const ProcessResult c = run_process(args);
    if (c.exit_code != 0) {
      throw Error(ErrorCode::kCheckFailed, fmt::format("{} does not build for {}: {}", what, b.isa,
                                                       first_lines(c.output, kErrorLines)));
    }
    const ProcessResult l = run_process({toolchain_.lld, "-shared", "-o", hsaco, obj});
    if (l.exit_code != 0) {
      throw Error(ErrorCode::kCheckFailed, fmt::format("{} for {} does not link: {}", what, b.isa,
                                                       first_lines(l.output, kErrorLines)));
    }
    return Built{obj, hsaco, c.output, read_bytes(hsaco)};
  };
  auto figures_of = [&](const Built& built, const std::string& entry, const std::string& what) {
    auto f = parse_amdgpu_code_object(built.code, entry, built.code_file);
    if (!f) {
      throw Error(ErrorCode::kInternal,
                  "the code object of " + what + " for " + b.isa + " has no metadata for " + entry);
    }
    return *f;
  };

  const std::string what = spec.name() + " " + to_string(b.config);
  const auto start = std::chrono::steady_clock::now();
  const Built main = compile_object("kernel", source, options, what);
  b.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const AmdgpuKernelFigures figures = figures_of(main, b.entry, spec.name());
  b.compiler_waves = remarked_waves(main.remarks, b.entry);
  b.vgprs = figures.vgpr_count;
  b.sgprs = figures.sgpr_count;
  b.agprs = figures.agpr_count;
  b.vgpr_spills = figures.vgpr_spill_count;
  b.sgpr_spills = figures.sgpr_spill_count;
  b.lds_bytes = figures.group_segment_fixed_size;
  b.scratch_bytes = figures.private_segment_fixed_size;
  b.max_work_group_size = figures.max_flat_workgroup_size;
  // The reduce kernel shares the main kernel's program (where the configuration builds it).
  if (launch.split_k && !launch.split_k->reduce_entry.empty()) {
    if (const auto f =
            parse_amdgpu_code_object(main.code, launch.split_k->reduce_entry, main.code_file)) {
      b.helpers.push_back(helper_of(*f));
    }
  }
  if (pads) {
    const Built pad = compile_object("pad", pad_source, pad_options, "the padding helper");
    b.helpers.push_back(helper_of(figures_of(pad, PadHelper::kEntry, "the padding helper")));
  }
  const ProcessResult d = run_process({toolchain_.objdump, "-d", "--mcpu=" + b.isa, main.object});
  if (d.exit_code != 0) {
    throw Error(ErrorCode::kUnsupported, "llvm-objdump cannot read the code for " + b.isa + ": " +
                                             first_lines(d.output, kErrorLines));
  }
  b.instructions = count_instructions(d.output);
  b.occupancy = estimate_occupancy(profile, b.vgprs, b.lds_bytes, b.work_group_size, b.wavefront);
  if (!cached_file.empty()) {
    try {
      write_json_atomic(cached_file, nlohmann::json{{"identity", identity}, {"build", b}});
    } catch (const std::exception& e) {
      spdlog::debug("offline cache not written: {}", e.what());
    }
  }
  return b;
}

}  // namespace gemmtune

namespace gemmtune {

const DeviceProfile& find_offline_target(const ProfileSet& profiles, const std::string& name) {
  std::string known;
  for (const auto& p : profiles.profiles()) {
    if (!is_amdgpu_isa(p.name)) continue;
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw invalid_argument("--target " + name +
                         " is no AMD profile (known: " + (known.empty() ? "none" : known) + ")");
}

}  // namespace gemmtune
