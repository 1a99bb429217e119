// Compatibility conventions (docs/semantics.md "Conventions"): grey morphology as a peer library
// computes it, so a user migrating can match old results pixel for pixel. Each convention is a
// change of the structuring element (and a default border), made before the operation runs, so
// every backend gives the same result.
#pragma once

#include <string>
#include <string_view>

#include "granula/core/border.hpp"

namespace granula {

enum class convention {
    // ε min f(x + b), δ max f(x - b) (B reflected), origin of an extent n at n // 2.
    granula,
    // cv::erode, cv::dilate, cv::morphologyEx with the default anchor (the element's origin):
    // cv::dilate does not reflect, so dilations use the reflected element (opening, closing,
    // top-hats and gradient compose the two as OpenCV does).
    opencv,
    // scipy.ndimage grey_erosion, grey_dilation, grey_opening, ...: granula's operations; only
    // the default border differs (reflect). scipy's origin=(a, b) is the element's origin moved
    // to (rows // 2 + a, cols // 2 + b): structuring_element::with_origin.
    scipy,
    // MATLAB imerode, imdilate, imopen, ...: the origin of the footprint's box at
    // ((width - 1) // 2, (height - 1) // 2), MATLAB's floor((size + 1) / 2) counted from 1.
    matlab,
};

std::string_view to_string(convention c);
// Parses "granula", "opencv", "scipy", "matlab"; throws invalid_argument listing them.
convention parse_convention(std::string_view name);
std::string convention_names();

// The border each peer uses when none is given: reflect for scipy.ndimage; ignore for the
// others (OpenCV's BORDER_CONSTANT with morphologyDefaultBorderValue(), MATLAB's padding).
border default_border(convention c);

}  // namespace granula
