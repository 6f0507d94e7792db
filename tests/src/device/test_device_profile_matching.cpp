// SPDX-License-Identifier: Apache-2.0
// How the checked-in profiles match the names real drivers give AMD cards (ROCm, Mesa's Clover and
// rusticl, AMD's proprietary OpenCL), and that no other device matches them.
#include <catch2/catch.hpp>

#include <fstream>

#include "src/core/error.hpp"
#include "src/core/json_util.hpp"
#include "src/device/device.hpp"
#include "src/device/device_profile.hpp"
#include "tests/test_support.hpp"

// The file's own namespace: the test files compile in unity batches.
namespace gemmtune_tests::src_device_test_device_profile_matching {

using namespace gemmtune;

namespace {

constexpr const char* kAmd = "AMD";  // CL_DEVICE_VENDOR of Mesa's drivers on radeonsi
constexpr const char* kAmdInc = "Advanced Micro Devices, Inc.";  // ROCm's and AMD's own drivers

struct NamedDevice {
  const char* name;     // CL_DEVICE_NAME
  const char* board;    // CL_DEVICE_BOARD_NAME_AMD; "" where the driver has none
  const char* vendor;   // CL_DEVICE_VENDOR
  const char* type;     // "gpu" or "cpu"
  const char* profile;  // the profile it must match; "" for none
  const char* model;    // the model variant it must match; "" for the architecture's figures
};

// Each string as a driver reported it, with where it was seen. "Composed" marks a string put
// together from the driver's source where no report of that card was found: Mesa's radeonsi builds
// the name from the libdrm marketing name (libdrm data/amdgpu.ids, e.g. X11Libre/mirror.fdo.drm),
// the chip's family name (mesa src/amd/common/ac_gpu_info.c, amd_family.c) and the compiler, DRM
// and kernel versions (mesa src/gallium/drivers/radeonsi/si_get.c, si_init_renderer_string).
const NamedDevice kDevices[] = {
    // ROCm: the ISA name, with target features since ROCm 4 and "+sram-ecc" in ROCm 2.4 to 3.x;
    // the marketing name is the board name, from libdrm's amdgpu.ids or, in older releases, the
    // PCI database.
    // filecoin-project/rust-gpu-tools#45: RX 6800 XT, clinfo of ROCm's AMD-APP 3261.0; the board
    // name from the PCI database lists three cards, so no model is taken from it.
    {"gfx1030", "Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]", kAmdInc, "gpu", "gfx1030", ""},
    // The same card where the board name comes from libdrm (amdgpu.ids 73BF rev C1).
    {"gfx1030", "AMD Radeon RX 6800 XT", kAmdInc, "gpu", "gfx1030", "RX 6800 XT"},
    // amdgpu.ids 73BF rev C3 and 73BF rev C0: the other two Navi 21 boards.
    {"gfx1030", "AMD Radeon RX 6800", kAmdInc, "gpu", "gfx1030", "RX 6800"},
    {"gfx1030", "AMD Radeon RX 6900 XT", kAmdInc, "gpu", "gfx1030", "RX 6900 XT"},
    // CLRX/CLRX-mirror#34 shows ROCm 4's feature-suffixed device name (for gfx908);
    // lamikr/rocm_sdk_builder#180 and AlphaMine-Tech/alpha-miner#5 give gfx906's; amdgpu.ids
    // 66A1 rev 02 names MI50 and MI60 together, so the board names no model.
    {"gfx906:sramecc+:xnack-", "AMD Instinct MI60 / MI50", kAmdInc, "gpu", "gfx906", ""},
    // ROCm/MIOpen src/include/miopen/rocm_features.hpp: OpenCL names gfx906 "gfx906+sram-ecc"
    // from ROCm 2.4 to 3.x.
    {"gfx906+sram-ecc", "", kAmdInc, "gpu", "gfx906", ""},
    // plaidml/plaidml#257: Radeon VII under AMD-APP 2766.5, board name "AMD Radeon VII" beside
    // the ISA name.
    {"gfx906", "AMD Radeon VII", kAmdInc, "gpu", "gfx906", "Radeon VII"},
    // diku-dk/futhark#731: Radeon VII under ROCm's AMD-APP 2833.0, board name from the PCI
    // database.
    {"gfx906", "Vega 20", kAmdInc, "gpu", "gfx906", ""},
    // todxx/teamredminer#396: an RX 5700 XT named "gfx1010:xnack-"; board name amdgpu.ids 731F C1.
    {"gfx1010:xnack-", "AMD Radeon RX 5700 XT", kAmdInc, "gpu", "gfx1010", "RX 5700 XT"},
    // ethereum-mining/ethminer#1936: board name "AMD Radeon RX 5700" under AMD-APP 3004.8.
    {"gfx1010", "AMD Radeon RX 5700", kAmdInc, "gpu", "gfx1010", "RX 5700"},
    // The gfx1012 target with ROCm's xnack suffix (likelovewant/ROCmLibs-for-gfx1103-AMD780M-APU#34
    // names it); board name amdgpu.ids 7340 C5.
    {"gfx1012:xnack-", "AMD Radeon RX 5500 XT", kAmdInc, "gpu", "gfx1012", ""},
    // ollama/ollama#2453: rocminfo of an RX 580, name gfx803, marketing name "Radeon RX 580
    // Series" (the board name ROCm's OpenCL reports).
    {"gfx803", "Radeon RX 580 Series", kAmdInc, "gpu", "gfx803", ""},
    // amdgpu.ids 744C rev C8, then Navi 31's PCI-database name (clbr/radeontop#159, lspci of an
    // RX 7900 XTX).
    {"gfx1100", "AMD Radeon RX 7900 XTX", kAmdInc, "gpu", "gfx1100", "RX 7900 XTX"},
    {"gfx1100", "Navi 31 [Radeon RX 7900 XT/7900 XTX]", kAmdInc, "gpu", "gfx1100", ""},
    // todxx/teamredminer#312 (AMD-APP 3180.7, PAL) and ethereum-mining/ethminer#2356: Navi 22 and
    // Navi 23 are gfx1031 and gfx1032, which no profile describes.
    {"gfx1031", "AMD Radeon RX 6700 XT", kAmdInc, "gpu", "", ""},
    {"gfx1032", "", kAmdInc, "gpu", "", ""},

    // Mesa, Clover and rusticl: the marketing name, then the chip's family name.
    // todxx/teamredminer#510: Clover, Mesa 22.1-devel.
    {"AMD Radeon RX 5500 XT (navi14, LLVM 13.0.1, DRM 3.41, 5.13.0-28-generic)", "", kAmd, "gpu",
     "gfx1012", ""},
    // AUTOMATIC1111/stable-diffusion-webui#1220: Clover, Mesa 22.1.7.
    {"AMD Radeon RX 570 Series (polaris10, LLVM 12.0.1, DRM 3.46, 5.18.19_1)", "", kAmd, "gpu",
     "gfx803", "RX 570"},
    // AOSC-Dev/aosc-os-abbs#7596: rusticl, Mesa 24.1.5 (the driver's name first).
    {"AMD Radeon RX 570 Series (radeonsi, polaris10, LLVM 18.1.8, DRM 3.57, 6.10.2-aosc-main)", "",
     kAmd, "gpu", "gfx803", "RX 570"},
    // ROCm/legacy-rocm-build#361: Clover, Mesa 18: family names in upper case; Polaris 11 (RX 560)
    // is gfx803 too, but the profile's figures are Polaris 10's.
    {"Radeon RX 570 Series (POLARIS10, DRM 3.26.0, 4.16.15-amd, LLVM 6.0.1)", "", kAmd, "gpu",
     "gfx803", "RX 570"},
    {"Radeon RX 560 Series (POLARIS11, DRM 3.26.0, 4.16.15-amd, LLVM 6.0.1)", "", kAmd, "gpu", "",
     ""},
    // fireice-uk/xmr-stak#550: Clover, Mesa 17.2.6, with " / " between the driver details.
    {"AMD Radeon (TM) RX 480 Graphics (AMD POLARIS10 / DRM 3.19.0 / 4.14.3-1-MANJARO, LLVM 5.0.0)",
     "", kAmd, "gpu", "gfx803", ""},
    // lurk-lab/neptune#42: Clover, Mesa 20.0.8.
    {"AMD Radeon RX 5700 XT (NAVI10, DRM 3.35.0, 5.4.0-42-generic, LLVM 10.0.0)", "", kAmd, "gpu",
     "gfx1010", "RX 5700 XT"},
    // obsproject/obs-amd-encoder#403: radeonsi's name of an RX 5600 XT (Mesa 20.1.3) as inxi
    // printed it, commas dropped; no RX 5600 XT model, and "RX 5700" does not match it.
    {"AMD Radeon RX 5600 XT (NAVI10 DRM 3.37.0 5.7.9-1-MANJARO LLVM 10.0.0)", "", kAmd, "gpu",
     "gfx1010", ""},
    // freebsd/drm-kmod#336: Clover, Mesa 24.1.7.
    {"AMD Radeon RX 7900 XTX (radeonsi, navi31, LLVM 19.1.6, DRM 3.54, 15.0-CURRENT)", "", kAmd,
     "gpu", "gfx1100", "RX 7900 XTX"},
    // Composed: Mesa 22.x named Navi 31 by its ISA, GFX1100 (ac_gpu_info.c identify_chip).
    {"AMD Radeon RX 7900 XT (gfx1100, LLVM 15.0.7, DRM 3.49, 6.1.0-18-amd64)", "", kAmd, "gpu",
     "gfx1100", ""},
    // Composed, Debian 12's Mesa 22.3 format (amd_family.c: NAVI21).
    {"AMD Radeon RX 6800 XT (navi21, LLVM 15.0.7, DRM 3.49, 6.1.0-18-amd64)", "", kAmd, "gpu",
     "gfx1030", "RX 6800 XT"},
    // Composed: Mesa 21 and 22.0 called Navi 21 SIENNA_CICHLID (ac_gpu_info.c identify_chip), in
    // upper case before Mesa 22.
    {"AMD Radeon RX 6900 XT (SIENNA_CICHLID, DRM 3.42.0, 5.14.0-1-amd64, LLVM 12.0.1)", "", kAmd,
     "gpu", "gfx1030", "RX 6900 XT"},
    {"AMD Radeon RX 6800 (sienna_cichlid, LLVM 14.0.1, DRM 3.46, 5.18.0)", "", kAmd, "gpu",
     "gfx1030", "RX 6800"},
    // Composed: Vega 20 under Mesa (amd_family.c: VEGA20; amdgpu.ids 66AF C1 "AMD Radeon VII").
    {"AMD Radeon VII (vega20, LLVM 15.0.7, DRM 3.49, 6.1.0-18-amd64)", "", kAmd, "gpu", "gfx906",
     "Radeon VII"},
    // xmrig/xmrig#3335 (rusticl, Mesa 23.1.7) and xmrig/xmrig#3768 (rusticl): Navi 22 has no
    // profile.
    {"AMD Radeon RX 6700 XT (navi22, LLVM 15.0.7, DRM 3.54, 6.5.0-1-rt-amd64)", "", kAmd, "gpu", "",
     ""},
    {"AMD Radeon RX 6700 XT (radeonsi, navi22, LLVM 21.1.5, DRM 3.64, 6.17.9-2-cachyos)", "", kAmd,
     "gpu", "", ""},
    // llvm/llvm-project#52665 (Clover, Mesa 22.3.7) and ROCm/legacy-rocm-build#1575 (Clover, Mesa
    // 21.0.3): APUs, no profile.
    {"RENOIR (renoir, LLVM 15.0.7, DRM 3.54, 6.5.3-060503-generic)", "", kAmd, "gpu", "", ""},
    {"AMD RAVEN2 (DRM 3.42.0, 5.11.0-34-generic, LLVM 12.0.0)", "", kAmd, "gpu", "", ""},

    // AMD's proprietary OpenCL (AMDGPU-PRO): RainbowMiner/RainbowMiner#1841, an RX 480 under
    // AMD-APP 3302.5 named by its chip's code name.
    {"Ellesmere", "", kAmdInc, "gpu", "gfx803", ""},

    // Other vendors. This repository's results/h100/suite_batched.md: the H100 measured here.
    {"NVIDIA H100 80GB HBM3", "", "NVIDIA Corporation", "gpu", "sm_90", "H100 SXM"},
    // develsoftware/GMinerRelease#50: PoCL on an AMD processor, vendor AuthenticAMD.
    {"pthread-AMD Phenom(tm) II X6 1055T Processor", "", "AuthenticAMD", "cpu", "cpu-generic", ""},
    // Guards, not driver strings: a longer ISA name, an AMD ISA name from another vendor's or a
    // CPU driver.
    {"gfx10100", "", kAmdInc, "gpu", "", ""},
    {"gfx1030", "", "NVIDIA Corporation", "gpu", "", ""},
    {"gfx906", "", "AuthenticAMD", "cpu", "cpu-generic", ""},
};

DeviceInfo device_of(const NamedDevice& n) {
  DeviceInfo d;
  d.name = n.name;
  d.board_name = n.board;
  d.vendor = n.vendor;
  d.type = n.type;
  return d;
}

const ProfileSet& checked_in() {
  static const ProfileSet set = ProfileSet::load_dir(test::source_path("devices"));
  return set;
}

// A profile of `match` with the figures of the checked-in CPU profile.
DeviceProfile profile_matching(const nlohmann::json& match) {
  auto j = read_json_file(test::source_path("devices/cpu-generic.json"));
  j["name"] = "probe";
  j["match"] = match;
  return profile_from_json(j, "probe.json");
}

DeviceInfo gpu_named(const std::string& name) {
  DeviceInfo d;
  d.name = name;
  d.type = "gpu";
  d.vendor = kAmd;
  return d;
}

}  // namespace

TEST_CASE("AMD cards match their profile under every driver's name", "[profile][amd]") {
  for (const auto& n : kDevices) {
    const DeviceInfo d = device_of(n);
    INFO(n.name << " | board " << n.board << " | " << n.vendor << " " << n.type);
    const DeviceProfile* p = checked_in().match(d);
    if (std::string(n.profile).empty()) {
      CHECK(p == nullptr);
      continue;
    }
    REQUIRE(p != nullptr);
    CHECK(p->name == n.profile);
    CHECK(p->model == n.model);
    // A database names the architecture and keeps the device: the lookup gives the same variant.
    CHECK(checked_in().find(p->name, d) == p);
  }
}

TEST_CASE("model variants of AMD cards carry their own figures", "[profile][amd]") {
  const auto figure = [](const char* name, const char* board, const char* key) {
    DeviceInfo d;
    d.name = name;
    d.board_name = board;
    d.vendor = kAmdInc;
    d.type = "gpu";
    const DeviceProfile* p = checked_in().match(d);
    REQUIRE(p != nullptr);
    return p->figure(key);
  };
  CHECK(figure("gfx1100", "AMD Radeon RX 7900 XTX", "compute_units") == 96);
  CHECK(figure("gfx1100", "AMD Radeon RX 7900 XTX", "memory_bandwidth_gbs") == 960);
  CHECK(figure("gfx1100", "AMD Radeon RX 7900 XT", "compute_units") == 84);
  CHECK(figure("gfx1030", "AMD Radeon RX 6800", "compute_units") == 60);
  CHECK(figure("gfx1030", "AMD Radeon RX 6800 XT", "compute_units") == 72);
  CHECK(figure("gfx1030", "AMD Radeon RX 6950 XT", "memory_bandwidth_gbs") == 576);
  CHECK(figure("gfx906", "AMD Radeon Instinct MI60", "compute_units") == 64);
  CHECK(figure("gfx906", "AMD Instinct MI60 / MI50", "compute_units") == 60);
  CHECK(figure("gfx906", "AMD Radeon VII", "peak_fp32_gflops") == 13824);
  CHECK(figure("gfx803", "AMD Radeon RX 570 Series", "compute_units") == 32);
  CHECK(figure("gfx803", "AMD Radeon RX 590 Series", "boost_clock_mhz") == 1545);
  CHECK(figure("gfx1010", "AMD Radeon RX 5700", "compute_units") == 36);
  CHECK(figure("gfx1010", "AMD Radeon RX 5700 XT 50th Anniversary", "compute_units") == 40);
  // A model keeps the architecture's other figures.
  CHECK(figure("gfx1100", "AMD Radeon RX 7900 XTX", "max_waves_per_simd") ==
        checked_in().find("gfx1100")->figure("max_waves_per_simd"));
}

TEST_CASE("whole-word names match only where no letter or digit adjoins them", "[profile]") {
  const auto words = profile_matching(
      {{"type", "gpu"}, {"name_contains", {"navi1", "gfx1010"}}, {"whole_words", true}});
  CHECK_FALSE(words.matches(gpu_named("AMD Radeon RX 5500 XT (navi14, LLVM 15.0.7, DRM 3.49)")));
  CHECK_FALSE(words.matches(gpu_named("gfx10100")));
  CHECK_FALSE(words.matches(gpu_named("xgfx1010")));
  CHECK(words.matches(gpu_named("gfx1010:xnack-")));
  CHECK(words.matches(gpu_named("GFX1010")));
  CHECK(words.matches(gpu_named("AMD Radeon (NAVI1, DRM 3.49)")));
  // The board name counts as a name.
  DeviceInfo rocm = gpu_named("gfx9999");
  rocm.board_name = "Card gfx1010";
  CHECK(words.matches(rocm));

  // Without the option a name matches anywhere, as the NVIDIA profile's do.
  const auto substrings =
      profile_matching({{"type", "gpu"}, {"name_contains", {"navi1"}}, {"whole_words", false}});
  CHECK(substrings.matches(gpu_named("AMD Radeon RX 5500 XT (navi14, LLVM 15.0.7, DRM 3.49)")));
  CHECK_FALSE(profile_matching({{"type", "gpu"}, {"name_contains", {"navi1"}}}).whole_words);

  auto bad = read_json_file(test::source_path("devices/gfx1012.json"));
  bad["match"]["whole_words"] = "yes";
  try {
    profile_from_json(bad, "bad.json");
    FAIL("a non-boolean whole_words was accepted");
  } catch (const Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("bad.json") && Catch::Contains("match.whole_words"));
  }
}

TEST_CASE("a database's device finds its model by the board name too", "[profile][amd]") {
  DeviceInfo rocm;
  rocm.name = "gfx1100";
  rocm.board_name = "AMD Radeon RX 7900 XTX";
  CHECK(checked_in().find("gfx1100", rocm)->model == "RX 7900 XTX");
  // By CL_DEVICE_NAME alone a ROCm device names only its architecture.
  CHECK(checked_in().find("gfx1100", rocm.name)->model.empty());
  CHECK(
      checked_in().find("gfx1100", "AMD Radeon RX 7900 XTX (radeonsi, navi31, DRM 3.54)")->model ==
      "RX 7900 XTX");
  CHECK(checked_in().find("gfx906", "AMD Instinct MI60 / MI50")->model.empty());

  // The board name travels with the device description, and only where there is one.
  nlohmann::json j = rocm;
  CHECK(j.at("board_name") == "AMD Radeon RX 7900 XTX");
  CHECK(j.get<DeviceInfo>().board_name == "AMD Radeon RX 7900 XTX");
  nlohmann::json plain = gpu_named("gfx1100");
  CHECK_FALSE(plain.contains("board_name"));
  CHECK(plain.get<DeviceInfo>().board_name.empty());
}

TEST_CASE("gemmtune devices applies whole-word matching from the profile folder",
          "[profile][cli]") {
  const auto& t = test::test_device();
  if (!t.device) return test::unavailable("no OpenCL device");
  // The first word of the device's name ("pthread" for PoCL), and that word less its last letter.
  const std::string name = t.device->info.name;
  const std::string word = name.substr(0, name.find_first_of("- "));
  REQUIRE(word.size() >= 2);
  const std::string prefix = word.substr(0, word.size() - 1);

  const auto run_with = [&](bool prefix_whole_words) {
    const std::string dir = test::temp_dir("profile-words");
    auto j = read_json_file(test::source_path("devices/cpu-generic.json"));
    j["name"] = "by-word";
    j["match"] = {{"name_contains", {word}}, {"whole_words", true}, {"priority", 5}};
    write_json_atomic(dir + "/by-word.json", j);
    // Higher priority: it wins wherever it matches.
    j["name"] = "by-prefix";
    j["match"] = {
        {"name_contains", {prefix}}, {"whole_words", prefix_whole_words}, {"priority", 9}};
    write_json_atomic(dir + "/by-prefix.json", j);
    const auto r = test::run_gemmtune("--devices " + dir + " devices --json");
    REQUIRE(r.exit_code == 0);
    for (const auto& d : nlohmann::json::parse(r.out)) {
      if (d.at("name") == name) return d.at("profile").get<std::string>();
    }
    FAIL("the test device is not listed: " << r.out);
    return std::string();
  };
  CHECK(run_with(true) == "by-word");
  CHECK(run_with(false) == "by-prefix");
}

}  // namespace gemmtune_tests::src_device_test_device_profile_matching
