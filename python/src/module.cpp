// granula._core: the nanobind extension behind the granula Python package. It exposes the
// operation registry (the Python functions are generated from it in granula/__init__.py), one
// entry point that runs a registered operation on host or CUDA arrays without copying, the
// structuring elements, and the process-wide settings.
//
// Exceptions keep nanobind's standard translation: granula::invalid_argument (a
// std::invalid_argument) becomes ValueError; cuda_error, io_error (std::runtime_error) and
// unsupported (std::logic_error) become RuntimeError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.hpp"
#include "granula/granula.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace granula::python {
void bind_gaussian(nanobind::module_& m);
void bind_labeling(nanobind::module_& m);
void bind_lines(nanobind::module_& m);
namespace {

using mask_array = nb::ndarray<nb::numpy, bool, nb::ndim<2>>;

// The footprint as a new numpy bool array and its origin (row, col).
std::pair<mask_array, std::pair<std::int64_t, std::int64_t>> footprint_of(const structuring_element& se) {
    const footprint_mask f = se.footprint();
    auto* mask = new bool[f.mask.size()];
    for (std::size_t i = 0; i < f.mask.size(); ++i) mask[i] = f.mask[i] != 0;
    nb::capsule owner(mask, [](void* p) noexcept { delete[] static_cast<bool*>(p); });
    mask_array array(mask, {static_cast<std::size_t>(f.height), static_cast<std::size_t>(f.width)}, owner);
    return {array, {f.origin_y, f.origin_x}};
}

// (rows, cols, "uint8", on_device) of a valid image (of labelling's input types with
// `label_input`); raises ValueError otherwise.
std::tuple<std::int64_t, std::int64_t, std::string_view, bool> describe_image(nb::handle image, bool label_input) {
    const image_arg in = import_image(image, "image", false,
                                      label_input ? accepted_elements::label_input : accepted_elements::pixels);
    return {in.height, in.width, in.dtype_name(), in.on_device};
}

void run_operation(std::string_view name, nb::handle image, nb::handle out, const structuring_element& footprint,
                   std::string_view mode, double cval, std::string_view convention_name, std::uintptr_t cuda_stream) {
    const operation_info& op = find_operation(name);
    const image_arg in = import_image(image, "image", false);
    const image_arg dst = import_image(out, "out", true);
    if (dst.on_device != in.on_device || dst.type != in.type || dst.width != in.width || dst.height != in.height)
        throw invalid_argument("out is a " + dst.describe() + " but image is a " + in.describe() +
                               "; out must have the image's shape, dtype and kind of memory");
    if (in.device_id != dst.device_id && in.device_id >= 0 && dst.device_id >= 0)
        throw invalid_argument("image is on CUDA device " + std::to_string(in.device_id) + " but out is on device " +
                               std::to_string(dst.device_id));
    const convention compatibility = parse_convention(convention_name);
    const operation_args args{footprint, border{parse_mode_parameter(mode, compatibility), cval}, compatibility};
    nb::gil_scoped_release released;
    if (in.on_device)
        op.run_device(in.view<device_memory>(), dst.view<device_memory>(), args,
                      stream(reinterpret_cast<void*>(cuda_stream)));
    else
        op.run_host(in.view<host_memory>(), dst.view<host_memory>(), args);
}

}  // namespace

void bind_binary(nanobind::module_& m);  // binary.cpp
}  // namespace granula::python

NB_MODULE(_core, m) {
    using namespace granula;
    using namespace granula::python;
    m.doc() = "granula's compiled core; use the granula package, not this module.";
    m.attr("__version__") = GRANULA_VERSION_STRING;
    bind_labeling(m);

    // --- the operation registry ---------------------------------------------------------------
    m.def(
        "operations",
        [] {
            std::vector<std::tuple<std::string_view, std::string_view,
                                   std::vector<std::tuple<std::string_view, std::string_view, std::string_view>>>>
                list;
            for (const operation_info& op : operations()) {
                std::vector<std::tuple<std::string_view, std::string_view, std::string_view>> params;
                for (const parameter_info& p : op.parameters) params.emplace_back(p.name, p.default_value, p.help);
                list.emplace_back(op.name, op.summary, std::move(params));
            }
            return list;
        },
        "Every registered operation as (name, summary, [(parameter, CLI default, help), ...]).");
    m.def("describe_image", &describe_image, "image"_a.none(), "label_input"_a = false,
          "(rows, cols, dtype name, on_device) of an image granula accepts (with label_input: that\n"
          "granula.label accepts); raises ValueError otherwise.");
    m.def("run", &run_operation, "name"_a, "image"_a.none(), "out"_a.none(), "footprint"_a, "mode"_a, "cval"_a, "convention"_a,
          "cuda_stream"_a,
          "Runs the registered operation `name` from `image` into `out` (same shape, dtype and memory).\n"
          "Host arrays are processed on the calling thread's CPU pool; CUDA arrays are queued on the\n"
          "stream whose cudaStream_t is `cuda_stream` (0: the legacy default stream). The GIL is\n"
          "released while the operation runs.");
    m.def("pixel_types", [] {
        std::vector<std::string_view> names;
#define GRANULA_NAME(ctype, pname) names.push_back(#pname);
        GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_NAME)
#undef GRANULA_NAME
        return names;
    }, "The dtype names granula accepts, e.g. ['uint8', 'uint16', 'float32'].");

    // --- structuring elements -----------------------------------------------------------------
    nb::class_<line_segment>(m, "LineSegment",
                             "A digital line segment or periodic line: ``length`` pixels at offsets\n"
                             "``k * (dx, dy)`` for ``k = -origin .. length - 1 - origin``; x is the column (grows\n"
                             "right), y the row (grows down). A step longer than one pixel, e.g. (26, -15), is a\n"
                             "periodic line.")
        .def_ro("length", &line_segment::length, "Number of pixels.")
        .def_ro("dx", &line_segment::dx, "Column step between consecutive pixels.")
        .def_ro("dy", &line_segment::dy, "Row step between consecutive pixels.")
        .def_ro("origin", &line_segment::origin, "Index of the origin pixel along the segment.")
        .def("__eq__", [](const line_segment& a, const line_segment& b) { return a == b; })
        .def("__repr__", [](const line_segment& s) {
            return "LineSegment(length=" + std::to_string(s.length) + ", dx=" + std::to_string(s.dx) +
                   ", dy=" + std::to_string(s.dy) + ", origin=" + std::to_string(s.origin) + ")";
        });

    nb::class_<decomposition_term>(m, "DecompositionTerm",
                                   "One term of a footprint's decomposition: the pixel ``offset`` (row, col) from\n"
                                   "the origin, swept along each of ``segments`` in turn (their Minkowski sum).\n\n"
                                   "Examples\n"
                                   "--------\n"
                                   ">>> from granula import footprints\n"
                                   ">>> footprints.disk(1).decomposition()[1]  # the middle row\n"
                                   "DecompositionTerm(offset=(0, -1), segments=[LineSegment(length=3, dx=1, dy=0, origin=0)])\n")
        .def_prop_ro("offset", [](const decomposition_term& t) { return std::make_pair(t.offset_y, t.offset_x); },
                     "(row, col) offset from the origin.")
        .def_ro("segments", &decomposition_term::segments, "The line segments summed.")
        .def("__eq__", [](const decomposition_term& a, const decomposition_term& b) { return a == b; })
        .def("__repr__", [](const decomposition_term& t) {
            std::string text = "DecompositionTerm(offset=(" + std::to_string(t.offset_y) + ", " +
                               std::to_string(t.offset_x) + "), segments=[";
            for (std::size_t i = 0; i < t.segments.size(); ++i) {
                const auto& s = t.segments[i];
                text += (i ? ", " : "") + std::string("LineSegment(length=") + std::to_string(s.length) +
                        ", dx=" + std::to_string(s.dx) + ", dy=" + std::to_string(s.dy) +
                        ", origin=" + std::to_string(s.origin) + ")";
            }
            return text + "])";
        });

    nb::class_<structuring_element>(
        m, "Footprint",
        "A flat structuring element.\n\n"
        "Make one with the functions of :mod:`granula.footprints` (``hline``, ``vline``,\n"
        "``rectangle``, ``square``, ``line``, ``disk``, ``diamond``, ``octagon``, ``ellipse``,\n"
        "``mask``, ``parse``). Every footprint reports its exact mask and origin (:meth:`footprint`),\n"
        "so a result can be reproduced with another library, and its decomposition: terms whose\n"
        "union is the footprint, each an offset swept along line segments (:meth:`decomposition`).\n\n"
        "Examples\n"
        "--------\n"
        ">>> from granula import footprints\n"
        ">>> fp = footprints.rectangle(2, 3)\n"
        ">>> fp\n"
        "Footprint('rect:3x2')\n"
        ">>> fp.shape\n"
        "(2, 3)\n"
        ">>> fp.decomposition()\n"
        "[DecompositionTerm(offset=(0, 0), segments=[LineSegment(length=3, dx=1, dy=0, origin=1), "
        "LineSegment(length=2, dx=0, dy=1, origin=1)])]\n")
        .def_static("parse", &structuring_element::parse, "spec"_a,
                    "Footprint from its text form (see granula.footprints.parse).")
        .def_prop_ro("shape", [](const structuring_element& se) { return std::make_pair(se.height(), se.width()); },
                     "Extent of the mask as (rows, cols).")
        .def_prop_ro("spec", &structuring_element::to_string,
                     "The text form, as the command-line tool and the footprint= argument take it.")
        .def("footprint", &footprint_of,
             "The exact footprint.\n\n"
             "Returns\n"
             "-------\n"
             "mask : numpy.ndarray of bool, shape (rows, cols)\n"
             "    True where the pixel belongs to the footprint.\n"
             "origin : tuple of int\n"
             "    (row, col) of the origin in ``mask``; ``n // 2`` along an extent of ``n`` pixels,\n"
             "    unless moved (:meth:`with_origin`, :meth:`reflected`).\n\n"
             "Examples\n"
             "--------\n"
             ">>> from granula import footprints\n"
             ">>> mask, origin = footprints.hline(4).footprint()\n"
             ">>> mask\n"
             "array([[ True,  True,  True,  True]])\n"
             ">>> origin\n"
             "(0, 2)\n")
        .def("reflected", &structuring_element::reflected,
             "The footprint reflected through its origin (every offset negated), in the mirrored box.\n\n"
             "granula's dilation by ``fp.reflected()`` is OpenCV's ``cv2.dilate`` by ``fp``'s mask with\n"
             "its origin as the anchor.\n\n"
             "Examples\n"
             "--------\n"
             ">>> from granula import footprints\n"
             ">>> footprints.hline(4).reflected().footprint()\n"
             "(array([[ True,  True,  True,  True]]), (0, 1))\n")
        .def(
            "with_origin",
            [](const structuring_element& se, std::int64_t row, std::int64_t col) { return se.with_origin(col, row); },
            "row"_a, "col"_a,
            "The same pixels with the origin at (row, col) of the mask; ValueError outside it.\n\n"
            "scipy.ndimage's ``origin=(a, b)`` with this footprint is\n"
            "``fp.with_origin(rows // 2 + a, cols // 2 + b)``.\n\n"
            "Examples\n"
            "--------\n"
            ">>> from granula import footprints\n"
            ">>> footprints.rectangle(2, 4).with_origin(0, 1).footprint()[1]\n"
            "(0, 1)\n")
        .def("decomposition", &structuring_element::decomposition,
             "Terms whose union is exactly this footprint, each an offset swept along line segments.")
        .def("__eq__", [](const structuring_element& a, const structuring_element& b) { return a == b; })
        .def("__hash__", [](const structuring_element& se) {
            return nb::hash(nb::make_tuple(se.width(), se.height(), se.origin_x(), se.origin_y()));
        })
        .def("__str__", &structuring_element::to_string)
        .def("__repr__", [](const structuring_element& se) { return "Footprint('" + se.to_string() + "')"; });
    m.def("hline", &structuring_element::hline, "length"_a);
    m.def("vline", &structuring_element::vline, "length"_a);
    m.def("rectangle", &structuring_element::rectangle, "width"_a, "height"_a);
    m.def("line", &structuring_element::line, "length"_a, "angle"_a);
    m.def("disk", nb::overload_cast<std::int64_t, int>(&structuring_element::disk), "radius"_a, "periodic_lines"_a);
    m.def("diamond", &structuring_element::diamond, "radius"_a);
    m.def("octagon", &structuring_element::octagon, "m"_a, "n"_a);
    m.def("ellipse", &structuring_element::ellipse, "width"_a, "height"_a);
    m.def(
        "mask_footprint",
        [](nb::bytes data, std::int64_t height, std::int64_t width, std::int64_t origin_row, std::int64_t origin_col) {
            footprint_mask mask;
            mask.width = width, mask.height = height, mask.origin_x = origin_col, mask.origin_y = origin_row;
            const auto* bytes = static_cast<const std::uint8_t*>(data.data());
            mask.mask.assign(bytes, bytes + data.size());
            return structuring_element::from_mask(std::move(mask));
        },
        "data"_a, "height"_a, "width"_a, "origin_row"_a, "origin_col"_a,
        "A footprint from a row-major 0/1 byte mask and its origin.");
    m.def("footprint_syntax", &structuring_element::spec_syntax);

    // --- settings ------------------------------------------------------------------------------
    m.def("set_num_threads", &set_num_threads, "threads"_a);
    m.def("num_threads", &num_threads);
    m.def("set_simd_enabled", &set_simd_enabled, "enabled"_a);
    m.def("simd_enabled", &simd_enabled);
    m.def("simd_target", &simd_target);
    m.def("build_info", &build_info);
    m.def("cuda_built", &cuda_built);
    m.def("cuda_available", &cuda_available);

    bind_gaussian(m);
    bind_binary(m);
    bind_lines(m);
}
