// Timing shared by the CUDA-event benchmarks in bench/gpu (GUIDE §5).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace granula_bench {

// A failed CUDA call ends the benchmark with its message.
inline void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(status));
        std::exit(2);
    }
}

// How the timed runs follow one another: each_alone waits for each run before the next (the
// time of a whole call, host work included); back_to_back queues them all (the device time,
// host work hidden behind the previous run).
enum class runs { each_alone, back_to_back };

// The median time in ms of run(i): `warmup` untimed runs (i = 0 .. warmup - 1), then `reps`
// runs (i = warmup ..), each between two events recorded on the default stream.
template <class F>
double median_ms(int reps, int warmup, runs order, F&& run) {
    for (int i = 0; i < warmup; ++i) run(i);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(reps));
    for (auto& e : events) check(cudaEventCreate(&e), "cudaEventCreate");
    for (int i = 0; i < reps; ++i) {
        check(cudaEventRecord(events[2 * i]), "cudaEventRecord");
        run(warmup + i);
        check(cudaEventRecord(events[2 * i + 1]), "cudaEventRecord");
        if (order == runs::each_alone) check(cudaEventSynchronize(events[2 * i + 1]), "cudaEventSynchronize");
    }
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    std::vector<float> ms(static_cast<std::size_t>(reps));
    for (int i = 0; i < reps; ++i)
        check(cudaEventElapsedTime(&ms[i], events[2 * i], events[2 * i + 1]), "cudaEventElapsedTime");
    for (auto& e : events) cudaEventDestroy(e);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace granula_bench
