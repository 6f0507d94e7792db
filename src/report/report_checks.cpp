// SPDX-License-Identifier: Apache-2.0
#include "src/report/report_checks.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "src/kernel/gemm_view.hpp"

namespace gemmtune::report_checks {

namespace {

// A rate beyond the profile's peak by more than its clock and rounding allow is no rate at all.
constexpr double kMaxPlausiblePercentOfPeak = 125;

std::string kib(double bytes) {
  return fmt::format("{:.1f} KiB", bytes / 1024.0);
}

ReportItem unknown_item(const std::string& id, const std::string& title, const std::string& why) {
  ReportItem item;
  item.id = id;
  item.title = title;
  item.value_text = "n/a";
  item.verdict = Verdict::kUnknown;
  item.note = why;
  return item;
}

ReportItem known_item(const std::string& id, const std::string& title, double value) {
  ReportItem item;
  item.id = id;
  item.title = title;
  item.value = value;
  return item;
}

bool is_cpu(const DeviceProfile* p, const DatabaseDevice& d) {
  return p && (p->match_type == "cpu" || d.type == "cpu");
}

}  // namespace

const char* const kEstimateBasis = "estimate (kernel spec)";

std::string measured_basis(const DatabaseEntry& entry) {
  // The offline AMD build's counts are the compiler's real ones, but no device ran them.
  if (entry.usage.source.rfind("offline", 0) == 0) {
    return "compiled (" + entry.usage.source + "), no device";
  }
  return "measured (" + (entry.usage.source.empty() ? std::string("driver") : entry.usage.source) +
         ")";
}

std::optional<int64_t> Values::per_thread(Role register_tile, Role tile, Role threads) const {
  if (auto v = get(register_tile)) return v;
  auto t = get(tile), d = get(threads);
  if (t && d && *d > 0) return *t / *d;
  return std::nullopt;
}

EntryFacts::EntryFacts(const DatabaseEntry& entry_, const KernelSpec* spec_,
                       const DeviceProfile* profile_, const DatabaseDevice& device_,
                       Configuration params_)
    : entry(entry_),
      spec(spec_),
      profile(profile_),
      device(device_),
      params(std::move(params_)),
      elem(element_bytes(entry_.key.precision)),
      ctx(launch_context(entry_.key.precision, device_.compute_units)),
      values(spec, params, ctx),
      cpu(is_cpu(profile_, device_)) {
  if (entry.usage.local_mem_bytes) {
    lds = *entry.usage.local_mem_bytes;
    lds_basis = measured_basis(entry);
  } else if (spec) {
    lds = spec->local_mem_bytes(params, ctx);
    lds_basis = kEstimateBasis;
  }
  if (entry.usage.registers) {
    regs = *entry.usage.registers;
    regs_basis = measured_basis(entry);
  } else if (spec) {
    regs = spec->registers(params, ctx);
    regs_basis = kEstimateBasis;
  }
  if (spec) wg = spec->work_group_size(params, ctx);
  if (!wg) {
    auto mc = values.get(Role::kThreadsM), nc = values.get(Role::kThreadsN);
    if (mc && nc) wg = *mc * *nc;
  }
  if (profile && !profile->wavefront_sizes.empty()) wave = profile->wavefront_sizes.front();
  if (profile) peak = peak_gflops(*profile, entry.key.precision, device);
}

ReportItem lds_check(const EntryFacts& f) {
  const std::string id = "lds", title = "Local memory (LDS) per work-group";
  if (!f.lds) return unknown_item(id, title, "no measurement and no local_memory_bytes formula");
  ReportItem item = known_item(id, title, static_cast<double>(*f.lds));
  item.value_text = kib(static_cast<double>(*f.lds));
  item.basis = f.lds_basis;
  if (f.profile) {
    const double per_wg = f.profile->figure("lds_per_workgroup_bytes");
    const double per_cu = f.profile->figure("lds_per_cu_bytes");
    item.target = fmt::format("<= {} per work-group; <= {} leaves room for 2 work-groups/CU",
                              kib(per_wg), kib(per_cu / 2));
    item.verdict = *f.lds > per_wg       ? Verdict::kBad
                   : *f.lds > per_cu / 2 ? Verdict::kWarn
                                         : Verdict::kOk;
    if (*f.lds > 0) {
      item.note = fmt::format("{} work-group(s) per CU by LDS",
                              static_cast<int64_t>(per_cu / static_cast<double>(*f.lds)));
    }
  }
  return item;
}

ReportItem registers_check(const EntryFacts& f) {
  const std::string id = "registers", title = "Registers per work-item";
  if (!f.regs) return unknown_item(id, title, "no measurement and no registers formula");
  const int64_t regs = *f.regs;
  ReportItem item = known_item(id, title, static_cast<double>(regs));
  item.value_text = std::to_string(regs) + " registers";
  item.basis = f.regs_basis;
  const auto& usage = f.entry.usage;
  const bool spills = usage.spills && *usage.spills > 0;
  if (spills) item.note = fmt::format("{} spilled", *usage.spills);
  if (!f.profile) {
    if (spills) item.verdict = Verdict::kBad;
    return item;
  }
  const auto max_regs = static_cast<int64_t>(f.profile->figure("max_registers_per_thread"));
  const auto file = static_cast<int64_t>(f.profile->figure("registers_per_simd_lane"));
  const auto granule =
      std::max<int64_t>(1, static_cast<int64_t>(f.profile->figure("register_granularity")));
  if (f.cpu || max_regs == 0) {
    item.target = fmt::format("<= {} vector registers (more spill to cache)", file);
    item.verdict = spills ? Verdict::kBad : regs > file ? Verdict::kWarn : Verdict::kOk;
  } else {
    // The most registers that still let 4 waves share a SIMD.
    const int64_t for_four = (file / 4) / granule * granule;
    item.target = fmt::format("<= {} (hardware limit); <= {} for 4 waves/SIMD", max_regs,
                              std::min(for_four, max_regs));
    item.verdict = (spills || regs > max_regs) ? Verdict::kBad
                   : regs > for_four           ? Verdict::kWarn
                                               : Verdict::kOk;
  }
  return item;
}

ReportItem occupancy_check(const EntryFacts& f) {
  const std::string id = "occupancy", title = "Occupancy (waves per SIMD)";
  if (!f.profile) return unknown_item(id, title, "needs a device profile");
  if (!f.regs || !f.lds || !f.wg) {
    return unknown_item(id, title, "needs registers, LDS and work-group size");
  }
  const auto o = estimate_occupancy(*f.profile, *f.regs, *f.lds, *f.wg);
  ReportItem item = known_item(id, title, static_cast<double>(o.waves));
  item.value_text = fmt::format("{} of {} (limited by {})", o.waves, o.max_waves, o.limiter);
  const std::string measured = measured_basis(f.entry);
  item.basis = (f.regs_basis == measured || f.lds_basis == measured ? "from measured figures"
                                                                    : "from estimates") +
               std::string(" and the profile");
  item.note = fmt::format(
      "registers allocated {} (granule {}) allow {} waves; LDS allows {}; wave{}",
      o.allocated_registers, static_cast<int64_t>(f.profile->figure("register_granularity")),
      o.waves_by_registers, o.waves_by_lds, o.wavefront);
  if (f.cpu) {
    item.target = "not meaningful on a CPU device";
    item.verdict = Verdict::kUnknown;
  } else {
    const int64_t want = std::min<int64_t>(4, o.max_waves);
    item.target = fmt::format(">= {} waves to hide memory latency", want);
    item.verdict = o.waves >= want ? Verdict::kOk : o.waves >= 2 ? Verdict::kWarn : Verdict::kBad;
  }
  return item;
}

// Lanes of the last, partial wave of a work-group are wasted.
ReportItem wave_utilization_check(const EntryFacts& f) {
  const std::string id = "wave_utilization", title = "Wave utilization";
  if (!f.wg || f.wave <= 0) {
    return unknown_item(id, title, "needs the work-group size and a wavefront size");
  }
  const int64_t waves = ceil_div(*f.wg, f.wave);
  const double util = static_cast<double>(*f.wg) / static_cast<double>(waves * f.wave);
  ReportItem item = known_item(id, title, util * 100);
  item.value_text =
      fmt::format("{:.0f} % ({} work-items in {} wave(s) of {})", util * 100, *f.wg, waves, f.wave);
  item.target = fmt::format("100 %: work-group size a multiple of {}", f.wave);
  item.basis = "kernel spec and profile";
  item.verdict = util >= 1.0 ? Verdict::kOk : util >= 0.5 ? Verdict::kWarn : Verdict::kBad;
  return item;
}

// Register tiling amortizes each load over this many FMAs.
ReportItem work_per_thread_check(const EntryFacts& f) {
  const std::string id = "work_per_thread", title = "Outputs per work-item (MWI x NWI)";
  const auto mwi = f.values.per_thread(Role::kRegisterTileM, Role::kTileM, Role::kThreadsM);
  const auto nwi = f.values.per_thread(Role::kRegisterTileN, Role::kTileN, Role::kThreadsN);
  if (!mwi || !nwi) {
    return unknown_item(id, title, "the template declares no register_tile_m/n roles");
  }
  const int64_t outputs = *mwi * *nwi;
  ReportItem item = known_item(id, title, static_cast<double>(outputs));
  item.value_text = fmt::format("{} ({} x {})", outputs, *mwi, *nwi);
  item.target = ">= 16 outputs per work-item";
  item.basis = f.spec ? "kernel spec" : "parameters";
  item.verdict = outputs >= 16 ? Verdict::kOk : outputs >= 4 ? Verdict::kWarn : Verdict::kBad;
  return item;
}

ReportItem vector_width_check(const EntryFacts& f) {
  const std::string id = "vector_width", title = "Vector width (VWM x VWN)";
  const auto vwm = f.values.get(Role::kVectorM), vwn = f.values.get(Role::kVectorN);
  if (!vwm || !vwn) {
    return unknown_item(id, title, "the template declares no vector_m/n roles");
  }
  const int64_t width = *vwm * *vwn;
  ReportItem item = known_item(id, title, static_cast<double>(width));
  item.value_text = fmt::format("{} ({} x {}; {} and {} bytes per access)", width, *vwm, *vwn,
                                *vwm * f.elem, *vwn * f.elem);
  item.target = ">= 4 (wide loads along M and N)";
  item.basis = f.spec ? "kernel spec" : "parameters";
  item.verdict = width >= 4 ? Verdict::kOk : Verdict::kWarn;
  return item;
}

// Memory- or compute-bound: FLOPs per byte loaded for one work-group tile,
// 2*MWG*NWG*KWG / (ELEM_BYTES*KWG*(MWG+NWG)), against the profile's ridge point.
ReportItem bound_check(const EntryFacts& f) {
  const std::string id = "bound", title = "Arithmetic intensity of the tile";
  const auto mwg = f.values.get(Role::kTileM), nwg = f.values.get(Role::kTileN),
             kwg = f.values.get(Role::kTileK);
  if (!mwg || !nwg || *mwg + *nwg <= 0) {
    return unknown_item(id, title, "the template declares no tile_m/n roles");
  }
  const double k = kwg ? static_cast<double>(*kwg) : 1.0;
  const double ai = 2.0 * *mwg * *nwg * k / (static_cast<double>(f.elem) * k * (*mwg + *nwg));
  ReportItem item = known_item(id, title, ai);
  item.basis = "kernel spec and profile";
  const auto bw = f.profile ? f.profile->figure_if("memory_bandwidth_gbs") : std::nullopt;
  if (f.peak && bw && *bw > 0) {
    const double ridge = *f.peak / *bw;
    const bool compute = ai >= ridge;
    item.value_text = fmt::format("{:.1f} FLOP/byte: {}-bound", ai, compute ? "compute" : "memory");
    item.target = fmt::format(">= {:.1f} FLOP/byte (ridge: {:.0f} GFLOPS / {:.0f} GB/s)", ridge,
                              *f.peak, *bw);
    item.verdict = compute ? Verdict::kOk : Verdict::kWarn;
    item.note = "global loads of one tile, ignoring reuse through caches";
  } else {
    item.value_text = fmt::format("{:.1f} FLOP/byte", ai);
    item.target = "needs peak GFLOPS and bandwidth of the profile";
  }
  return item;
}

std::optional<int64_t> work_groups(const EntryFacts& f) {
  const KernelView view = kernel_view(f.entry.key.problem());
  // Without a usable launch block (CLBlast's templates declare none) the count comes from the
  // tile below.
  if (const std::optional<LaunchGeometry> g =
          f.spec ? try_launch_geometry(*f.spec, f.params, f.ctx, view) : std::nullopt) {
    int64_t groups = 1;
    for (size_t d = 0; d < g->global.size(); ++d) {
      groups *= static_cast<int64_t>(g->global[d] / g->local[d]);
    }
    return groups;
  }
  const auto mwg = f.values.get(Role::kTileM), nwg = f.values.get(Role::kTileN);
  if (!mwg || !nwg) return std::nullopt;
  const int64_t split_k = std::max<int64_t>(1, f.values.get(Role::kSplitK).value_or(1));
  return ceil_div(view.m, *mwg) * ceil_div(view.n, *nwg) * view.batch * split_k;
}

// A small problem leaves compute units idle.
ReportItem parallelism_check(const EntryFacts& f) {
  const std::string id = "parallelism", title = "Work-groups per compute unit";
  const double cus = f.device.compute_units > 0
                         ? f.device.compute_units
                         : (f.profile ? f.profile->figure_if("compute_units").value_or(0) : 0);
  const auto groups = work_groups(f);
  if (!groups || cus <= 0) {
    return unknown_item(id, title, "needs the tile_m/n roles and compute units");
  }
  const double per_cu = static_cast<double>(*groups) / cus;
  ReportItem item = known_item(id, title, per_cu);
  item.value_text =
      fmt::format("{:.2f} ({} work-groups, {} CUs)", per_cu, *groups, static_cast<int64_t>(cus));
  item.target = ">= 2 work-groups per CU";
  item.basis = "shape, tile, split-K and batch";
  item.verdict = *groups >= 2 * cus ? Verdict::kOk
                 : *groups >= cus   ? Verdict::kWarn
                                    : Verdict::kBad;
  return item;
}

ReportItem peak_check(const EntryFacts& f) {
  const std::string id = "peak", title = "Fraction of peak";
  if (!f.peak || *f.peak <= 0) {
    return unknown_item(id, title, "the profile gives no peak for this precision");
  }
  ReportItem item = known_item(id, title, f.entry.gflops / *f.peak * 100);
  item.value_text =
      fmt::format("{:.1f} % ({:.1f} of {:.0f} GFLOPS)", *item.value, f.entry.gflops, *f.peak);
  item.target = ">= 50 % of peak";
  item.basis = "measured GFLOPS and profile peak";
  if (*item.value > kMaxPlausiblePercentOfPeak) {
    // Above the device's peak: the timer was measured, not the kernel.
    item.value_text += ": above the device's peak, a timer error (not a real rate)";
    item.verdict = Verdict::kBad;
    return item;
  }
  item.verdict = *item.value >= 50   ? Verdict::kOk
                 : *item.value >= 20 ? Verdict::kWarn
                                     : Verdict::kBad;
  return item;
}

}  // namespace gemmtune::report_checks
