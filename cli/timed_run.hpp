// How the image-to-image commands (the registry's operations, gaussian, line_opening and its
// kin) run their computation on the chosen device and what --time reports for it.
#pragma once

#include <string_view>

#include "command.hpp"
#include "granula/core/device.hpp"

namespace granula::cli {

struct run_timings {
    double compute = 0;    // the computation, synchronised
    double transfers = 0;  // on the GPU: upload and download
    double start_up = 0;   // on the GPU: CUDA context creation and, with a warm-up, its untimed run
};

// On the CPU run(in, out). On the GPU: uploads `in`, run(device in, device out) into a device
// image of out's size, downloads it to `out`; with `warm_up` an untimed run first, so that the
// compute time leaves out CUDA's lazy loading of the kernels. `run` takes views of either space.
template <class T, class U, class Run>
run_timings run_timed(device where, host_view<const T> in, host_view<U> out, bool warm_up, const Run& run) {
    run_timings t;
    auto start = clock_type::now();
    if (where != device::cuda) {
        run(in, out);
        t.compute = milliseconds_since(start);
        return t;
    }
    const stream s{};
    device_image<T>(1, 1);  // the first device allocation creates the CUDA context
    t.start_up = milliseconds_since(start);

    start = clock_type::now();
    const device_image<T> device_in = upload<T>(in, s);
    device_image<U> device_out(out.width(), out.height());
    s.synchronize();
    t.transfers = milliseconds_since(start);
    const device_view<const T> device_in_view(device_in.view());
    if (warm_up) {
        start = clock_type::now();
        run(device_in_view, device_out.view());
        s.synchronize();
        t.start_up += milliseconds_since(start);
    }
    start = clock_type::now();
    run(device_in_view, device_out.view());
    s.synchronize();
    t.compute = milliseconds_since(start);

    start = clock_type::now();
    copy<U>(device_view<const U>(device_out.view()), out, s);
    s.synchronize();
    t.transfers += milliseconds_since(start);
    return t;
}

// --time's line on stderr: "granula: NAME on cpu (N threads): X ms compute", or on cuda the
// compute, the transfers and what was left out.
void print_timings(std::string_view name, device where, const run_timings& t);

}  // namespace granula::cli
