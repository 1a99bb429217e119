// What the front hands a backend for a linear filter over one or more angles.
#pragma once

#include <cstdint>
#include <vector>

#include "granula/lines/lines.hpp"
#include "lines/scan_lines.hpp"

namespace granula::detail {

struct line_angle_plan {
    scan_lines lines;
    std::int64_t index = 0;  // position in the caller's angle list (outputs are indexed by it)
};

struct line_plan {
    std::int32_t length = 1;
    bool closing = false;            // reversed keys: a closing, or a dilation
    bool first_stage_only = false;   // an erosion or a dilation
    // Samples of the first stage's window before each sample, in the scan lines' order (after =
    // length - 1 - before): line_arm_before(length, closing) (scan_line_filter.hpp), or its mirror
    // length - 1 - that where the lines run against the footprint's order (morphology_cuda.cu's
    // diagonals down the rows at 45 degrees).
    std::int32_t before = 0;
    border mode;
    // The extremum over angles takes the smallest key, not the largest (line_keys::reduction_key):
    // the infimum of openings and erosions, the supremum of closings and dilations.
    bool reduction_reversed = false;
    // automatic: each backend picks (its two-stage van Herk/Gil-Werman path where it applies,
    // else fifo).
    line_algorithm algorithm = line_algorithm::automatic;
    // Sorted by angle value (stable), so that a later angle replaces the running extremum only
    // when strictly better: ties go to the smallest angle.
    std::vector<line_angle_plan> angles;
};

}  // namespace granula::detail
