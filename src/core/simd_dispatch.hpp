// Which copy of a SIMD kernel source (cmake/GranulaSimd.cmake) runs on this CPU.
#pragma once

namespace granula::detail {

enum class simd_isa {
    scalar,    // built with vectorisation off: the reference for the vector paths
    baseline,  // the compiler's default target (SSE2 on x86-64, NEON on AArch64)
    avx2,      // x86-64 with AVX2, FMA and BMI2
};

// The best copy the CPU supports, or scalar when SIMD is switched off.
simd_isa active_simd_isa();
const char* to_string(simd_isa isa);

// Whether this CPU can run a source's AVX2 copy (AVX2, FMA and BMI2) and its AVX-512 copy
// (EXTRA_ISAS avx512 in cmake/GranulaSimd.cmake: AVX-512 F, VL, BW, CD, VBMI and VBMI2), whatever
// the SIMD setting; false where the copy is not built.
bool cpu_has_avx2_copy();
bool cpu_has_avx512_copy();

// Whether a source's AVX-512 copy runs: the AVX2 copy would run and the CPU has the AVX-512 one.
bool avx512_active();

}  // namespace granula::detail

// Calls NS::fn(args...) with NS the namespace of the active copy. Use in front files only.
#if defined(GRANULA_SIMD_HAVE_avx2)
#define GRANULA_SIMD_DISPATCH(fn, ...)                                          \
    [&]() -> decltype(auto) {                                                   \
        switch (::granula::detail::active_simd_isa()) {                         \
        case ::granula::detail::simd_isa::avx2: return simd_avx2::fn(__VA_ARGS__); \
        case ::granula::detail::simd_isa::baseline: return simd_baseline::fn(__VA_ARGS__); \
        default: return simd_scalar::fn(__VA_ARGS__);                           \
        }                                                                       \
    }()
#else
#define GRANULA_SIMD_DISPATCH(fn, ...)                                          \
    [&]() -> decltype(auto) {                                                   \
        if (::granula::detail::active_simd_isa() == ::granula::detail::simd_isa::scalar) \
            return simd_scalar::fn(__VA_ARGS__);                                \
        return simd_baseline::fn(__VA_ARGS__);                                  \
    }()
#endif

// GRANULA_SIMD_DISPATCH for sources with an AVX-512 copy (spelled out rather than calling
// GRANULA_SIMD_DISPATCH, so fn may contain a GRANULA_COMMA-style macro).
#if defined(GRANULA_SIMD_HAVE_avx512)
#define GRANULA_SIMD_DISPATCH_AVX512(fn, ...)                                   \
    [&]() -> decltype(auto) {                                                   \
        if (::granula::detail::avx512_active()) return simd_avx512::fn(__VA_ARGS__); \
        switch (::granula::detail::active_simd_isa()) {                         \
        case ::granula::detail::simd_isa::avx2: return simd_avx2::fn(__VA_ARGS__); \
        case ::granula::detail::simd_isa::baseline: return simd_baseline::fn(__VA_ARGS__); \
        default: return simd_scalar::fn(__VA_ARGS__);                           \
        }                                                                       \
    }()
#else
#define GRANULA_SIMD_DISPATCH_AVX512 GRANULA_SIMD_DISPATCH
#endif
