// Bindings of the linear filters and their analyses (granula/lines/lines.hpp) and of rotate
// (granula/geometry/geometry.hpp), called by python/granula/lines.py with arrays borrowed through
// import_image() and outputs it allocated. Errors translate as in module.cpp.
#include "granula/lines/lines.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "granula/geometry/geometry.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace granula::python {
namespace {

line_params make_params(std::int64_t length, const std::string& kind, const std::string& mode, double cval,
                        const std::string& algorithm) {
    line_params p;
    p.length = length;
    p.kind = parse_line_filter_kind(kind);
    p.mode = border{parse_border_mode(mode), cval};
    p.algorithm = parse_line_algorithm(algorithm);
    return p;
}

void require_like(const image_arg& in, const image_arg& dst, const char* role) {
    if (dst.on_device != in.on_device || dst.type != in.type || dst.width != in.width || dst.height != in.height)
        throw invalid_argument(std::string(role) + " is a " + dst.describe() + " but image is a " + in.describe() +
                               "; it must have the image's shape, dtype and kind of memory");
}

// One angle, from `image` into `out` (which may be `image`).
void line_filter_run(nb::handle image, nb::handle out, double angle, std::int64_t length, const std::string& kind,
                     const std::string& mode, double cval, const std::string& algorithm, std::uintptr_t cuda_stream) {
    const image_arg in = import_image(image, "image", false);
    const image_arg dst = import_image(out, "out", true);
    require_like(in, dst, "out");
    const line_params p = make_params(length, kind, mode, cval, algorithm);
    nb::gil_scoped_release released;
    visit_pixel_type(in.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (in.on_device)
            line_filter<T>(in.view<device_memory>().template as<const T>(), dst.view<device_memory>().template as<T>(),
                           angle, p, stream(reinterpret_cast<void*>(cuda_stream)));
        else
            line_filter<T>(in.view<host_memory>().template as<const T>(), dst.view<host_memory>().template as<T>(),
                           angle, p);
    });
}

// Many angles: the extremum (`reduction`: auto, max or min) into `extremum` (None: skipped), the
// orientation indices into the int32 buffer at `orientation_ptr` (0: skipped; row stride in
// elements, in the image's kind of memory), each angle's filtered image into `filtered` (empty:
// none); returns the spectrum when asked (else empty).
std::vector<double> line_angles_run(nb::handle image, const std::vector<double>& angles, std::int64_t length,
                                    const std::string& kind, const std::string& mode, double cval,
                                    const std::string& algorithm, const std::string& reduction, nb::handle extremum,
                                    std::uintptr_t orientation_ptr, std::int64_t orientation_stride, bool spectrum,
                                    const std::vector<nb::handle>& filtered, std::uintptr_t cuda_stream) {
    const image_arg in = import_image(image, "image", false);
    image_arg ext;
    if (!extremum.is_none()) {
        ext = import_image(extremum, "extremum", true);
        require_like(in, ext, "extremum");
    }
    std::vector<image_arg> each;
    for (const nb::handle f : filtered) {
        each.push_back(import_image(f, "out", true));
        require_like(in, each.back(), "each image of out");
    }
    const line_params p = make_params(length, kind, mode, cval, algorithm);
    const angle_reduction r = parse_angle_reduction(reduction);
    std::vector<double> sums(spectrum ? angles.size() : 0);
    auto* indices = reinterpret_cast<std::int32_t*>(orientation_ptr);
    const std::int64_t w = indices ? in.width : 0, h = indices ? in.height : 0;
    nb::gil_scoped_release released;
    visit_pixel_type(in.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (in.on_device) {
            std::vector<device_view<T>> views;
            for (const image_arg& f : each) views.push_back(f.view<device_memory>().template as<T>());
            device_line_outputs<T> out;
            if (!extremum.is_none()) out.extremum = ext.view<device_memory>().template as<T>();
            out.orientation = device_view<std::int32_t>(indices, w, h, orientation_stride);
            out.reduction = r;
            out.spectrum = sums;
            out.filtered = views;
            line_filter_angles<T>(in.view<device_memory>().template as<const T>(), angles, p, out,
                                  stream(reinterpret_cast<void*>(cuda_stream)));
            if (spectrum) stream(reinterpret_cast<void*>(cuda_stream)).synchronize();
        } else {
            std::vector<host_view<T>> views;
            for (const image_arg& f : each) views.push_back(f.view<host_memory>().template as<T>());
            host_line_outputs<T> out;
            if (!extremum.is_none()) out.extremum = ext.view<host_memory>().template as<T>();
            out.orientation = host_view<std::int32_t>(indices, w, h, orientation_stride);
            out.reduction = r;
            out.spectrum = sums;
            out.filtered = views;
            line_filter_angles<T>(in.view<host_memory>().template as<const T>(), angles, p, out);
        }
    });
    return sums;
}

std::vector<double> granulometry_run(nb::handle image, const std::vector<std::int64_t>& lengths,
                                     const std::vector<double>& angles, const std::string& kind,
                                     const std::string& mode, double cval, const std::string& algorithm,
                                     std::uintptr_t cuda_stream) {
    const image_arg in = import_image(image, "image", false);
    const line_params p = make_params(1, kind, mode, cval, algorithm);
    nb::gil_scoped_release released;
    return visit_pixel_type(in.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (in.on_device)
            return line_granulometry<T>(in.view<device_memory>().template as<const T>(), lengths, angles, p,
                                        stream(reinterpret_cast<void*>(cuda_stream)));
        return line_granulometry<T>(in.view<host_memory>().template as<const T>(), lengths, angles, p);
    });
}

std::tuple<double, std::vector<double>, std::vector<double>> detect_rotation_run(nb::handle image, double first,
                                                                                 double last, double step,
                                                                                 const std::string& method,
                                                                                 std::int64_t length) {
    const image_arg in = import_image(image, "image", false);
    if (in.on_device) throw invalid_argument("detect_rotation runs on the CPU; give a host array");
    deskew_params p;
    p.first = first, p.last = last, p.step = step;
    p.method = parse_deskew_method(method);
    p.length = length;
    nb::gil_scoped_release released;
    deskew_result r = visit_pixel_type(in.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        return detect_rotation<T>(in.view<host_memory>().template as<const T>(), p);
    });
    return {r.angle, std::move(r.angles), std::move(r.spectrum)};
}

void rotate_run(nb::handle image, nb::handle out, double angle, double fill) {
    const image_arg in = import_image(image, "image", false);
    const image_arg dst = import_image(out, "out", true);
    require_like(in, dst, "out");
    if (in.on_device) throw invalid_argument("rotate runs on the CPU; give host arrays");
    nb::gil_scoped_release released;
    visit_pixel_type(in.type, [&](auto tag) {
        using T = typename decltype(tag)::type;
        rotate<T>(in.view<host_memory>().template as<const T>(), dst.view<host_memory>().template as<T>(), angle, fill);
    });
}

}  // namespace

void bind_lines(nb::module_& m) {
    m.attr("max_line_angles") = granula::max_line_angles;
    m.def("line_filter_run", &line_filter_run, "image"_a.none(), "out"_a.none(), "angle"_a, "length"_a, "kind"_a,
          "mode"_a, "cval"_a, "algorithm"_a, "cuda_stream"_a,
          "Opening or closing of `image` along the scan lines of one angle into `out`.");
    m.def("line_angles_run", &line_angles_run, "image"_a.none(), "angles"_a, "length"_a, "kind"_a, "mode"_a, "cval"_a,
          "algorithm"_a, "reduction"_a, "extremum"_a.none(), "orientation_ptr"_a, "orientation_stride"_a,
          "spectrum"_a, "filtered"_a, "cuda_stream"_a,
          "Many angles at once: extremum, int32 orientation indices at orientation_ptr, each angle's filtered "
          "image, the spectrum (returned).");
    m.def("granulometry_run", &granulometry_run, "image"_a.none(), "lengths"_a, "angles"_a, "kind"_a, "mode"_a,
          "cval"_a, "algorithm"_a, "cuda_stream"_a, "Sums of the extremum over angles for each length.");
    m.def("detect_rotation_run", &detect_rotation_run, "image"_a.none(), "first"_a, "last"_a, "step"_a, "method"_a,
          "length"_a, "(angle, angles scored, their scores) of a page.");
    m.def("rotate_run", &rotate_run, "image"_a.none(), "out"_a.none(), "angle"_a, "fill"_a,
          "Bilinear rotation about the centre into `out`.");
}

}  // namespace granula::python
