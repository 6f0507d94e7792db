// SPDX-License-Identifier: Apache-2.0
// How the chooser (chooser.hpp) falls back where a database has no entry of the problem's own key,
// and the constants of the model that predicts an entry at another shape (model.hpp): data of a
// device profile, its "selection" section, over the defaults of SelectionPolicy::defaults() (the
// one place they are written). A profile states only what differs for its class:
//
//   "selection": {
//     "source": "what the values rest on (a calibration, a measurement)",
//     "model": {"saturation_groups": 1.5, "launch_us": 8},
//     "relaxations": ["storage order", "epilogue", "batch count"],
//     "safe_path_kernel": "xgemm_direct",
//     "default_kernels": ["xgemm_fast", "xgemm_direct"],
//     "skinny_side": 16,
//     "aligned_copy": {"max_share": 0.07, "launch_us": 2.5},
//     "producer_rows": {"max_groups_per_cu": 2, "stages": 2, "min_k_tiles": 4},
//     "split_k": {"values": [1, 2, 4, 8], "saturation_groups": 4, "group_overhead": 2,
//                 "reduce_gbs": 3500, "launch_us": 2, "min_gain": 0.02}
//   }
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/select/model.hpp"

namespace gemmtune {

struct DeviceProfile;

// What of a problem a database entry may differ in and still serve it (besides the shape, which
// the model bridges).
enum class Relaxation {
  kStorageOrder,  // the same kernel view in the other storage order (a column-major m x n problem
                  // is the row-major n x m one with the transposes swapped)
  kEpilogue,      // no fused epilogue: a template that fuses one runs the same tiles
  kBatchCount,    // another batch count of the same batch layout, nearest first, then one GEMM
};
std::string to_string(Relaxation r);  // "storage order", "epilogue", "batch count"

// The chooser's step between an entry of the problem's shape and the model: where many
// configurations were measured at the same shapes (a database's cross-measurements,
// MeasuredConfiguration), the configuration that ran fastest, relative to the fastest there, on
// average over the measured shapes nearest the problem. Held out one shape at a time of a
// 215-shape grid measured on an H200 (results/h200/cross-grid/), it kept 0.975 of the best
// against the model's 0.931.
struct MeasuredRule {
  int64_t neighbours = 8;     // measured shapes averaged over (0: the step is off)
  int64_t min_configs = 8;    // configurations a shape needs measured to count
  double max_distance = 1.5;  // log distance of the nearest such shape; beyond it, the model
  // Each shape counts exp(-decay x its log distance) in the mean (0: all alike): a near shape
  // says more of the problem than one a factor of four away in a side. Held out at random shapes
  // (scripts/score-chooser.py), decay 2 keeps 0.946 of the best against 0.916 unweighted on an
  // H100 (48 shapes), 0.926 against 0.923 on an H200 (96 shapes, the grid database).
  double decay = 2;
  // Each shape's log(GFLOPS / the fastest's) is corrected by this weight times the log of what
  // the model says moving from that shape to the problem changes for the configuration (its tile
  // padding and waves there against here, at most a factor of 2 either way; 0: no correction), and
  // each configuration's mean is ranked with `model_weight` times the log of the model's
  // prediction for it at the problem (0: the mean alone). The nearby shapes say how the
  // configurations compare there; the model sees what differs at the problem itself: a tile that
  // pads a 29-column problem less than the 44-column shapes near it gains what the padding costs.
  // Held out (scripts/score-chooser.py), 0.5 and 0.1 kept more of the best than 0 and 0.25 (no
  // correction) on five of six sets and as much on the sixth: H100 40 narrow 0.962 against 0.955,
  // 48 training 0.958 against 0.945, 40 and 60 wide 0.977 and 0.967 against 0.971 and 0.958; H200
  // 96 shapes 0.930 against 0.926, the 215-shape grid 0.974 against 0.974. Against the mean alone
  // (both 0): 0.940, 0.940, 0.961, 0.953 on the H100 sets.
  double model_weight = 0.1;
  double transfer_weight = 0.5;
};

// Where a configuration with aligned copies (a template's launch.align_ld_parameter) serves a
// shape it was not measured at, the chooser turns the copies on where their estimated time is at
// most `max_share` of the kernel's shortest possible time (its flops at the profile's peak; a
// prediction can miss small shapes by far more), and off elsewhere: a measurement at a shape
// whose leading dimensions were aligned anyway says nothing of them. The copies' estimate: a
// read and a write of each operand whose dense leading dimension is no multiple of the
// alignment, at the profile's bandwidth, plus `launch_us` a copy. Measured on an H200
// (results/h200/aligned-copies/, 67 suite shapes with unaligned leading dimensions): the copies
// gained 3.6-7.5% at the four shapes where that share was at most 0.064 and broke even at 0.069;
// above 0.07 they gained at one (2.8%) and broke even or lost at the rest, by up to 57%. Hence
// sm_90's profile states 0.07.
// Off unless a profile states it (max_share below 0): on a device class nobody measured, the
// entry's value passes through as it did before the rule.
struct AlignedCopyRule {
  double max_share = -1;
  double launch_us = 2.5;
  bool on() const { return max_share >= 0; }
};

// Where a configuration without producer rows (xgemm_fast's WSP) serves a shape it was not
// measured at, the chooser gives it as many producer rows as rows that multiply, with a ring of
// `stages` buffers, where the launch then makes at most `max_groups_per_cu` work-groups per
// compute unit: there the producers' warps hide the loads the multipliers would wait for, and
// beyond it their registers cost work-groups a unit holds. Measured on an H200
// (results/h200/producer-rows/): the producer form (STAGES 2) of 20 configurations ran at a
// geometric mean of 1.11 and 1.06 of the same configuration at grid shapes with up to 1 and 1-2
// work-groups per unit (406 figures, none more than 2.2% slower), 0.99 beyond 3 (down to 0.78).
// `min_k_tiles`: the K tiles a work-group multiplies (its split of K over the configuration's K
// tile) at least; with fewer the ring never fills (the producers keep `stages` buffers and two
// register sets in flight). Off unless a profile states it (max_groups_per_cu below 0).
struct ProducerRowsRule {
  double max_groups_per_cu = -1;
  int64_t stages = 2;
  int64_t min_k_tiles = 0;
  // The producer form also takes the K-major B tile (BKM) where the K tile is at least this deep
  // (0: never).
  int64_t k_major_b_min_tile_k = 0;
  bool on() const { return max_groups_per_cu >= 0; }
};

// Where a configuration of a template that declares launch.half_ld_parameter (xgemm_fast's GLH)
// serves a shape it was not measured at, the chooser sets that parameter to 1 where the shape's
// K is at least `min_k` and an even number that is no multiple of the wide loads' width, the
// problem has an operand laid along K (whose dense leading dimension is then K), the aligned
// copies are off and none of the parameters named in `without` is non-zero. Measured on an H200
// (results/h200/half-loads/). Off unless a profile states it (min_k below 0).
struct HalfLoadsRule {
  int64_t min_k = -1;
  std::vector<std::string> without;
  bool on() const { return min_k >= 0; }
};

// Where a configuration that splits K over work-groups (with a reduce launch) serves a shape it
// was not measured at, the chooser weighs the split factors of `values` for the shape: a
// work-group's K iterations (plus `group_overhead` of them) times the busiest compute unit's
// rounds of work-groups (busiest_unit_time with `saturation_groups`: a last partial round costs
// as much as that many groups), scaled to the selection's prediction for the pick, plus the
// reduction (the partial products written and read once more, at `reduce_gbs`, and `launch_us`).
// It takes the factor predicted fastest where that is at least `min_gain` faster than the
// pick's own. The split that suits the shape a configuration was measured at leaves a partial
// round of work-groups at another: on an H200 (results/h200/split-k-fit/) a split chosen so at
// 13 suite shapes served by split-K configurations ran at 1.033 of the served one (the best
// split measured: 1.038; the constants were fitted there), and at 104 random shapes outside the
// suites where it changed the pick at 1.048. Off unless a profile states it (no values).
struct SplitKRule {
  std::vector<int64_t> values;
  double saturation_groups = 1;
  double group_overhead = 0;
  double reduce_gbs = 0;  // 0: the reduction is left out of the weighing
  double launch_us = 0;
  double min_gain = 0;
  bool on() const { return !values.empty(); }
};

struct SelectionPolicy {
  ModelConstants model;
  MeasuredRule measured;
  AlignedCopyRule aligned_copy;
  ProducerRowsRule producer_rows;
  HalfLoadsRule half_loads;
  SplitKRule split_k;
  // The relaxations the chooser tries, in this order, when no entry has the problem's own key:
  // each widens every lookup before it (with storage order, then epilogue: the problem's key, the
  // other order, no epilogue, no epilogue in the other order).
  std::vector<Relaxation> relaxations;
  // Whose template defaults run where a baseline is predicted to beat the database's choice; ""
  // for none (the choice stands, and its explanation says it may lose).
  std::string safe_path_kernel;
  // The templates whose defaults run when no entry and no offline start applies, in order.
  std::vector<std::string> default_kernels;
  // The small side of C up to which the model predicts a kernel without a work-group tile
  // (xgemm_skinny: the whole small side in one group), which it knows only on shapes of its kind.
  int64_t skinny_side = 0;
  std::string source;  // the profile's "selection.source", or where the defaults come from

  // The policy of a device without a profile, and of each field a profile leaves out.
  static const SelectionPolicy& defaults();
  // The defaults with `profile`'s "selection" section over them (null: the defaults). Throws
  // Error(kInvalidFile) naming the profile's file and the field that is wrong.
  static SelectionPolicy of(const DeviceProfile* profile);
};

}  // namespace gemmtune
