// The CUDA backend of labelling. Called by the front file with validated arguments; every
// launch is on stream `s`, and the host waits only for the count; the statistics, when asked
// for, are queued after that and not waited for.
#pragma once

#include "granula/labeling/labeling.hpp"

namespace granula::cuda {

// L: int32 or int64 labels; int32 ones throw unsupported when N exceeds 2^31 - 1.
template <class T, class L>
std::int64_t label(device_view<const T> in, device_view<L> out, int connectivity, T background,
                   device_region_statistics* statistics, stream s);
// The same labels and statistics by the seed paper's tile merge (tile_merge.cu).
template <class T>
std::int64_t label_tile_merge(device_view<const T> in, device_view<std::int32_t> out, int connectivity, T background,
                              device_region_statistics* statistics, stream s);

// Intensity statistics of `labels` (a label() result with `statistics`) into statistics'
// intensity arrays; waits for its work and throws invalid_argument for a label beyond size().
template <class T, class L>
void intensity_statistics(device_view<const L> labels, device_view<const T> intensity,
                          device_region_statistics& statistics, stream s);

}  // namespace granula::cuda
