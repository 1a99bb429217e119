// The CPU backend of the linear filters. Called by the front with validated arguments; the
// outputs do not overlap the input.
#pragma once

#include "granula/lines/lines.hpp"
#include "lines/line_plan.hpp"

namespace granula::cpu {

template <class T>
void line_filter_angles(host_view<const T> in, const detail::line_plan& plan, const host_line_outputs<T>& out);

}  // namespace granula::cpu
