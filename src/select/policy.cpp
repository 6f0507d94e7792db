// SPDX-License-Identifier: Apache-2.0
#include "src/select/policy.hpp"

#include <algorithm>
#include <set>

#include "src/core/error.hpp"
#include "src/device/device_profile.hpp"

namespace gemmtune {

namespace {

constexpr const char* kSection = "selection";

const std::vector<std::pair<Relaxation, const char*>>& relaxation_names() {
  static const std::vector<std::pair<Relaxation, const char*>> names = {
      {Relaxation::kStorageOrder, "storage order"},
      {Relaxation::kEpilogue, "epilogue"},
      {Relaxation::kBatchCount, "batch count"}};
  return names;
}

SelectionPolicy make_defaults() {
  SelectionPolicy p;
  // calibrate() on the H100 journals of tests/data/h100/search* (706 transfer pairs; mean |log
  // error| 0.086 against 0.210 unmodelled): the only device calibrated so far, so every other
  // device takes its constants until its profile states its own.
  p.model.saturation_groups = 1.25;
  p.model.group_overhead = 2;
  p.model.edge_cost = 1;
  p.model.bandwidth_efficiency = 0.5;
  p.model.launch_us = 5;
  p.model.rate_cap = 0.7;
  p.model.distance_penalty = 0.054;
  // An entry of the same kernel view in the other order runs the same tiles; an epilogue costs
  // the tiles little next to the GEMM; another batch count keeps the tiles and the model bridges
  // the count.
  p.relaxations = {Relaxation::kStorageOrder, Relaxation::kEpilogue, Relaxation::kBatchCount};
  // xgemm_direct needs no padding copies and runs every shape: the baseline's kind of kernel.
  p.safe_path_kernel = "xgemm_direct";
  // xgemm_fast's defaults are the faster where they run; xgemm_direct's run everywhere.
  p.default_kernels = {"xgemm_fast", "xgemm_direct"};
  // The skinny kernel's shapes: a small side of C of at most 16 (its template's range).
  p.skinny_side = 16;
  p.source = "gemmtune's defaults";
  return p;
}

[[noreturn]] void wrong(const DeviceProfile& profile, const std::string& field,
                        const std::string& what) {
  throw invalid_file(profile.file, "field '" + std::string(kSection) + "." + field + "' " + what);
}

std::vector<std::string> strings(const DeviceProfile& profile, const nlohmann::json& j,
                                 const std::string& field) {
  if (!j.is_array()) wrong(profile, field, "must be an array of strings");
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string()) wrong(profile, field, "must be an array of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Relaxation relaxation_of(const DeviceProfile& profile, const std::string& name) {
  for (const auto& [r, n] : relaxation_names()) {
    if (name == n) return r;
  }
  wrong(profile, "relaxations",
        "names no relaxation '" + name + "' (storage order, epilogue or batch count)");
}

void read_model(const DeviceProfile& profile, const nlohmann::json& j, ModelConstants& model) {
  if (!j.is_object()) wrong(profile, "model", "must be an object of the model's constants");
  for (const auto& [name, value] : j.items()) {
    const auto& fields = model_constant_fields();
    auto it =
        std::find_if(fields.begin(), fields.end(), [&](const auto& f) { return name == f.first; });
    if (it == fields.end()) wrong(profile, "model." + name, "is no constant of the model");
    if (!value.is_number() || value.get<double>() < 0) {
      wrong(profile, "model." + name, "must be a number of at least 0");
    }
    model.*(it->second) = value.get<double>();
  }
}

void read_measured(const DeviceProfile& profile, const nlohmann::json& j, MeasuredRule& rule) {
  if (!j.is_object()) wrong(profile, "measured", "must be an object");
  for (const auto& [name, value] : j.items()) {
    const std::string field = "measured." + name;
    double* real = name == "max_distance"      ? &rule.max_distance
                   : name == "decay"           ? &rule.decay
                   : name == "model_weight"    ? &rule.model_weight
                   : name == "transfer_weight" ? &rule.transfer_weight
                                               : nullptr;
    if (real) {
      if (!value.is_number() || value.get<double>() < 0) {
        wrong(profile, field, "must be a number of at least 0");
      }
      *real = value.get<double>();
      continue;
    }
    int64_t* whole = name == "neighbours"    ? &rule.neighbours
                     : name == "min_configs" ? &rule.min_configs
                                             : nullptr;
    if (!whole) {
      wrong(profile, field,
            "is unknown (neighbours, min_configs, max_distance, decay, model_weight, "
            "transfer_weight)");
    }
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      wrong(profile, field, "must be a whole number");
    }
    *whole = value.get<int64_t>();
  }
}

void read_aligned_copy(const DeviceProfile& profile, const nlohmann::json& j,
                       AlignedCopyRule& rule) {
  if (!j.is_object()) wrong(profile, "aligned_copy", "must be an object");
  for (const auto& [name, value] : j.items()) {
    double* field = name == "max_share"   ? &rule.max_share
                    : name == "launch_us" ? &rule.launch_us
                                          : nullptr;
    if (!field) wrong(profile, "aligned_copy." + name, "is unknown (max_share, launch_us)");
    if (!value.is_number() || value.get<double>() < 0) {
      wrong(profile, "aligned_copy." + name, "must be a number of at least 0");
    }
    *field = value.get<double>();
  }
}

void read_half_loads(const DeviceProfile& profile, const nlohmann::json& j, HalfLoadsRule& rule) {
  if (!j.is_object()) wrong(profile, "half_loads", "must be an object");
  for (const auto& [name, value] : j.items()) {
    if (name == "min_k") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        wrong(profile, "half_loads.min_k", "must be a whole number");
      }
      rule.min_k = value.get<int64_t>();
    } else if (name == "without") {
      rule.without = strings(profile, value, "half_loads.without");
    } else {
      wrong(profile, "half_loads." + name, "is unknown (min_k, without)");
    }
  }
}

void read_split_k(const DeviceProfile& profile, const nlohmann::json& j, SplitKRule& rule) {
  if (!j.is_object()) wrong(profile, "split_k", "must be an object");
  const std::pair<const char*, double SplitKRule::*> numbers[] = {
      {"saturation_groups", &SplitKRule::saturation_groups},
      {"group_overhead", &SplitKRule::group_overhead},
      {"reduce_gbs", &SplitKRule::reduce_gbs},
      {"launch_us", &SplitKRule::launch_us},
      {"min_gain", &SplitKRule::min_gain}};
  for (const auto& [name, value] : j.items()) {
    if (name == "values") {
      if (!value.is_array() || value.empty()) {
        wrong(profile, "split_k.values", "must be a list of whole numbers of at least 1");
      }
      rule.values.clear();
      for (const auto& v : value) {
        if (!v.is_number_integer() || v.get<int64_t>() < 1) {
          wrong(profile, "split_k.values", "must be a list of whole numbers of at least 1");
        }
        rule.values.push_back(v.get<int64_t>());
      }
      continue;
    }
    const auto field = std::find_if(std::begin(numbers), std::end(numbers),
                                    [&](const auto& f) { return name == f.first; });
    if (field == std::end(numbers)) {
      wrong(profile, "split_k." + name,
            "is unknown (values, saturation_groups, group_overhead, reduce_gbs, launch_us, "
            "min_gain)");
    }
    if (!value.is_number() || value.get<double>() < 0) {
      wrong(profile, "split_k." + name, "must be a number of at least 0");
    }
    rule.*(field->second) = value.get<double>();
  }
  if (rule.min_gain >= 1) wrong(profile, "split_k.min_gain", "must be below 1");
}

void read_producer_rows(const DeviceProfile& profile, const nlohmann::json& j,
                        ProducerRowsRule& rule) {
  if (!j.is_object()) wrong(profile, "producer_rows", "must be an object");
  for (const auto& [name, value] : j.items()) {
    if (name == "max_groups_per_cu") {
      if (!value.is_number() || value.get<double>() < 0) {
        wrong(profile, "producer_rows." + name, "must be a number of at least 0");
      }
      rule.max_groups_per_cu = value.get<double>();
    } else if (name == "stages" || name == "min_k_tiles" || name == "k_major_b_min_tile_k") {
      const int64_t least = name == "stages" ? 2 : 0;
      if (!value.is_number_integer() || value.get<int64_t>() < least) {
        wrong(profile, "producer_rows." + name,
              "must be a whole number of at least " + std::to_string(least));
      }
      (name == "stages"        ? rule.stages
       : name == "min_k_tiles" ? rule.min_k_tiles
                               : rule.k_major_b_min_tile_k) = value.get<int64_t>();
    } else {
      wrong(profile, "producer_rows." + name,
            "is unknown (max_groups_per_cu, stages, min_k_tiles, k_major_b_min_tile_k)");
    }
  }
}

}  // namespace

std::string to_string(Relaxation r) {
  for (const auto& [relaxation, name] : relaxation_names()) {
    if (relaxation == r) return name;
  }
  return "";
}

const SelectionPolicy& SelectionPolicy::defaults() {
  static const SelectionPolicy policy = make_defaults();
  return policy;
}

SelectionPolicy SelectionPolicy::of(const DeviceProfile* profile) {
  SelectionPolicy p = defaults();
  if (!profile || profile->selection.is_null()) return p;
  const nlohmann::json& s = profile->selection;
  if (!s.contains("source") || !s["source"].is_string() || s["source"].get<std::string>().empty()) {
    wrong(*profile, "source", "must say what the values rest on");
  }
  for (const auto& [field, value] : s.items()) {
    if (field == "source") {
      p.source = value.get<std::string>();
    } else if (field == "model") {
      read_model(*profile, value, p.model);
    } else if (field == "relaxations") {
      p.relaxations.clear();
      std::set<Relaxation> seen;
      for (const auto& name : strings(*profile, value, field)) {
        const Relaxation r = relaxation_of(*profile, name);
        if (!seen.insert(r).second) wrong(*profile, field, "names '" + name + "' twice");
        p.relaxations.push_back(r);
      }
    } else if (field == "safe_path_kernel") {
      if (!value.is_string()) wrong(*profile, field, "must be a template's name, or \"\" for none");
      p.safe_path_kernel = value.get<std::string>();
    } else if (field == "default_kernels") {
      p.default_kernels = strings(*profile, value, field);
    } else if (field == "measured") {
      read_measured(*profile, value, p.measured);
    } else if (field == "aligned_copy") {
      read_aligned_copy(*profile, value, p.aligned_copy);
    } else if (field == "producer_rows") {
      read_producer_rows(*profile, value, p.producer_rows);
    } else if (field == "half_loads") {
      read_half_loads(*profile, value, p.half_loads);
    } else if (field == "split_k") {
      read_split_k(*profile, value, p.split_k);
    } else if (field == "skinny_side") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        wrong(*profile, field, "must be a whole number");
      }
      p.skinny_side = value.get<int64_t>();
    } else {
      wrong(*profile, field,
            "is unknown (source, model, measured, relaxations, safe_path_kernel, "
            "default_kernels, skinny_side, aligned_copy, producer_rows, half_loads, split_k)");
    }
  }
  return p;
}

}  // namespace gemmtune
