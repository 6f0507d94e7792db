// SPDX-License-Identifier: Apache-2.0
#include "src/device/kernel_resources.hpp"

#include <cstring>
#include <regex>
#include <sstream>

#include <spdlog/spdlog.h>

#include "src/core/error.hpp"

namespace gemmtune {

// ---- ptxas ----

std::optional<PtxasFigures> parse_ptxas_log(const std::string& log, const std::string& kernel) {
  // ptxas prints, per entry function:
  //   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
  //   ptxas info    : Function properties for NAME
  //       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 40 registers, 8192 bytes smem, 400 bytes cmem[0]
  // and, for a function that is called rather than inlined, a "Function properties for CALLEE"
  // block of its own (stack and spills, no registers) after or before the entry's block. A
  // spill warning names its function ("... in function 'NAME', 80 bytes spill stores, ...").
  // Each figure therefore belongs to the function the latest heading names, never to the entry
  // whose block happened to come before.
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(Function properties for ([^\s,']+))");
  static const std::regex kNamedWarning(R"(in function '([^']+)')");
  static const std::regex kRegisters(R"(Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillStores(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLoads(R"((\d+) bytes spill loads)");
  std::istringstream in(log);
  std::string line;
  std::string current;  // the function the lines below describe
  bool found = false;
  PtxasFigures f;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kEntry) || std::regex_search(line, m, kProperties)) {
      // A log holding a second build lists the kernel again: the first report is complete.
      if (found && m[1].str() == kernel && line.find("Compiling entry") != std::string::npos) break;
      current = m[1].str();
      continue;
    }
    if (std::regex_search(line, m, kNamedWarning)) continue;  // its figures repeat a block's
    if (current != kernel) continue;
    if (std::regex_search(line, m, kRegisters)) {
      f.registers = std::stoll(m[1].str());
      found = true;
    }
    if (std::regex_search(line, m, kSmem)) f.shared_bytes = std::stoll(m[1].str());
    if (std::regex_search(line, m, kStack)) f.stack_bytes = std::stoll(m[1].str());
    if (std::regex_search(line, m, kSpillStores)) f.spill_store_bytes = std::stoll(m[1].str());
    if (std::regex_search(line, m, kSpillLoads)) f.spill_load_bytes = std::stoll(m[1].str());
  }
  if (!found) return std::nullopt;
  return f;
}

// ---- MessagePack ----

namespace {

class MsgpackReader {
 public:
  MsgpackReader(const uint8_t* data, size_t size, const std::string& origin)
      : data_(data), size_(size), origin_(origin) {}

  nlohmann::json document() {
    auto j = value(0);
    if (pos_ != size_) fail("trailing bytes after the MessagePack document");
    return j;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw invalid_file(origin_, "malformed MessagePack at byte " + std::to_string(pos_) + ": " +
                                    what);
  }
  void need(size_t n) const {
    if (size_ - pos_ < n) fail("truncated (needs " + std::to_string(n) + " more bytes)");
  }
  uint64_t big_endian(size_t n) {
    need(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | data_[pos_ + i];
    pos_ += n;
    return v;
  }
  std::string bytes(size_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  nlohmann::json array(size_t n, int depth) {
    nlohmann::json a = nlohmann::json::array();
    for (size_t i = 0; i < n; ++i) a.push_back(value(depth + 1));
    return a;
  }
  nlohmann::json map(size_t n, int depth) {
    nlohmann::json m = nlohmann::json::object();
    for (size_t i = 0; i < n; ++i) {
      auto key = value(depth + 1);
      std::string k = key.is_string() ? key.get<std::string>() : key.dump();
      m[k] = value(depth + 1);
    }
    return m;
  }
  nlohmann::json value(int depth) {
    if (depth > 64) fail("nesting deeper than 64 levels");
    need(1);
    const uint8_t t = data_[pos_++];
    if (t <= 0x7f) return t;
    if (t >= 0xe0) return static_cast<int64_t>(static_cast<int8_t>(t));
    if ((t & 0xf0) == 0x80) return map(t & 0x0f, depth);
    if ((t & 0xf0) == 0x90) return array(t & 0x0f, depth);
    if ((t & 0xe0) == 0xa0) return bytes(t & 0x1f);
    switch (t) {
      case 0xc0: return nullptr;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: case 0xc5: case 0xc6: {  // bin 8/16/32: kept as an array of byte values
        const std::string b = bytes(big_endian(size_t{1} << (t - 0xc4)));
        return std::vector<uint8_t>(b.begin(), b.end());
      }
      case 0xc7: case 0xc8: case 0xc9: {  // ext 8/16/32: type byte, then data
        const size_t n = big_endian(size_t{1} << (t - 0xc7));
        need(1);
        ++pos_;
        const std::string b = bytes(n);
        return std::vector<uint8_t>(b.begin(), b.end());
      }
      case 0xca: {
        const uint32_t bits = static_cast<uint32_t>(big_endian(4));
        float f;
        std::memcpy(&f, &bits, 4);
        return static_cast<double>(f);
      }
      case 0xcb: {
        const uint64_t bits = big_endian(8);
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
      }
      case 0xcc: case 0xcd: case 0xce: case 0xcf:
        return big_endian(size_t{1} << (t - 0xcc));
      case 0xd0: return static_cast<int64_t>(static_cast<int8_t>(big_endian(1)));
      case 0xd1: return static_cast<int64_t>(static_cast<int16_t>(big_endian(2)));
      case 0xd2: return static_cast<int64_t>(static_cast<int32_t>(big_endian(4)));
      case 0xd3: return static_cast<int64_t>(big_endian(8));
      case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: {  // fixext 1..16
        need(1);
        ++pos_;
        const std::string b = bytes(size_t{1} << (t - 0xd4));
        return std::vector<uint8_t>(b.begin(), b.end());
      }
      case 0xd9: case 0xda: case 0xdb: return bytes(big_endian(size_t{1} << (t - 0xd9)));
      case 0xdc: return array(big_endian(2), depth);
      case 0xdd: return array(big_endian(4), depth);
      case 0xde: return map(big_endian(2), depth);
      case 0xdf: return map(big_endian(4), depth);
      default: break;
    }
    --pos_;
    fail("unknown type byte " + std::to_string(t));
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string origin_;
};

// ---- ELF ----

constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kShtNote = 7;
constexpr uint32_t kPtNote = 4;
constexpr uint32_t kNtAmdgpuMetadata = 32;
// CL_DEVICE_VENDOR_ID of AMD's devices: the PCI vendor ID.
constexpr cl_uint kAmdPciVendorId = 0x1002;

bool is_amd(const cl::Device& device) {
  try {
    return device.getInfo<CL_DEVICE_VENDOR_ID>() == kAmdPciVendorId;
  } catch (const cl::Error&) {
    return false;
  }
}

class ElfReader {
 public:
  ElfReader(const uint8_t* data, size_t size, const std::string& origin)
      : data_(data), size_(size), origin_(origin) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw invalid_file(origin_, "malformed ELF: " + what);
  }
  uint64_t read(uint64_t offset, size_t n) const {
    if (offset > size_ || size_ - offset < n) {
      fail("reading " + std::to_string(n) + " bytes at offset " + std::to_string(offset) +
           " beyond the end (" + std::to_string(size_) + " bytes)");
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(data_[offset + i]) << (8 * i);
    return v;
  }
  const uint8_t* at(uint64_t offset, uint64_t n) const {
    if (offset > size_ || size_ - offset < n) fail("a note region lies beyond the end");
    return data_ + offset;
  }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  std::string origin_;
};

uint64_t align4(uint64_t v) { return (v + 3) & ~uint64_t{3}; }

// The NT_AMDGPU_METADATA descriptor within a note region, if any.
std::optional<nlohmann::json> find_metadata_note(const ElfReader& elf, uint64_t offset,
                                                 uint64_t size, const std::string& origin) {
  uint64_t pos = offset;
  const uint64_t end = offset + size;
  while (pos + 12 <= end) {
    const uint64_t namesz = elf.read(pos, 4), descsz = elf.read(pos + 4, 4);
    const uint64_t type = elf.read(pos + 8, 4);
    const uint64_t name_at = pos + 12, desc_at = name_at + align4(namesz);
    if (desc_at + descsz > end) elf.fail("a note's descriptor runs past its section");
    const std::string name(reinterpret_cast<const char*>(elf.at(name_at, namesz)),
                           namesz > 0 ? namesz - 1 : 0);
    if (name == "AMDGPU" && type == kNtAmdgpuMetadata) {
      return decode_msgpack(elf.at(desc_at, descsz), descsz, origin + " (AMDGPU metadata note)");
    }
    pos = desc_at + align4(descsz);
  }
  return std::nullopt;
}

std::optional<nlohmann::json> elf_metadata(const uint8_t* data, size_t size,
                                           const std::string& origin) {
  ElfReader elf(data, size, origin);
  if (size < 64) elf.fail("shorter than an ELF64 header");
  if (data[4] != 2 || data[5] != 1) elf.fail("not a little-endian 64-bit ELF");
  if (elf.read(18, 2) != kEmAmdgpu) return std::nullopt;
  const uint64_t shoff = elf.read(0x28, 8), shentsize = elf.read(0x3a, 2);
  const uint64_t shnum = elf.read(0x3c, 2);
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + i * shentsize;
    if (elf.read(sh + 4, 4) != kShtNote) continue;
    if (auto j = find_metadata_note(elf, elf.read(sh + 0x18, 8), elf.read(sh + 0x20, 8), origin)) {
      return j;
    }
  }
  // Stripped of section headers: the program headers still locate the notes.
  const uint64_t phoff = elf.read(0x20, 8), phentsize = elf.read(0x36, 2);
  const uint64_t phnum = elf.read(0x38, 2);
  for (uint64_t i = 0; i < phnum; ++i) {
    const uint64_t ph = phoff + i * phentsize;
    if (elf.read(ph, 4) != kPtNote) continue;
    if (auto j = find_metadata_note(elf, elf.read(ph + 8, 8), elf.read(ph + 0x20, 8), origin)) {
      return j;
    }
  }
  return std::nullopt;
}

int64_t int_field(const nlohmann::json& k, const char* name) {
  auto it = k.find(name);
  return it != k.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

nlohmann::json decode_msgpack(const uint8_t* data, size_t size, const std::string& origin) {
  return MsgpackReader(data, size, origin).document();
}

std::optional<nlohmann::json> amdgpu_metadata(const std::vector<uint8_t>& binary,
                                              const std::string& origin) {
  static const uint8_t kMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (binary.size() >= 4 && std::memcmp(binary.data(), kMagic, 4) == 0) {
    return elf_metadata(binary.data(), binary.size(), origin);
  }
  // An offload bundle (or other wrapper) holds the code object somewhere inside.
  for (size_t p = 1; p + 4 <= binary.size(); ++p) {
    if (std::memcmp(binary.data() + p, kMagic, 4) != 0) continue;
    try {
      if (auto j = elf_metadata(binary.data() + p, binary.size() - p, origin)) return j;
    } catch (const Error&) {
      // Not an embedded code object after all: keep looking.
    }
  }
  return std::nullopt;
}

std::optional<AmdgpuKernelFigures> parse_amdgpu_code_object(const std::vector<uint8_t>& binary,
                                                            const std::string& kernel,
                                                            const std::string& origin) {
  auto meta = amdgpu_metadata(binary, origin);
  if (!meta || !meta->is_object() || !meta->contains("amdhsa.kernels")) return std::nullopt;
  const auto& kernels = (*meta)["amdhsa.kernels"];
  if (!kernels.is_array()) throw invalid_file(origin, "amdhsa.kernels is not an array");
  for (const auto& k : kernels) {
    if (!k.is_object()) continue;
    const std::string name = k.value(".name", "");
    std::string symbol = k.value(".symbol", "");
    if (symbol.size() > 3 && symbol.compare(symbol.size() - 3, 3, ".kd") == 0) {
      symbol.resize(symbol.size() - 3);
    }
    if (name != kernel && symbol != kernel) continue;
    AmdgpuKernelFigures f;
    f.name = name;
    f.vgpr_count = int_field(k, ".vgpr_count");
    f.sgpr_count = int_field(k, ".sgpr_count");
    f.agpr_count = int_field(k, ".agpr_count");
    f.vgpr_spill_count = int_field(k, ".vgpr_spill_count");
    f.sgpr_spill_count = int_field(k, ".sgpr_spill_count");
    f.group_segment_fixed_size = int_field(k, ".group_segment_fixed_size");
    f.private_segment_fixed_size = int_field(k, ".private_segment_fixed_size");
    f.wavefront_size = int_field(k, ".wavefront_size");
    f.max_flat_workgroup_size = int_field(k, ".max_flat_workgroup_size");
    return f;
  }
  return std::nullopt;
}

ResourceUsage query_kernel_resources(const cl::Device& device, const cl::Program& program,
                                     const cl::Kernel& kernel, const std::string& kernel_name,
                                     const std::string& build_log) {
  ResourceUsage u;
  std::vector<std::string> sources;
  try {
    u.local_mem_bytes = static_cast<int64_t>(kernel.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(device));
    u.private_mem_bytes =
        static_cast<int64_t>(kernel.getWorkGroupInfo<CL_KERNEL_PRIVATE_MEM_SIZE>(device));
    u.max_work_group_size =
        static_cast<int64_t>(kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device));
    sources.push_back("CL_KERNEL_*");
  } catch (const cl::Error& e) {
    spdlog::debug("kernel {}: work-group info unavailable ({})", kernel_name, cl_error_name(e.err()));
  }
  if (auto p = parse_ptxas_log(build_log, kernel_name)) {
    u.registers = p->registers;
    // Spills in 32-bit words, to compare with AMD's register counts.
    u.spills = (p->spill_store_bytes + 3) / 4;
    sources.push_back("ptxas");
  } else if (is_amd(device)) {
    // Only AMD's runtimes hand out code objects. Elsewhere asking costs: PoCL compiles a generic
    // copy of every kernel of the program to hand out its binary.
    try {
      const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      for (const auto& bin : binaries) {
        std::vector<uint8_t> bytes(bin.begin(), bin.end());
        if (auto f = parse_amdgpu_code_object(bytes, kernel_name, "program binary")) {
          u.registers = f->vgpr_count;
          u.spills = f->vgpr_spill_count + f->sgpr_spill_count;
          if (f->group_segment_fixed_size > 0 || !u.local_mem_bytes) {
            u.local_mem_bytes = f->group_segment_fixed_size;
          }
          sources.push_back("AMDGPU metadata");
          break;
        }
      }
    } catch (const cl::Error& e) {
      spdlog::debug("kernel {}: program binary unavailable ({})", kernel_name,
                    cl_error_name(e.err()));
    } catch (const Error& e) {
      spdlog::debug("kernel {}: {}", kernel_name, e.what());
    }
  }
  for (size_t i = 0; i < sources.size(); ++i) u.source += (i ? ", " : "") + sources[i];
  return u;
}

}  // namespace gemmtune
