// granula info IMAGE...: each file's size and pixel type, as granula reads it.
#include <cstdio>

#include "command.hpp"
#include "granula/core/pixel_type.hpp"
#include "granula/io/io.hpp"

namespace granula::cli {

namespace {
constexpr option_spec info_options[] = {
    {"to-grey", "", "read colour input as grey (BT.601 luma) instead of refusing it"},
};
}  // namespace

int run_info(std::span<const std::string_view> arguments) {
    const command& info_command = find_command("info");
    const parsed_arguments parsed = parse_arguments(arguments, info_options, "info");
    if (parsed.help) {
        print_command_help(info_command, info_options);
        return 0;
    }
    if (parsed.positional.empty()) throw usage_error("info needs at least one IMAGE; see 'granula info --help'");
    for (const std::string_view file : parsed.positional) {
        const any_host_image image = io::read_image(std::string(file), {.to_grey = parsed.has_flag("to-grey")});
        std::printf("%.*s: %lld x %lld %s\n", static_cast<int>(file.size()), file.data(),
                    static_cast<long long>(image.width()), static_cast<long long>(image.height()),
                    std::string(to_string(image.type())).c_str());
    }
    return 0;
}

}  // namespace granula::cli
