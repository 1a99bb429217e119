// Grey-scale morphology by flat structuring elements (GUIDE §1).
//
//   erosion  ε_B f(x) = min over b in B of f(x + b)
//   dilation δ_B f(x) = max over b in B of f(x - b)   (B reflected, as SciPy and scikit-image)
//   opening  δ_B ε_B f,  closing ε_B δ_B f,  white_tophat f - opening,  black_tophat closing - f,
//   gradient δ_B f - ε_B f.   Differences saturate at 0 for unsigned pixel types.
//
// Float NaN: a NaN anywhere under the element makes the result NaN (numpy's minimum/maximum),
// on every backend. Output views must have the input's size; input and output may be the
// same view or overlap.
//
// With a `convention` the operation is the one that peer library computes (convention.hpp);
// leaving out the border (or passing std::nullopt) gives that peer's default, default_border(c).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "granula/core/border.hpp"
#include "granula/core/image.hpp"
#include "granula/core/stream.hpp"
#include "granula/morphology/convention.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula {

#define GRANULA_FOR_EACH_MORPHOLOGY_OP(X) \
    X(erosion)                            \
    X(dilation)                           \
    X(opening)                            \
    X(closing)                            \
    X(white_tophat)                       \
    X(black_tophat)                       \
    X(gradient)

enum class morphology_op {
#define GRANULA_ENUMERATOR(name) name,
    GRANULA_FOR_EACH_MORPHOLOGY_OP(GRANULA_ENUMERATOR)
#undef GRANULA_ENUMERATOR
};

std::string_view to_string(morphology_op op);
// Throws invalid_argument listing the operations.
morphology_op parse_morphology_op(std::string_view name);

// The generic entry points: every named function below calls one of these.
template <pixel T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                convention c, std::optional<border> mode = std::nullopt);
template <pixel T>
void morphology(morphology_op op, device_view<const T> in, device_view<T> out,
                const structuring_element& footprint, convention c, std::optional<border> mode = std::nullopt,
                stream s = {});
// granula's own convention.
template <pixel T>
void morphology(morphology_op op, host_view<const T> in, host_view<T> out, const structuring_element& footprint,
                border mode = {}) {
    morphology<T>(op, in, out, footprint, convention::granula, mode);
}
template <pixel T>
void morphology(morphology_op op, device_view<const T> in, device_view<T> out,
                const structuring_element& footprint, border mode = {}, stream s = {}) {
    morphology<T>(op, in, out, footprint, convention::granula, mode, s);
}

// Named operations. The input may be a view of const or mutable pixels; the pixel type is
// deduced from it, so erosion(img.view(), out.view(), structuring_element::square(5)) works,
// and dilation(img.view(), out.view(), se, convention::opencv) is cv::dilate's result.
#define GRANULA_DECLARE_NAMED_OP(name)                                                                      \
    template <pixel U>                                                                                      \
    void name(host_view<U> in, host_view<std::remove_const_t<U>> out, const structuring_element& footprint, \
              border mode = {}) {                                                                           \
        morphology<std::remove_const_t<U>>(morphology_op::name, in, out, footprint, mode);                  \
    }                                                                                                       \
    template <pixel U>                                                                                      \
    void name(host_view<U> in, host_view<std::remove_const_t<U>> out, const structuring_element& footprint, \
              convention c, std::optional<border> mode = std::nullopt) {                                    \
        morphology<std::remove_const_t<U>>(morphology_op::name, in, out, footprint, c, mode);               \
    }                                                                                                       \
    template <pixel U>                                                                                      \
    void name(device_view<U> in, device_view<std::remove_const_t<U>> out,                                   \
              const structuring_element& footprint, border mode = {}, stream s = {}) {                      \
        morphology<std::remove_const_t<U>>(morphology_op::name, in, out, footprint, mode, s);               \
    }                                                                                                       \
    template <pixel U>                                                                                      \
    void name(device_view<U> in, device_view<std::remove_const_t<U>> out,                                   \
              const structuring_element& footprint, convention c, std::optional<border> mode = std::nullopt, \
              stream s = {}) {                                                                              \
        morphology<std::remove_const_t<U>>(morphology_op::name, in, out, footprint, c, mode, s);            \
    }                                                                                                       \
    template <pixel U>                                                                                      \
    host_image<std::remove_const_t<U>> name(host_view<U> in, const structuring_element& footprint,          \
                                            border mode = {}) {                                             \
        host_image<std::remove_const_t<U>> out(in.width(), in.height());                                    \
        morphology<std::remove_const_t<U>>(morphology_op::name, in, out.view(), footprint, mode);           \
        return out;                                                                                         \
    }                                                                                                       \
    template <pixel U>                                                                                      \
    host_image<std::remove_const_t<U>> name(host_view<U> in, const structuring_element& footprint,          \
                                            convention c, std::optional<border> mode = std::nullopt) {      \
        host_image<std::remove_const_t<U>> out(in.width(), in.height());                                    \
        morphology<std::remove_const_t<U>>(morphology_op::name, in, out.view(), footprint, c, mode);        \
        return out;                                                                                         \
    }
GRANULA_FOR_EACH_MORPHOLOGY_OP(GRANULA_DECLARE_NAMED_OP)
#undef GRANULA_DECLARE_NAMED_OP

}  // namespace granula
