// The operation registry (include/granula/operations.hpp).
#include "granula/operations.hpp"

#include <array>
#include <string>

#include "granula/core/error.hpp"
#include "granula/morphology/morphology.hpp"

namespace granula {
namespace {

constexpr std::array<parameter_info, 3> morphology_parameters{{
    {"footprint", "square:3",
     "structuring element: hline:L, vline:L, rect:WxH, square:N, line:L:ANGLE, disk:R, diamond:R, octagon:M:N, "
     "ellipse:WxH or mask:FILE (a binary image, origin at its centre)"},
    {"mode", "ignore", "border: ignore, constant, nearest, reflect, mirror, wrap"},
    {"cval", "0", "value outside the image with mode=constant"},
}};

template <morphology_op Op>
void run_host(const any_host_view& in, const any_host_view& out, const operation_args& args) {
    if (in.type != out.type)
        throw invalid_argument("output pixel type " + std::string(to_string(out.type)) + " differs from the input's " +
                               std::string(to_string(in.type)));
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        morphology<T>(Op, in.as<const T>(), out.as<T>(), args.footprint, args.mode);
    });
}

template <morphology_op Op>
void run_device(const any_device_view& in, const any_device_view& out, const operation_args& args, stream s) {
    if (in.type != out.type)
        throw invalid_argument("output pixel type " + std::string(to_string(out.type)) + " differs from the input's " +
                               std::string(to_string(in.type)));
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        morphology<T>(Op, in.as<const T>(), out.as<T>(), args.footprint, args.mode, s);
    });
}

#define GRANULA_MORPHOLOGY_ENTRY(name, summary)                                                       \
    operation_info {                                                                                  \
        #name, summary, morphology_parameters, &run_host<morphology_op::name>,                        \
            &run_device<morphology_op::name>                                                          \
    }

const std::array registry{
    GRANULA_MORPHOLOGY_ENTRY(erosion, "grey-scale erosion: minimum over the footprint"),
    GRANULA_MORPHOLOGY_ENTRY(dilation, "grey-scale dilation: maximum over the reflected footprint"),
    GRANULA_MORPHOLOGY_ENTRY(opening, "opening: dilation of the erosion; removes bright detail smaller than the footprint"),
    GRANULA_MORPHOLOGY_ENTRY(closing, "closing: erosion of the dilation; removes dark detail smaller than the footprint"),
    GRANULA_MORPHOLOGY_ENTRY(white_tophat, "white top-hat: image minus its opening; keeps bright detail"),
    GRANULA_MORPHOLOGY_ENTRY(black_tophat, "black top-hat: closing minus the image; keeps dark detail"),
    GRANULA_MORPHOLOGY_ENTRY(gradient, "morphological gradient: dilation minus erosion"),
};
#undef GRANULA_MORPHOLOGY_ENTRY

}  // namespace

std::span<const operation_info> operations() { return registry; }

const operation_info& find_operation(std::string_view name) {
    for (const auto& op : registry)
        if (op.name == name) return op;
    std::string names;
    for (const auto& op : registry) names += (names.empty() ? "" : ", ") + std::string(op.name);
    throw invalid_argument("unknown operation '" + std::string(name) + "'; known: " + names);
}

}  // namespace granula
