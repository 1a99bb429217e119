// The CUDA backend of the linear filters. Called by the front with validated arguments; the
// outputs do not overlap the input. Work runs on stream `s`; the spectrum (host memory) is
// complete when it returns.
#pragma once

#include "granula/core/stream.hpp"
#include "granula/lines/lines.hpp"
#include "lines/line_plan.hpp"

namespace granula::cuda {

template <class T>
void line_filter_angles(device_view<const T> in, const detail::line_plan& plan, const device_line_outputs<T>& out,
                        stream s);

}  // namespace granula::cuda
