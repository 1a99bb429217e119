// The operation registry (include/granula/operations.hpp).
#include "granula/operations.hpp"

#include <array>
#include <string>

#include "granula/binary/binary.hpp"
#include "granula/core/error.hpp"
#include "granula/morphology/morphology.hpp"

namespace granula {
namespace {

// "convention" comes before "mode": the mode's default depends on it.
constexpr std::array<parameter_info, 4> morphology_parameters{{
    {"footprint", "square:3",
     "structuring element: hline:L, vline:L, rect:WxH, square:N, line:L:ANGLE, disk:R, diamond:R, octagon:M:N, "
     "ellipse:WxH or mask:FILE (a binary image, origin at its centre)"},
    {"convention", "granula",
     "whose results to reproduce: granula, opencv (cv::dilate does not reflect the footprint), scipy (default "
     "mode reflect) or matlab (origin of an even size n at (n - 1) // 2)"},
    {"mode", "default",
     "border: default (the convention's: reflect for scipy, else ignore), ignore, constant, nearest, reflect, "
     "mirror, wrap"},
    {"cval", "0", "value outside the image with mode=constant"},
}};

template <morphology_op Op>
void run_host(const any_host_view& in, const any_host_view& out, const operation_args& args) {
    if (in.type != out.type)
        throw invalid_argument("output pixel type " + std::string(to_string(out.type)) + " differs from the input's " +
                               std::string(to_string(in.type)));
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        morphology<T>(Op, in.as<const T>(), out.as<T>(), args.footprint, args.compatibility, args.mode);
    });
}

template <morphology_op Op>
void run_device(const any_device_view& in, const any_device_view& out, const operation_args& args, stream s) {
    if (in.type != out.type)
        throw invalid_argument("output pixel type " + std::string(to_string(out.type)) + " differs from the input's " +
                               std::string(to_string(in.type)));
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        morphology<T>(Op, in.as<const T>(), out.as<T>(), args.footprint, args.compatibility, args.mode, s);
    });
}

constexpr std::array<parameter_info, 3> binary_parameters{{
    {"footprint", "square:3", "structuring element: hline:L, vline:L, rect:WxH, square:N"},
    {"mode", "ignore", "border: ignore, constant, nearest, reflect, mirror, wrap"},
    {"cval", "0", "value outside the image with mode=constant: 0 or 1"},
}};

// Binary operations on 0/1 images: packed to 64 pixels a word (non-zero is 1), unpacked to 0/1.
template <binary_op Op>
void run_binary_host(const any_host_view& in, const any_host_view& out, const operation_args& args) {
    if (in.type != out.type)
        throw invalid_argument("output pixel type " + std::string(to_string(out.type)) + " differs from the input's " +
                               std::string(to_string(in.type)));
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        binary_morphology<T>(Op, in.as<const T>(), out.as<T>(), args.footprint, args.mode);
    });
}

template <binary_op Op>
void run_binary_device(const any_device_view& in, const any_device_view& out, const operation_args& args, stream s) {
    if (in.type != out.type)
        throw invalid_argument("output pixel type " + std::string(to_string(out.type)) + " differs from the input's " +
                               std::string(to_string(in.type)));
    visit_pixel_type(in.type, [&]<class T>(type_tag<T>) {
        binary_morphology<T>(Op, in.as<const T>(), out.as<T>(), args.footprint, args.mode, s);
    });
}

#define GRANULA_BINARY_ENTRY(name, summary)                                                                   \
    operation_info {                                                                                        \
        "binary_" #name, summary, binary_parameters, &run_binary_host<binary_op::name>,                     \
            &run_binary_device<binary_op::name>                                                             \
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
    GRANULA_BINARY_ENTRY(erosion, "binary erosion of a 0/1 image (non-zero is 1) on bit-packed rows: 1 where the footprint fits"),
    GRANULA_BINARY_ENTRY(dilation, "binary dilation of a 0/1 image (non-zero is 1) on bit-packed rows, by the reflected footprint"),
    GRANULA_BINARY_ENTRY(opening, "binary opening of a 0/1 image (non-zero is 1): dilation of the erosion, bit-packed"),
    GRANULA_BINARY_ENTRY(closing, "binary closing of a 0/1 image (non-zero is 1): erosion of the dilation, bit-packed"),
};
#undef GRANULA_MORPHOLOGY_ENTRY
#undef GRANULA_BINARY_ENTRY

}  // namespace

std::span<const operation_info> operations() { return registry; }

border_mode parse_mode_parameter(std::string_view value, convention c) {
    if (value == "default") return default_border(c).mode;
    try {
        return parse_border_mode(value);
    } catch (const invalid_argument&) {
        throw invalid_argument("unknown border mode '" + std::string(value) + "'; allowed: default, " +
                               border_mode_names());
    }
}

const operation_info& find_operation(std::string_view name) {
    for (const auto& op : registry)
        if (op.name == name) return op;
    std::string names;
    for (const auto& op : registry) names += (names.empty() ? "" : ", ") + std::string(op.name);
    throw invalid_argument("unknown operation '" + std::string(name) + "'; known: " + names);
}

}  // namespace granula
