// The operation registry: one table of every image-to-image operation, from which the CLI
// builds its commands and help and the Python package its functions. Add an operation here
// once and it appears in both.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "granula/core/any_image.hpp"
#include "granula/core/border.hpp"
#include "granula/core/stream.hpp"
#include "granula/morphology/convention.hpp"
#include "granula/morphology/structuring_element.hpp"

namespace granula {

// Arguments an operation may take; each operation lists the ones it reads in `parameters`.
struct operation_args {
    structuring_element footprint = structuring_element::square(3);
    border mode{};
    convention compatibility = convention::granula;  // the peer whose results to reproduce
};

// A "mode" parameter's value: a border mode's name, or "default" for the default border mode of
// the convention (default_border). Throws invalid_argument naming the allowed values.
border_mode parse_mode_parameter(std::string_view value, convention c);

struct parameter_info {
    std::string_view name;           // the keyword in Python, "--name" in the CLI
    std::string_view default_value;  // as the CLI spells it
    std::string_view help;
};

struct operation_info {
    std::string_view name;
    std::string_view summary;
    std::span<const parameter_info> parameters;
    // Output has the input's size and pixel type.
    void (*run_host)(const any_host_view& in, const any_host_view& out, const operation_args& args);
    void (*run_device)(const any_device_view& in, const any_device_view& out, const operation_args& args,
                       stream s);
};

std::span<const operation_info> operations();
// Throws invalid_argument listing the known operations.
const operation_info& find_operation(std::string_view name);

}  // namespace granula
