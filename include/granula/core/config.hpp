// Process-wide CPU settings: thread count and the SIMD switch.
#pragma once

#include <string>

namespace granula {

// Threads the CPU backend uses, at most max_threads; 0 restores the default: the environment
// variable GRANULA_NUM_THREADS when set (capped at max_threads), else all hardware threads.
inline constexpr int max_threads = 1024;
void set_num_threads(int threads);
int num_threads();

// Turns the vectorised CPU kernels off (true scalar code) or on; tests compare both paths.
// The environment variable GRANULA_DISABLE_SIMD=1 sets the initial value to off.
void set_simd_enabled(bool enabled);
bool simd_enabled();
// The instruction set the vectorised kernels use on this CPU ("avx2", "sse2", ...; "avx2+avx512"
// where the sources with an AVX-512 copy run it), or "scalar" when SIMD is off.
std::string simd_target();

// One line describing the build: version, CUDA, CPU threads, SIMD target.
std::string build_info();

}  // namespace granula
