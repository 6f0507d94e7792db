// SPDX-License-Identifier: Apache-2.0
// A database's configurations measured at many shapes (MeasuredConfiguration), taken from search
// journals: the input of the chooser's measured step (src/select/policy.hpp, MeasuredRule).
#pragma once

#include <cstddef>

#include "src/db/database.hpp"
#include "src/db/journal.hpp"

namespace gemmtune {

struct CrossMeasurementCount {
  size_t shapes = 0;        // problems of the journal taken (enough configurations measured)
  size_t measurements = 0;  // configuration-and-shape figures added (or made faster)
  size_t passed_over = 0;   // problems with fewer than `min_configs` configurations measured
};

// Adds to `db` the GFLOPS of every successful result of `journal` at each problem where at least
// `min_configs` distinct configurations succeeded (a cross-measurement; a search's scattered
// results elsewhere are passed over), the faster figure of each configuration and shape kept.
CrossMeasurementCount add_cross_measurements(Database& db, const Journal& journal,
                                             size_t min_configs);

}  // namespace gemmtune
