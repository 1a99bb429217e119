// granula gaussian IN OUT --sigma S[,S] ...: Gaussian smoothing and derivatives (gaussian.hpp).
#include <string>
#include <vector>

#include "command.hpp"
#include "granula/core/any_image.hpp"
#include "granula/core/config.hpp"
#include "granula/core/device.hpp"
#include "granula/gaussian/gaussian.hpp"
#include "granula/io/io.hpp"
#include "timed_run.hpp"

namespace granula::cli {

namespace {

constexpr option_spec gaussian_options[] = {
    {"sigma", "S[,S]", "standard deviation in pixels, one value or one per axis (rows,cols); required"},
    {"order", "O[,O]", "derivative order 0, 1 or 2, per axis as for --sigma (default: 0)"},
    {"mode", "M[,M]", "border: reflect, constant, nearest, mirror, wrap (default: reflect)"},
    {"cval", "V", "value outside the image for --mode constant (default: 0)"},
    {"method", "NAME", "auto, fir, deriche, recursive6, recursive5, yvv (= yvv1995), yvv1995, yvv2002 (default: auto)"},
    {"split", "NAME", "one_way, two_way, two_way_exact: how the GPU runs yvv along a line (default: one_way)"},
    {"truncate", "T", "fir radius = round(T * sigma) (default: 4)"},
    {"radius", "R[,R]", "fir radius per axis, overriding --truncate"},
    {"output-type", "float32|input", "pixel type of OUT (default: float32; input rounds and clamps)"},
    {"device", "auto|cpu|cuda", "where to compute (default: auto: CUDA when a GPU is present)"},
    {"time", "", "print the compute time on stderr"},
};

// "a" or "a,b" -> two values.
std::vector<std::string> pair_of(std::string_view option, std::string_view text) {
    std::vector<std::string> parts;
    std::string current;
    for (char c : text) {
        if (c == ',') {
            parts.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    parts.push_back(current);
    if (parts.size() == 1) parts.push_back(parts[0]);
    if (parts.size() != 2)
        throw usage_error("--" + std::string(option) + " takes one value or two separated by a comma, got '" +
                          std::string(text) + "'");
    return parts;
}

gaussian_params parse_params(const parsed_arguments& parsed) {
    gaussian_params p;
    const auto sigma = parsed.value("sigma");
    if (!sigma) throw usage_error("gaussian needs --sigma; see 'granula gaussian --help'");
    const auto s = pair_of("sigma", *sigma);
    for (int a = 0; a < 2; ++a) p.sigma[a] = parse_number("--sigma", s[a]);
    if (const auto v = parsed.value("order")) {
        const auto o = pair_of("order", *v);
        for (int a = 0; a < 2; ++a) p.order[a] = static_cast<int>(parse_integer("--order", o[a], -1000, 1000));
    }
    if (const auto v = parsed.value("radius")) {
        const auto r = pair_of("radius", *v);
        for (int a = 0; a < 2; ++a) p.radius[a] = parse_integer("--radius", r[a], 0, 1LL << 40);
    }
    try {
        if (const auto v = parsed.value("mode")) {
            const auto m = pair_of("mode", *v);
            for (int a = 0; a < 2; ++a) p.mode[a] = parse_border_mode(m[a]);
        }
        if (const auto v = parsed.value("method")) p.method = parse_gaussian_method(*v);
        if (const auto v = parsed.value("split")) p.split = parse_gaussian_split(*v);
    } catch (const invalid_argument& e) {
        throw usage_error(e.what());
    }
    if (const auto v = parsed.value("cval")) p.cval = parse_number("--cval", *v);
    if (const auto v = parsed.value("truncate")) p.truncate = parse_number("--truncate", *v);
    return p;
}

}  // namespace

int run_gaussian(std::span<const std::string_view> arguments) {
    const command& self = find_command("gaussian");
    const parsed_arguments parsed = parse_arguments(arguments, gaussian_options, "gaussian");
    if (parsed.help) {
        print_command_help(self, gaussian_options);
        return 0;
    }
    if (parsed.positional.size() != 2)
        throw usage_error("gaussian needs IN and OUT; see 'granula gaussian --help'");
    const gaussian_params p = parse_params(parsed);
    bool keep_type = false;
    if (const auto v = parsed.value("output-type")) {
        if (*v != "float32" && *v != "input")
            throw usage_error("--output-type must be float32 or input, got '" + std::string(*v) + "'");
        keep_type = *v == "input";
    }
    device where = device::automatic;
    if (const auto d = parsed.value("device")) {
        try {
            where = parse_device(*d);
        } catch (const invalid_argument& e) {
            throw usage_error("--device: " + std::string(e.what()));
        }
    }
    where = resolve_device(where);
    const std::string out_path(parsed.positional[1]);
    const any_host_image input = io::read_image(std::string(parsed.positional[0]));
    const pixel_type out_type = keep_type ? input.type() : pixel_type::float32;
    try {
        io::check_write_format(out_path, out_type);
    } catch (const io_error& e) {
        // The float32 default into a format that holds only integers (PNG, PGM): name the
        // option that writes the input's type, where the format holds that.
        const bool input_type_fits = [&] {
            try {
                io::check_write_format(out_path, input.type());
                return true;
            } catch (const io_error&) {
                return false;
            }
        }();
        if (keep_type || !input_type_fits) throw;
        throw io_error(std::string(e.what()) + ", or keep the input's " + std::string(to_string(input.type())) +
                       " pixels with --output-type input");
    }
    const any_host_image output = make_host_image(out_type, input.width(), input.height());
    const bool time = parsed.has_flag("time");
    run_timings t;
    try {
        visit_pixel_type(input.type(), [&]<class T>(type_tag<T>) {
            const auto smooth = [&]<class U>(type_tag<U>) {
                return run_timed<T, U>(where, input.view().as<const T>(), output.view().as<U>(), time,
                                       [&](auto in, auto out) { gaussian<T, U>(in, out, p); });
            };
            t = keep_type ? smooth(type_tag<T>{}) : smooth(type_tag<float>{});
        });
    } catch (const invalid_argument& e) {
        throw usage_error(e.what());  // every remaining invalid_argument is about the parameters
    }
    if (time) print_timings("gaussian", where, t);
    io::write_image(out_path, output.view());
    return 0;
}

}  // namespace granula::cli
