// SPDX-License-Identifier: Apache-2.0
#include "src/device/driver_diagnostics.hpp"

#include <cctype>
#include <cstdlib>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "src/core/text.hpp"

namespace gemmtune {

namespace {

// ROCm's variable that makes a card report (and build for) another ISA than its own.
constexpr const char* kOverrideVariable = "HSA_OVERRIDE_GFX_VERSION";

// The OpenCL version gemmtune's kernels and host calls need.
constexpr int kNeededMajor = 1, kNeededMinor = 2;

// A crash line quoted in a diagnosis is cut to this many characters: the rest is a stack.
constexpr size_t kQuotedCrashChars = 160;

// AMD cards by the names drivers give them, with their ISA: marketing names (ROCm's board name,
// Mesa's device name) and chip code names (Mesa's, in parentheses). Matched as whole words, so
// that "rx 570" does not match "RX 5700".
const std::pair<const char*, const char*> kCardIsas[] = {
    {"rx 5300", "gfx1012"},  {"rx 5500", "gfx1012"},        {"navi14", "gfx1012"},
    {"rx 5600", "gfx1010"},  {"rx 5700", "gfx1010"},        {"navi10", "gfx1010"},
    {"rx 6800", "gfx1030"},  {"rx 6900", "gfx1030"},        {"rx 6950", "gfx1030"},
    {"navi21", "gfx1030"},   {"sienna_cichlid", "gfx1030"}, {"rx 7900", "gfx1100"},
    {"navi31", "gfx1100"},   {"radeon vii", "gfx906"},      {"mi50", "gfx906"},
    {"mi60", "gfx906"},      {"vega20", "gfx906"},          {"rx 470", "gfx803"},
    {"rx 480", "gfx803"},    {"rx 570", "gfx803"},          {"rx 580", "gfx803"},
    {"polaris10", "gfx803"}, {"ellesmere", "gfx803"},
};

// What a crashed compiler leaves in a build log or in the error of the build.
const char* const kCrashMarks[] = {
    "LLVM ERROR",
    "Stack dump",
    "PLEASE submit a bug report",
    "Segmentation fault",
    "SIGSEGV",
    "SIGABRT",
    "SIGBUS",
    "SIGILL",
    "Aborted",
    "abort()",
    "terminate called",
    "killed by signal",
    "terminated by signal",
};

bool alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// Whether `word` occurs in `text` (both lower case) with no letter or digit adjoining it.
bool names_word(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !alnum(text[at - 1])) && (end == text.size() || !alnum(text[end]))) {
      return true;
    }
  }
  return false;
}

// The ISA a name spells ("gfx1030" of "gfx1030:xnack-"), else "".
std::string isa_in(const std::string& name) {
  static const std::regex kIsa(R"((^|[^a-z0-9])(gfx[0-9]{1,2}[0-9a-f]{2})($|[^a-z0-9]))");
  std::smatch m;
  const std::string text = lower(name);
  return std::regex_search(text, m, kIsa) ? m[2].str() : "";
}

// The ISA of the card a name describes, from the ISA it spells or the card it names, else "".
std::string card_isa(const std::string& name) {
  if (std::string isa = isa_in(name); !isa.empty()) return isa;
  const std::string text = lower(name);
  for (const auto& [card, isa] : kCardIsas) {
    if (names_word(text, card)) return isa;
  }
  return "";
}

// The ISA an override value names ("10.3.0" -> "gfx1030", "9.0.10" -> "gfx90a"), else "".
std::string override_isa(const std::string& value) {
  static const std::regex kVersion(R"(\s*(\d{1,2})\.(\d{1,2})\.(\d{1,2})\s*)");
  std::smatch m;
  if (!std::regex_match(value, m, kVersion)) return "";
  const int minor = std::stoi(m[2].str()), stepping = std::stoi(m[3].str());
  constexpr int kHexDigits = 16;
  if (minor >= kHexDigits || stepping >= kHexDigits) return "";
  return fmt::format("gfx{}{:x}{:x}", m[1].str(), minor, stepping);
}

// "gfx10" of "gfx1012": the generation whose bitcode a libclc ships together.
std::string isa_family(const std::string& isa) {
  constexpr size_t kMinorAndStepping = 2;
  return isa.size() > kMinorAndStepping ? isa.substr(0, isa.size() - kMinorAndStepping) : isa;
}

bool is_mesa(const DeviceInfo& d) {
  const std::string text = lower(d.device_version + " " + d.platform_name + " " +
                                 d.platform_version + " " + d.driver_version);
  return names_word(text, "mesa") || names_word(text, "clover");
}

// Where a Mesa user on an AMD card gets a working OpenCL.
const char* kMesaWaysOut =
    "rusticl (Mesa 23.1 or newer, RUSTICL_ENABLE=radeonsi) or ROCm's OpenCL, where ROCm supports "
    "the card";

std::optional<std::string> missing_libclc_bitcode(const std::string& log) {
  static const std::regex kMissing(
      R"(cannot open file '([^']*?(gfx[0-9]{1,2}[0-9a-f]{2})-amdgcn-[^']*\.bc)')");
  std::smatch m;
  if (!std::regex_search(log, m, kMissing)) return std::nullopt;
  const std::string file = m[1].str(), isa = m[2].str();
  return fmt::format(
      "Mesa Clover has no libclc bitcode for {} ({} is missing), so it builds no kernel on this "
      "card: install a libclc with {} bitcode, or use {}",
      isa, file, isa_family(isa), kMesaWaysOut);
}

std::optional<std::string> compiler_crash(const std::string& log, const DeviceInfo& device) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    for (const char* mark : kCrashMarks) {
      if (line.find(mark) == std::string::npos) continue;
      line.erase(0, line.find_first_not_of(" \t"));
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
        line.pop_back();
      }
      if (line.size() > kQuotedCrashChars) line = line.substr(0, kQuotedCrashChars) + "...";
      const std::string who = device.platform_name.empty() ? "the driver" : device.platform_name;
      return fmt::format(
          "the OpenCL compiler of {} crashed ({}): a fault of the driver, not of the kernel; this "
          "configuration counts as failed to build and the others are still tried",
          who, line);
    }
  }
  return std::nullopt;
}

// A device older than OpenCL 1.2 (Mesa's Clover): what gemmtune does there, what it cannot, and
// where a card gets a newer OpenCL.
std::optional<std::string> old_opencl(const DeviceInfo& device) {
  static const std::regex kVersion(R"(OpenCL (\d+)\.(\d+))");
  std::smatch m;
  if (!std::regex_search(device.device_version, m, kVersion)) return std::nullopt;
  const int major = std::stoi(m[1].str()), minor = std::stoi(m[2].str());
  if (major > kNeededMajor || (major == kNeededMajor && minor >= kNeededMinor)) return std::nullopt;
  const std::string instead =
      is_mesa(device) ? std::string("for OpenCL ") + std::to_string(kNeededMajor) + "." +
                            std::to_string(kNeededMinor) + " or newer on this card use " +
                            kMesaWaysOut
                      : "a driver of OpenCL 1.2 or newer lifts these limits";
  return fmt::format(
      "{} is an OpenCL {}.{} device ({}): gemmtune builds its kernels as OpenCL C 1.1 here, "
      "keeps to the device's work-group and local-memory limits and calls no newer host "
      "function, so every template runs; half precision needs cl_khr_fp16, which such drivers "
      "lack; {}",
      device.name, major, minor, device.device_version, instead);
}

// A device name whose ISA is not the card's: ROCm reports (and builds for) the overridden ISA.
std::optional<std::string> overridden_isa(const DeviceInfo& device,
                                          const std::string& gfx_override) {
  const std::string reported = isa_in(device.name);
  if (reported.empty()) return std::nullopt;
  const std::string card = device.board_name.empty() ? "" : card_isa(device.board_name);
  const std::string forced = override_isa(gfx_override);
  const std::string set =
      gfx_override.empty() ? "" : fmt::format("{}={}", kOverrideVariable, gfx_override);
  if (!card.empty() && card != reported) {
    const std::string cause =
        set.empty() ? fmt::format("an ISA override ({}) is in effect", kOverrideVariable)
                    : set + " makes ROCm report and build " + reported;
    return fmt::format(
        "the device name says {} but {} is a {} card: {}, so kernels are built for another ISA "
        "(they may fail or compute wrong results) and the {} profile's figures describe another "
        "card; unset {} where ROCm supports {}",
        reported, device.board_name, card, cause, reported, kOverrideVariable, card);
  }
  if (!forced.empty() && forced == reported) {
    return fmt::format(
        "{} is set: ROCm reports and builds {} whatever the card is ({}), so the {} profile's "
        "figures may describe another card; unset it where the card's own ISA is supported",
        set, reported, device.board_name.empty() ? device.name : device.board_name, reported);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> diagnose_build_failure(const std::string& log,
                                                  const DeviceInfo& device) {
  if (auto d = missing_libclc_bitcode(log)) return d;
  if (auto d = compiler_crash(log, device)) return d;
  // Nothing in the log: what the driver says of the device may be why (an OpenCL 1.1 compiler
  // refuses OpenCL C 1.2; code for an overridden ISA may not build).
  const auto notes = device_notes(device);
  if (!notes.empty()) return notes.front();
  return std::nullopt;
}

std::string diagnosed_build_log(const std::string& log, const DeviceInfo& device) {
  const auto d = diagnose_build_failure(log, device);
  return d ? *d + "\n" + log : log;
}

std::vector<std::string> device_notes(const DeviceInfo& device, const std::string& gfx_override) {
  std::vector<std::string> notes;
  if (auto n = old_opencl(device)) notes.push_back(*n);
  if (auto n = overridden_isa(device, gfx_override)) notes.push_back(*n);
  return notes;
}

std::vector<std::string> device_notes(const DeviceInfo& device) {
  const char* value = std::getenv(kOverrideVariable);
  return device_notes(device, value ? value : "");
}

void warn_device_notes(const DeviceInfo& device) {
  for (const auto& note : device_notes(device)) {
    spdlog::warn("device {} ({}): {}", device.selector(), device.name, note);
  }
}

}  // namespace gemmtune
