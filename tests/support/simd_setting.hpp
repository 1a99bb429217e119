// Switches the CPU's SIMD paths on or off for a scope (tests compare vector and scalar paths).
#pragma once

#include "granula/core/config.hpp"

namespace granula::test_support {

struct simd_setting {
    explicit simd_setting(bool on) : previous(simd_enabled()) { set_simd_enabled(on); }
    ~simd_setting() { set_simd_enabled(previous); }
    simd_setting(const simd_setting&) = delete;
    simd_setting& operator=(const simd_setting&) = delete;
    bool previous;
};

}  // namespace granula::test_support
