// granula label IMAGE: connected components of equal non-background value; prints the count and
// writes the labels (NPY int32; int64 for images over 2^31 - 1 pixels), a grey-coded label PNG
// and a statistics CSV when asked.
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

#include "command.hpp"
#include "granula/core/device.hpp"
#include "granula/io/io.hpp"
#include "granula/labeling/labeling.hpp"

namespace granula::cli {

namespace {
constexpr option_spec label_options[] = {
    {"connectivity", "1|2", "1: 4-neighbours, 2: 8-neighbours (default: 2)"},
    {"background", "V", "pixel value that belongs to no component (default: 0)"},
    {"labels", "OUT.npy", "write the labels 0..N as NPY: int32, int64 for images over 2^31 - 1 pixels"},
    {"colour", "OUT.png", "write the labels as an 8-bit PNG, each component one grey level in 64..255, background 0"},
    {"stats", "OUT.csv", "write label,area,min_row,min_col,max_row,max_col,centroid_row,centroid_col,value"},
    {"method", "auto|tile_merge",
     "GPU method: auto (the fastest) or tile_merge (the seed paper's, kept as reference); the CPU has auto only "
     "(default: auto)"},
    {"device", "auto|cpu|cuda", "where to compute; auto: CUDA when a GPU is present, else the CPU (default: auto)"},
    {"to-grey", "", "read colour input as grey (BT.601 luma) instead of refusing it"},
};

// A fixed scramble of the label, so neighbouring components get distant grey levels.
std::uint8_t grey_code(std::int64_t label) {
    if (label == 0) return 0;
    std::uint32_t h = static_cast<std::uint32_t>(label) * 2654435761u;
    h ^= h >> 16;
    return static_cast<std::uint8_t>(64 + h % 192);
}

void write_stats(const std::string& path, const region_statistics& s) {
    std::ofstream out(path);
    if (!out) throw io_error(path + ": cannot open for writing");
    out << "label,area,min_row,min_col,max_row,max_col,centroid_row,centroid_col,value\n";
    char line[256];
    for (std::int64_t c = 0; c < s.size(); ++c) {
        std::snprintf(line, sizeof line, "%lld,%lld,%lld,%lld,%lld,%lld,%.17g,%.17g,%u\n",
                      static_cast<long long>(c + 1), static_cast<long long>(s.area[c]),
                      static_cast<long long>(s.min_row[c]), static_cast<long long>(s.min_col[c]),
                      static_cast<long long>(s.max_row[c]), static_cast<long long>(s.max_col[c]), s.centroid_row[c],
                      s.centroid_col[c], s.value[c]);
        out << line;
    }
    out.close();
    if (!out) throw io_error(path + ": write failed");
}

struct label_request {
    int connectivity;
    std::uint32_t background;
    label_method method;
    device where;
    std::optional<std::string_view> labels_path, colour_path;
    region_statistics* statistics;
};

// Labels `image` with labels of type L and writes the label files; returns N.
template <class L>
std::int64_t label_to_files(const any_host_image& image, const label_request& r) {
    host_image<L> labels(image.width(), image.height());
    std::int64_t count = 0;
    if (resolve_device(r.where) == device::cuda) {
        count = visit_pixel_type(image.type(), [&](auto tag) -> std::int64_t {
            using T = typename decltype(tag)::type;
            const device_image<T> d_in = upload<T>(image.as<const T>());
            device_image<L> d_out(image.width(), image.height());
            const std::int64_t n = label(any_device_view(device_view<const T>(d_in.view())), d_out.view(),
                                         r.connectivity, r.background, r.statistics, {}, r.method);
            copy<L>(d_out.view(), labels.view());
            stream{}.synchronize();
            return n;
        });
    } else {
        count = label(image.view(), labels.view(), r.connectivity, r.background, r.statistics, r.method);
    }
    if (r.labels_path) io::write_labels(std::string(*r.labels_path), host_view<const L>(labels.view()));
    if (r.colour_path) {
        host_image<std::uint8_t> grey(image.width(), image.height());
        for (std::int64_t y = 0; y < image.height(); ++y)
            for (std::int64_t x = 0; x < image.width(); ++x) grey.view()(y, x) = grey_code(labels.view()(y, x));
        io::write_image(std::string(*r.colour_path), host_view<const std::uint8_t>(grey.view()));
    }
    return count;
}
}  // namespace

int run_label(std::span<const std::string_view> arguments) {
    const command& label_command = find_command("label");
    const parsed_arguments parsed = parse_arguments(arguments, label_options, "label");
    if (parsed.help) {
        print_command_help(label_command, label_options);
        return 0;
    }
    if (parsed.positional.size() != 1) throw usage_error("label needs one IMAGE; see 'granula label --help'");
    const int connectivity =
        static_cast<int>(parse_integer("connectivity", parsed.value("connectivity").value_or("2"), 1, 2));
    const auto background =
        static_cast<std::uint32_t>(parse_integer("background", parsed.value("background").value_or("0"), 0, 65535));
    label_method method = label_method::automatic;
    if (const auto m = parsed.value("method")) {
        try {
            method = parse_label_method(*m);
        } catch (const granula::invalid_argument& e) {
            throw usage_error("--method: " + std::string(e.what()));
        }
    }
    device where = device::automatic;
    if (const auto d = parsed.value("device")) {
        try {
            where = parse_device(*d);
        } catch (const granula::invalid_argument& e) {
            throw usage_error("--device: " + std::string(e.what()));
        }
    }
    const auto labels_path = parsed.value("labels"), colour_path = parsed.value("colour"),
               stats_path = parsed.value("stats");
    // Refuse unwritable formats before the work.
    if (labels_path && !std::string(*labels_path).ends_with(".npy"))
        throw usage_error("--labels: label images are written as .npy (int32, or int64 for images over 2^31 - 1 "
                          "pixels; TIFF and the other image formats are not written), not '" +
                          std::string(*labels_path) + "'");
    if (colour_path) io::check_write_format(std::string(*colour_path), pixel_type::uint8);

    const std::string input(parsed.positional[0]);
    const any_host_image image = io::read_image(input, {.to_grey = parsed.has_flag("to-grey")});
    region_statistics stats;
    const label_request request{connectivity, background, method, where, labels_path, colour_path, stats_path ? &stats : nullptr};
    // Equal-value images over 2^31 - 1 pixels can have more components than int32 labels hold.
    const std::int64_t count = image.width() * image.height() > std::numeric_limits<std::int32_t>::max()
                                   ? label_to_files<std::int64_t>(image, request)
                                   : label_to_files<std::int32_t>(image, request);
    if (stats_path) write_stats(std::string(*stats_path), stats);
    std::printf("%s: %lld components\n", input.c_str(), static_cast<long long>(count));
    return 0;
}

}  // namespace granula::cli
