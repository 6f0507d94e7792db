// SPDX-License-Identifier: Apache-2.0
// The parameter roles' table: each role's name in a declaration, whether it is a size, and the
// parameter names templates conventionally give it (src/kernel/kernel_spec.hpp).

#include "src/kernel/kernel_spec.hpp"

#include <optional>
#include <string>
#include <vector>

#include "src/core/error.hpp"

namespace gemmtune {

namespace {

struct RoleInfo {
  Role role;
  std::string name;
  bool size;
  // The parameter names gemmtune's and CLBlast's templates give the role, most common first.
  std::vector<std::string> conventional;
};

const std::vector<RoleInfo>& role_table() {
  static const std::vector<RoleInfo> table = {
      {Role::kTileM, "tile_m", true, {"MWG", "WGD"}},
      {Role::kTileN, "tile_n", true, {"NWG", "WGD"}},
      {Role::kTileK, "tile_k", true, {"KWG", "WGD"}},
      {Role::kThreadsM, "threads_m", true, {"MDIMC", "MDIMCD"}},
      {Role::kThreadsN, "threads_n", true, {"NDIMC", "NDIMCD"}},
      {Role::kRegisterTileM, "register_tile_m", true, {"MWI"}},
      {Role::kRegisterTileN, "register_tile_n", true, {"NWI"}},
      {Role::kVectorM, "vector_m", true, {"VWM", "VWMD"}},
      {Role::kVectorN, "vector_n", true, {"VWN", "VWND"}},
      {Role::kUnrollK, "unroll_k", true, {"KWI", "KWID"}},
      {Role::kSplitK, "split_k", true, {"SPLITK"}},
      {Role::kLocalBufferA, "local_buffer_a", false, {"SA"}},
      {Role::kLocalBufferB, "local_buffer_b", false, {"SB"}},
      {Role::kStages, "stages", false, {"STAGES"}},
      {Role::kPadA, "pad_a", false, {"PADA"}},
      {Role::kPadB, "pad_b", false, {"PADB"}},
      {Role::kSwizzle, "swizzle", false, {"SWZ"}},
      {Role::kPrefetch, "prefetch", false, {"PREFETCH"}},
      {Role::kStrideM, "stride_m", false, {"STRM"}},
      {Role::kStrideN, "stride_n", false, {"STRN"}},
      {Role::kGroupM, "group_m", false, {"GROUPM"}},
  };
  return table;
}

const RoleInfo& role_info(Role role) {
  for (const auto& info : role_table()) {
    if (info.role == role) return info;
  }
  throw Error(ErrorCode::kInternal, "a role without an entry in the role table");
}

}  // namespace

const std::vector<Role>& all_roles() {
  static const std::vector<Role> roles = [] {
    std::vector<Role> out;
    for (const auto& info : role_table()) out.push_back(info.role);
    return out;
  }();
  return roles;
}

const std::string& role_name(Role role) {
  return role_info(role).name;
}

std::optional<Role> parse_role(const std::string& name) {
  for (const auto& info : role_table()) {
    if (info.name == name) return info.role;
  }
  return std::nullopt;
}

bool is_size_role(Role role) {
  return role_info(role).size;
}

std::optional<int64_t> conventional_role(Role role, const Configuration& config) {
  for (const auto& name : role_info(role).conventional) {
    if (auto it = config.find(name); it != config.end()) return it->second;
  }
  return std::nullopt;
}

}  // namespace gemmtune
