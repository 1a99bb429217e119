// The CPU backend of labelling. Called by the front file with validated arguments.
#pragma once

#include "granula/binary/bit_image.hpp"
#include "granula/labeling/labeling.hpp"

namespace granula::cpu {

template <class T>
std::int64_t label(host_view<const T> in, host_view<std::int32_t> out, int connectivity, T background,
                   region_statistics* statistics);
// Foreground = the set bits.
std::int64_t label(const_host_bit_view in, host_view<std::int32_t> out, int connectivity,
                   region_statistics* statistics);

}  // namespace granula::cpu
