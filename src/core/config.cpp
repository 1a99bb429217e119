#include "granula/core/config.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/simd_dispatch.hpp"
#include "granula/core/device.hpp"
#include "granula/core/error.hpp"
#include "granula/version.hpp"

namespace granula {
namespace {

// GRANULA_NUM_THREADS when set to a positive number (at most max_threads), else every hardware
// thread.
int default_threads() {
#if defined(GRANULA_HAVE_THREADS)
    static const int threads = [] {
        if (const char* env = std::getenv("GRANULA_NUM_THREADS"); env && std::atoi(env) > 0)
            return std::min(std::atoi(env), max_threads);
        return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, max_threads);
    }();
    return threads;
#else
    return 1;  // built without threads: the CPU backend runs on the calling thread
#endif
}

bool simd_default() {
    const char* env = std::getenv("GRANULA_DISABLE_SIMD");
    return !(env && *env && std::string(env) != "0");
}

std::atomic<int> thread_setting{0};
std::atomic<bool> simd_setting{simd_default()};

}  // namespace

void set_num_threads(int threads) {
    if (threads < 0) throw invalid_argument("thread count must be >= 0 (0 = all hardware threads), got " + std::to_string(threads));
    // The pool keeps every thread it starts until the process ends: a mistyped count would
    // leave thousands behind.
    if (threads > max_threads)
        throw invalid_argument("thread count " + std::to_string(threads) + " is over granula's limit of " +
                               std::to_string(max_threads));
    thread_setting = threads;
}

int num_threads() {
    const int t = thread_setting.load();
    return t > 0 ? t : default_threads();
}

void set_simd_enabled(bool enabled) { simd_setting = enabled; }
bool simd_enabled() { return simd_setting.load(); }
std::string simd_target() {
    return std::string(detail::to_string(detail::active_simd_isa())) + (detail::avx512_active() ? "+avx512" : "");
}

std::string build_info() {
    std::string info = "granula " GRANULA_VERSION_STRING;
    info += cuda_built() ? ", CUDA backend" : ", no CUDA backend";
#if defined(GRANULA_HAVE_THREADS)
    info += ", " + std::to_string(default_threads()) + " CPU threads by default";
#else
    info += ", single-threaded";
#endif
    info += ", SIMD " + simd_target();
    return info;
}

namespace detail {

bool cpu_has_avx2_copy() {
#if defined(GRANULA_SIMD_HAVE_avx2)
    static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                            __builtin_cpu_supports("bmi2");
    return has;
#else
    return false;
#endif
}

bool cpu_has_avx512_copy() {
#if defined(GRANULA_SIMD_HAVE_avx512)
    static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                            __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
                            __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
    return has;
#else
    return false;
#endif
}

simd_isa active_simd_isa() {
    if (!simd_enabled()) return simd_isa::scalar;
    return cpu_has_avx2_copy() ? simd_isa::avx2 : simd_isa::baseline;
}

bool avx512_active() { return cpu_has_avx512_copy() && active_simd_isa() == simd_isa::avx2; }

const char* to_string(simd_isa isa) {
    switch (isa) {
    case simd_isa::scalar: return "scalar";
    case simd_isa::baseline: return "baseline";
    case simd_isa::avx2: return "avx2";
    }
    return "?";
}

}  // namespace detail
}  // namespace granula
