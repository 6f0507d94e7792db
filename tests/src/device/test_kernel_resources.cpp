// SPDX-License-Identifier: Apache-2.0
#include <cstring>

#include <catch2/catch.hpp>

#include "src/device/device.hpp"
#include "src/core/error.hpp"
#include "src/device/kernel_resources.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_kernel_resources {

using namespace gemmtune;

namespace {

// A build log of an NVIDIA OpenCL build with -cl-nv-verbose, two kernels in one program.
const char* kPtxasLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'pad_copy' for 'sm_90'\n"
    "ptxas info    : Function properties for pad_copy\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 12 registers, 384 bytes cmem[0]\n"
    "ptxas info    : Compiling entry function 'xgemm' for 'sm_90'\n"
    "ptxas info    : Function properties for xgemm\n"
    "    48 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
    "ptxas info    : Used 255 registers, 16384 bytes smem, 440 bytes cmem[0]\n";

void put(std::vector<uint8_t>& b, size_t at, uint64_t v, int n) {
  if (b.size() < at + n) b.resize(at + n);
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

std::vector<uint8_t> amdgpu_note(const std::vector<uint8_t>& desc) {
  std::vector<uint8_t> note;
  put(note, 0, 7, 4);  // "AMDGPU" and its terminator
  put(note, 4, desc.size(), 4);
  put(note, 8, 32, 4);  // NT_AMDGPU_METADATA
  const char name[8] = "AMDGPU";
  note.insert(note.end(), name, name + 8);  // padded to 4 bytes
  note.insert(note.end(), desc.begin(), desc.end());
  while (note.size() % 4) note.push_back(0);
  return note;
}

// A minimal ELF64 AMDGPU code object: header, a leading foreign note, the metadata note, and the
// section headers (null + two notes) and/or one PT_NOTE program header covering both notes.
std::vector<uint8_t> code_object(const std::vector<uint8_t>& metadata, bool sections,
                                 bool segments, uint16_t machine = 224) {
  std::vector<uint8_t> other;  // a note of another vendor comes first
  put(other, 0, 4, 4);
  put(other, 4, 4, 4);
  put(other, 8, 1, 4);
  const char gnu[4] = "GNU";
  other.insert(other.end(), gnu, gnu + 4);
  put(other, 16, 0xdeadbeef, 4);
  const auto note = amdgpu_note(metadata);
  std::vector<uint8_t> elf(64, 0);
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2, elf[5] = 1, elf[6] = 1;
  put(elf, 16, 3, 2);
  put(elf, 18, machine, 2);
  put(elf, 20, 1, 4);
  put(elf, 52, 64, 2);
  const size_t notes_at = elf.size();
  elf.insert(elf.end(), other.begin(), other.end());
  elf.insert(elf.end(), note.begin(), note.end());
  if (segments) {
    const size_t ph = elf.size();
    put(elf, ph, 4, 4);  // PT_NOTE
    put(elf, ph + 8, notes_at, 8);
    put(elf, ph + 0x20, other.size() + note.size(), 8);
    put(elf, ph + 0x28, other.size() + note.size(), 8);
    elf.resize(ph + 56);
    put(elf, 0x20, ph, 8);
    put(elf, 0x36, 56, 2);
    put(elf, 0x38, 1, 2);
  }
  if (sections) {
    const size_t sh = elf.size();
    elf.resize(sh + 3 * 64, 0);
    put(elf, sh + 64 + 4, 7, 4);  // SHT_NOTE: the foreign note
    put(elf, sh + 64 + 0x18, notes_at, 8);
    put(elf, sh + 64 + 0x20, other.size(), 8);
    put(elf, sh + 128 + 4, 7, 4);  // SHT_NOTE: the metadata
    put(elf, sh + 128 + 0x18, notes_at + other.size(), 8);
    put(elf, sh + 128 + 0x20, note.size(), 8);
    put(elf, 0x28, sh, 8);
    put(elf, 0x3a, 64, 2);
    put(elf, 0x3c, 3, 2);
  }
  return elf;
}

nlohmann::json metadata_doc() {
  return {{"amdhsa.version", {1, 2}},
          {"amdhsa.target", "amdgcn-amd-amdhsa--gfx1012"},
          {"amdhsa.kernels",
           {{{".name", "pad_copy"}, {".symbol", "pad_copy.kd"}, {".vgpr_count", 8}},
            {{".name", "xgemm"},
             {".symbol", "xgemm.kd"},
             {".vgpr_count", 128},
             {".sgpr_count", 40},
             {".vgpr_spill_count", 3},
             {".sgpr_spill_count", 1},
             {".group_segment_fixed_size", 16896},
             {".private_segment_fixed_size", 64},
             {".wavefront_size", 32},
             {".max_flat_workgroup_size", 256}}}}};
}

std::vector<uint8_t> msgpack_of(const nlohmann::json& j) { return nlohmann::json::to_msgpack(j); }

}  // namespace

TEST_CASE("ptxas figures per entry function", "[resources]") {
  auto f = parse_ptxas_log(kPtxasLog, "xgemm");
  REQUIRE(f);
  CHECK(f->registers == 255);
  CHECK(f->shared_bytes == 16384);
  CHECK(f->stack_bytes == 48);
  CHECK(f->spill_store_bytes == 40);
  CHECK(f->spill_load_bytes == 36);
  f = parse_ptxas_log(kPtxasLog, "pad_copy");
  REQUIRE(f);
  CHECK(f->registers == 12);
  CHECK(f->spill_store_bytes == 0);
  CHECK_FALSE(parse_ptxas_log(kPtxasLog, "xgemm_direct"));
  CHECK_FALSE(parse_ptxas_log("", "xgemm"));
}

TEST_CASE("MessagePack decoding of hand-assembled bytes", "[resources]") {
  // {"a": 1, "bb": [-3, 300, "x"], "c": true, "d": nil, "e": 1.5, 7: "seven"}
  const std::vector<uint8_t> bytes = {
      0x86,                                            // fixmap, 6 pairs
      0xa1, 'a', 0x01,                                 // "a": 1
      0xa2, 'b', 'b', 0xdc, 0x00, 0x03,                // "bb": array16 of 3
      0xd0, 0xfd,                                      // int8 -3
      0xcd, 0x01, 0x2c,                                // uint16 300
      0xd9, 0x01, 'x',                                 // str8 "x"
      0xa1, 'c', 0xc3,                                 // "c": true
      0xa1, 'd', 0xc0,                                 // "d": nil
      0xa1, 'e', 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,   // "e": float64 1.5
      0x07, 0xa5, 's', 'e', 'v', 'e', 'n'};            // 7: "seven"
  const auto j = decode_msgpack(bytes.data(), bytes.size(), "fixture");
  CHECK(j["a"] == 1);
  CHECK(j["bb"] == nlohmann::json({-3, 300, "x"}));
  CHECK(j["c"] == true);
  CHECK(j["d"].is_null());
  CHECK(j["e"] == 1.5);
  CHECK(j["7"] == "seven");

  // Truncated input names the byte where it ran out.
  const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + 13);
  CHECK_THROWS_WITH(decode_msgpack(cut.data(), cut.size(), "cut.bin"),
                    Catch::Contains("cut.bin") && Catch::Contains("byte 13"));
  const uint8_t unknown[] = {0xc1};
  CHECK_THROWS_AS(decode_msgpack(unknown, 1, "x"), Error);
  const uint8_t trailing[] = {0x01, 0x02};
  CHECK_THROWS_WITH(decode_msgpack(trailing, 2, "x"), Catch::Contains("trailing"));
}

TEST_CASE("MessagePack decoding agrees with an independent encoder", "[resources]") {
  nlohmann::json doc = metadata_doc();
  doc["big"] = {uint64_t{1} << 40, -(int64_t{1} << 33), 65535, -129, 0.25};
  doc["long"] = std::string(300, 'z');
  nlohmann::json many = nlohmann::json::object();
  for (int i = 0; i < 20; ++i) many["k" + std::to_string(i)] = i;  // a map16
  doc["many"] = many;
  const auto bytes = msgpack_of(doc);
  CHECK(decode_msgpack(bytes.data(), bytes.size(), "doc") == doc);
}

TEST_CASE("AMDGPU code object metadata gives registers, spills and LDS", "[resources]") {
  const auto meta = msgpack_of(metadata_doc());
  for (const auto& [sections, segments] : {std::pair{true, false}, {false, true}, {true, true}}) {
    INFO("sections " << sections << " segments " << segments);
    const auto elf = code_object(meta, sections, segments);
    auto f = parse_amdgpu_code_object(elf, "xgemm", "xgemm.co");
    REQUIRE(f);
    CHECK(f->vgpr_count == 128);
    CHECK(f->sgpr_count == 40);
    CHECK(f->vgpr_spill_count == 3);
    CHECK(f->sgpr_spill_count == 1);
    CHECK(f->group_segment_fixed_size == 16896);
    CHECK(f->private_segment_fixed_size == 64);
    CHECK(f->wavefront_size == 32);
    CHECK(parse_amdgpu_code_object(elf, "pad_copy", "xgemm.co")->vgpr_count == 8);
    CHECK_FALSE(parse_amdgpu_code_object(elf, "absent", "xgemm.co"));
  }
  // Found by symbol as well, and inside a wrapper (an offload bundle puts a header first).
  auto elf = code_object(meta, true, false);
  std::vector<uint8_t> bundle = {'_', '_', 'C', 'L', 'A', 'N', 'G', '_', 0, 0, 0, 0};
  bundle.insert(bundle.end(), elf.begin(), elf.end());
  CHECK(parse_amdgpu_code_object(bundle, "xgemm", "bundle")->vgpr_count == 128);
  // Not AMDGPU, not ELF: no figures, no error.
  CHECK_FALSE(parse_amdgpu_code_object(code_object(meta, true, false, 62), "xgemm", "x86"));
  CHECK_FALSE(parse_amdgpu_code_object({'P', 'T', 'X'}, "xgemm", "ptx"));
  // A section that points past the end of the file is an error naming the file.
  auto broken = code_object(meta, true, false);
  put(broken, broken.size() - 64 + 0x18, 1 << 20, 8);
  CHECK_THROWS_WITH(parse_amdgpu_code_object(broken, "xgemm", "broken.co"),
                    Catch::Contains("broken.co") && Catch::Contains("malformed ELF"));
  // A corrupt metadata blob is reported as such.
  auto bad_meta = meta;
  bad_meta.resize(bad_meta.size() / 2);
  CHECK_THROWS_WITH(parse_amdgpu_code_object(code_object(bad_meta, true, false), "xgemm", "m.co"),
                    Catch::Contains("MessagePack"));
}

TEST_CASE("kernel resources from the OpenCL driver", "[resources][pocl]") {
  const auto devices = list_devices(nullptr);
  REQUIRE(!devices.empty());
  const auto& d = devices.front();
  cl::Context context(d.device);
  const std::string source =
      "__kernel void probe(__global float* out) {\n"
      "  __local float tile[256];\n"
      "  tile[get_local_id(0)] = get_local_id(0);\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  out[get_global_id(0)] = tile[255 - get_local_id(0)];\n"
      "}\n";
  cl::Program program(context, source);
  program.build({d.device});
  cl::Kernel kernel(program, "probe");
  const auto u = query_kernel_resources(d.device, program, kernel, "probe",
                                        program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(d.device));
  REQUIRE(u.local_mem_bytes);
  CHECK(*u.local_mem_bytes >= 1024);
  CHECK(u.private_mem_bytes);
  CHECK_THAT(u.source, Catch::Contains("CL_KERNEL_*"));
}

TEST_CASE("ptxas figures of the main kernel when the reduce kernel is listed first",
          "[resources]") {
  // The layout of a build log of xgemm_fast from NVIDIA's OpenCL driver (-cl-nv-verbose): the
  // split-K reduce kernel's block comes first and must not be taken for the GEMM kernel's.
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'XgemmFastReduce' for 'sm_90a'\n"
      "ptxas info    : Function properties for XgemmFastReduce\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 0 barriers\n"
      "ptxas info    : Compile time = 6.043 ms\n"
      "ptxas info    : Compiling entry function 'XgemmFast' for 'sm_90a'\n"
      "ptxas info    : Function properties for XgemmFast\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 240 registers, used 1 barriers, 12352 bytes smem\n"
      "ptxas info    : Compile time = 372.672 ms\n";
  auto f = parse_ptxas_log(log, "XgemmFast");
  REQUIRE(f);
  CHECK(f->registers == 240);
  CHECK(f->shared_bytes == 12352);
  f = parse_ptxas_log(log, "XgemmFastReduce");
  REQUIRE(f);
  CHECK(f->registers == 12);
}

TEST_CASE("ptxas figures stay with their function when a callee's block or a warning follows",
          "[resources]") {
  // The layout ptxas -v prints (checked against nvcc 13 for sm_90) with what trips a parser that
  // reads on until the next entry: spill warnings naming their function ahead of the blocks, the
  // reduce kernel first, and a called (not inlined) function's own "Function properties" block
  // right after the GEMM kernel's, whose zero stack and spill figures are not the kernel's.
  const std::string log =
      "ptxas info    : Overriding maximum register limit 256 for 'XgemmFast' with  128 of "
      "maxrregcount option\n"
      "ptxas warning : Registers are spilled to local memory in function 'XgemmFast', 80 bytes "
      "spill stores, 56 bytes spill loads\n"
      "ptxas warning : Registers are spilled to local memory in function 'XgemmFastReduce', 8 "
      "bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'XgemmFastReduce' for 'sm_90'\n"
      "ptxas info    : Function properties for XgemmFastReduce\n"
      "ptxas         .     8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 0 barriers, 8 bytes cumulative stack size\n"
      "ptxas info    : Compile time = 6.043 ms\n"
      "ptxas info    : Compiling entry function 'XgemmFast' for 'sm_90'\n"
      "ptxas info    : Function properties for XgemmFast\n"
      "ptxas         .     96 bytes stack frame, 80 bytes spill stores, 56 bytes spill loads\n"
      "ptxas info    : Used 128 registers, used 1 barriers, 96 bytes cumulative stack size, "
      "12352 bytes smem\n"
      "ptxas info    : Compile time = 372.672 ms\n"
      "ptxas info    : Function properties for gemm_epilogue_store\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compile time = 2.101 ms\n";
  auto f = parse_ptxas_log(log, "XgemmFast");
  REQUIRE(f);
  CHECK(f->registers == 128);
  CHECK(f->shared_bytes == 12352);
  CHECK(f->stack_bytes == 96);
  CHECK(f->spill_store_bytes == 80);
  CHECK(f->spill_load_bytes == 56);
  f = parse_ptxas_log(log, "XgemmFastReduce");
  REQUIRE(f);
  CHECK(f->registers == 12);
  CHECK(f->spill_store_bytes == 8);
  // A callee has properties but no register report of its own.
  CHECK_FALSE(parse_ptxas_log(log, "gemm_epilogue_store"));
  // A log holding the program's build twice (two devices) gives the first report.
  const auto twice = parse_ptxas_log(
      log +
          "ptxas info    : Compiling entry function 'XgemmFast' for 'sm_90'\n"
          "ptxas info    : Function properties for XgemmFast\n"
          "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
          "ptxas info    : Used 200 registers, used 1 barriers, 12352 bytes smem\n",
      "XgemmFast");
  REQUIRE(twice);
  CHECK(twice->registers == 128);
  CHECK(twice->spill_store_bytes == 80);
}

}  // namespace gemmtune_tests::src_device_test_kernel_resources
