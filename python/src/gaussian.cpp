// granula._core.gaussian_run: the binding behind granula.gaussian (python/granula/gaussian.py),
// over numpy or CUDA arrays without copying. Errors translate as in module.cpp (ValueError for
// granula::invalid_argument, RuntimeError for the rest).
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <array>
#include <cstdint>
#include <string>

#include "arrays.hpp"
#include "granula/granula.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace granula::python {
namespace {

void gaussian_run(nb::handle image, nb::handle out, std::array<double, 2> sigma, std::array<int, 2> order,
                  std::array<std::string, 2> mode, double cval, double truncate, std::array<std::int64_t, 2> radius,
                  const std::string& method, const std::string& split, std::uintptr_t cuda_stream) {
    const image_arg in = import_image(image, "image", false);
    const image_arg dst = import_image(out, "out", true);
    if (dst.on_device != in.on_device || dst.width != in.width || dst.height != in.height ||
        (dst.type != in.type && dst.type != pixel_type::float32))
        throw invalid_argument("out is a " + dst.describe() + " but image is a " + in.describe() +
                               "; out must have the image's shape and memory, and dtype float32 or the image's");
    gaussian_params p;
    p.sigma = sigma;
    p.order = order;
    for (int a = 0; a < 2; ++a) p.mode[a] = parse_border_mode(mode[a]);
    p.cval = cval;
    p.truncate = truncate;
    p.radius = radius;
    p.method = parse_gaussian_method(method);
    p.split = parse_gaussian_split(split);
    nb::gil_scoped_release released;
    visit_pixel_type(in.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        auto run = [&](auto out_tag) {
            using U = typename decltype(out_tag)::type;
            if (in.on_device)
                gaussian<T, U>(in.view<device_memory>().template as<const T>(),
                               dst.view<device_memory>().template as<U>(), p,
                               stream(reinterpret_cast<void*>(cuda_stream)));
            else
                gaussian<T, U>(in.view<host_memory>().template as<const T>(), dst.view<host_memory>().template as<U>(),
                               p);
        };
        if (dst.type == pixel_type::float32)
            run(type_tag<float>{});
        else
            run(type_tag<T>{});
    });
}

}  // namespace

void bind_gaussian(nb::module_& m) {
    m.def("gaussian_run", &gaussian_run, "image"_a.none(), "out"_a.none(), "sigma"_a, "order"_a, "mode"_a, "cval"_a,
          "truncate"_a, "radius"_a, "method"_a, "split"_a, "cuda_stream"_a,
          "Gaussian of `image` into `out` (float32 or the image's dtype); per-axis (rows, cols) values.");
}

}  // namespace granula::python
