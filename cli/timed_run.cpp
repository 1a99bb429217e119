#include "timed_run.hpp"

#include <cstdio>

#include "granula/core/config.hpp"

namespace granula::cli {

void print_timings(std::string_view name, device where, const run_timings& t) {
    const int n = static_cast<int>(name.size());
    if (where == device::cuda)
        std::fprintf(stderr,
                     "granula: %.*s on cuda: %.3f ms compute, %.3f ms host<->device transfers "
                     "(not counted: %.1f ms CUDA start-up and a warm-up run)\n",
                     n, name.data(), t.compute, t.transfers, t.start_up);
    else
        std::fprintf(stderr, "granula: %.*s on cpu (%d threads): %.3f ms compute\n", n, name.data(), num_threads(),
                     t.compute);
}

}  // namespace granula::cli
