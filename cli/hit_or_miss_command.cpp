// granula hit_or_miss IN OUT --foreground SE --background SE: the binary hit-or-miss transform of
// a 0/1 image (non-zero is 1) on bit-packed rows; writes 0/1 in the input's pixel type.
#include <cstdio>
#include <string>

#include "command.hpp"
#include "granula/binary/binary.hpp"
#include "granula/core/device.hpp"
#include "granula/io/io.hpp"
#include "granula/operations.hpp"

namespace granula::cli {

namespace {
constexpr option_spec hit_or_miss_options[] = {
    {"foreground", "SE", "the element whose pixels must all be 1 (footprint forms as for erosion)"},
    {"background", "SE", "the element whose pixels must all be 0; it must not share an offset with --foreground"},
    {"mode", "ignore|constant|nearest|reflect|mirror|wrap", "border mode (default: ignore)"},
    {"cval", "0|1", "the value outside the image for --mode constant (default: 0)"},
    {"device", "auto|cpu|cuda", "where to compute; auto: CUDA when a GPU is present, else the CPU (default: auto)"},
    {"to-grey", "", "read colour input as grey (BT.601 luma) instead of refusing it"},
};

structuring_element footprint_option(const parsed_arguments& parsed, std::string_view name) {
    const auto text = parsed.value(name);
    if (!text) throw usage_error("hit_or_miss needs --" + std::string(name) + "; see 'granula hit_or_miss --help'");
    try {
        return parse_footprint(*text);
    } catch (const granula::invalid_argument& e) {
        throw usage_error("--" + std::string(name) + ": " + e.what());
    }
}
}  // namespace

int run_hit_or_miss(std::span<const std::string_view> arguments) {
    const command& hit_or_miss_command = find_command("hit_or_miss");
    const parsed_arguments parsed = parse_arguments(arguments, hit_or_miss_options, "hit_or_miss");
    if (parsed.help) {
        print_command_help(hit_or_miss_command, hit_or_miss_options);
        return 0;
    }
    if (parsed.positional.size() != 2) throw usage_error("hit_or_miss needs IN and OUT; see 'granula hit_or_miss --help'");
    const structuring_element foreground = footprint_option(parsed, "foreground");
    const structuring_element background = footprint_option(parsed, "background");
    border mode;
    device where = device::automatic;
    try {
        if (const auto m = parsed.value("mode")) mode.mode = parse_mode_parameter(*m, convention::granula);
        if (const auto d = parsed.value("device")) where = parse_device(*d);
    } catch (const granula::invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (const auto c = parsed.value("cval")) mode.cval = parse_number("cval", *c);

    const std::string output(parsed.positional[1]);
    const any_host_image image = io::read_image(std::string(parsed.positional[0]), {.to_grey = parsed.has_flag("to-grey")});
    io::check_write_format(output, image.type());
    const host_bit_image bits = visit_pixel_type(image.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return pack<T>(image.as<const T>());
    });
    host_bit_image result(image.width(), image.height());
    if (resolve_device(where) == device::cuda) {
        const device_bit_image d_in = upload(bits.view());
        device_bit_image d_out(image.width(), image.height());
        hit_or_miss(d_in.view(), d_out.view(), foreground, background, mode);
        copy(d_out.view(), result.view());
        stream{}.synchronize();
    } else {
        hit_or_miss(bits.view(), result.view(), foreground, background, mode);
    }
    const any_host_image out = visit_pixel_type(image.type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return any_host_image(unpack<T>(result.view()));
    });
    io::write_image(output, out.view());
    return 0;
}

}  // namespace granula::cli
