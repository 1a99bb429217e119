// The CPU backend of labelling. Called by the front file with validated arguments.
#pragma once

#include "granula/binary/bit_image.hpp"
#include "granula/labeling/labeling.hpp"

namespace granula::cpu {

// L: int32 or int64 labels; int32 ones throw unsupported when N exceeds 2^31 - 1.
template <class T, class L>
std::int64_t label(host_view<const T> in, host_view<L> out, int connectivity, T background,
                   region_statistics* statistics);
// Foreground = the set bits.
template <class L>
std::int64_t label(const_host_bit_view in, host_view<L> out, int connectivity, region_statistics* statistics);

}  // namespace granula::cpu
