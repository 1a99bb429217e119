// Netpbm formats, written by hand (they are a text header and raw samples):
//   P5  binary PGM, maxval 1..65535: 1 byte per sample below 256, else 2 bytes big-endian.
//       Samples keep their values (a 12-bit camera's maxval 4095 reads as uint16 0..4095);
//       a sample above maxval is an error.
//   P6  binary PPM, read only and only with to_grey (BT.601 luma at the file's depth).
//   Pf  PFM grey float32; PF colour, only with to_grey. The scale's sign gives the byte order
//       (negative: little-endian); rows are stored bottom to top.
// The header's size is checked against the bytes the file holds before anything is allocated.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "io/io_internal.hpp"

namespace granula::io::detail {
namespace {

// Netpbm allows comments from '#' to the end of the line wherever whitespace may be.
void skip_whitespace_and_comments(input_file& file) {
    for (;;) {
        int c = file.next_byte();
        if (c == '#') {
            while (c != '\n' && c != '\r' && c != EOF) c = file.next_byte();
        } else if (c == EOF || !std::isspace(c)) {
            if (c != EOF) std::ungetc(c, file.handle());
            return;
        }
    }
}

// A header token: the characters up to the next whitespace, which is consumed (the last field
// is followed by exactly one whitespace byte, then the samples).
std::string read_token(input_file& file, const char* field) {
    skip_whitespace_and_comments(file);
    std::string token;
    for (int c = file.next_byte();; c = file.next_byte()) {
        if (c == EOF) fail(file.path(), std::string("truncated header: no ") + field);
        if (std::isspace(c)) break;
        if (token.size() > 32) fail(file.path(), std::string("bad header: ") + field + " is too long");
        token += static_cast<char>(c);
    }
    if (token.empty()) fail(file.path(), std::string("bad header: no ") + field);
    return token;
}

std::uint64_t read_unsigned(input_file& file, const char* field, std::uint64_t max) {
    const std::string token = read_token(file, field);
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (error != std::errc{} || end != token.data() + token.size())
        fail(file.path(), std::string("bad header: ") + field + " '" + token + "' is not a whole number");
    if (value > max)
        fail(file.path(), std::string("bad header: ") + field + " " + token + " is larger than " + std::to_string(max));
    return value;
}

struct netpbm_size {
    std::uint64_t width;
    std::uint64_t height;
};

netpbm_size read_size(input_file& file) {
    // Sides up to 2^40: any real image, and width * height * 12 bytes cannot overflow.
    constexpr std::uint64_t max_side = std::uint64_t{1} << 40;
    const std::uint64_t width = read_unsigned(file, "width", max_side);
    const std::uint64_t height = read_unsigned(file, "height", max_side);
    if (width == 0 || height == 0) fail(file.path(), "declares an empty " + size_text(width, height) + " image");
    return {width, height};
}

// Fails before any allocation when the file is shorter than the samples its header declares.
void require_samples(input_file& file, const netpbm_size& size, std::uint64_t bytes_per_pixel) {
    const std::uint64_t needed = checked_pixel_bytes(file.path(), size.width, size.height, bytes_per_pixel);
    if (needed > file.remaining())
        fail(file.path(), "truncated: a " + size_text(size.width, size.height) + " image needs " +
                              std::to_string(needed) + " bytes of samples, the file holds " +
                              std::to_string(file.remaining()));
}

template <class T>
void check_maxval(const std::string& path, host_view<const T> image, std::uint64_t maxval) {
    for (std::int64_t y = 0; y < image.height(); ++y) {
        const T* row = image.row(y);
        const auto largest = *std::max_element(row, row + image.width());
        if (largest > maxval)
            fail(path, "corrupt: sample value " + std::to_string(largest) + " in row " + std::to_string(y) +
                           " exceeds the declared maxval " + std::to_string(maxval));
    }
}

template <class T>
host_image<T> read_pgm_samples(input_file& file, const netpbm_size& size, std::uint64_t maxval) {
    require_samples(file, size, sizeof(T));
    host_image<T> image(static_cast<std::int64_t>(size.width), static_cast<std::int64_t>(size.height));
    const std::uint64_t count = size.width * size.height;
    file.read_exact(image.data(), count * sizeof(T), "the PGM samples");
    swap_to_native(image.data(), count, std::endian::big);
    if (maxval < std::numeric_limits<T>::max()) check_maxval<T>(file.path(), image.view(), maxval);
    return image;
}

template <class T>
host_image<T> read_ppm_as_grey(input_file& file, const netpbm_size& size) {
    require_samples(file, size, 3 * sizeof(T));
    host_image<T> image(static_cast<std::int64_t>(size.width), static_cast<std::int64_t>(size.height));
    std::vector<T> rgb(size.width * 3);
    for (std::int64_t y = 0; y < image.height(); ++y) {
        file.read_exact(rgb.data(), rgb.size() * sizeof(T), "the PPM samples");
        swap_to_native(rgb.data(), rgb.size(), std::endian::big);
        T* row = image.view().row(y);
        for (std::uint64_t x = 0; x < size.width; ++x) row[x] = luma(rgb[3 * x], rgb[3 * x + 1], rgb[3 * x + 2]);
    }
    return image;
}

any_host_image read_pgm(input_file& file) {
    const netpbm_size size = read_size(file);
    const std::uint64_t maxval = read_unsigned(file, "maxval", 65535);
    if (maxval == 0) fail(file.path(), "bad header: maxval must be 1..65535, got 0");
    if (maxval < 256) return read_pgm_samples<std::uint8_t>(file, size, maxval);
    return read_pgm_samples<std::uint16_t>(file, size, maxval);
}

any_host_image read_ppm(input_file& file, const read_options& options) {
    if (!options.to_grey) fail(file.path(), needs_grey_conversion("colour (PPM)"));
    const netpbm_size size = read_size(file);
    const std::uint64_t maxval = read_unsigned(file, "maxval", 65535);
    if (maxval == 0) fail(file.path(), "bad header: maxval must be 1..65535, got 0");
    if (maxval < 256) return read_ppm_as_grey<std::uint8_t>(file, size);
    return read_ppm_as_grey<std::uint16_t>(file, size);
}

any_host_image read_pfm(input_file& file, const read_options& options, bool colour) {
    if (colour && !options.to_grey) fail(file.path(), needs_grey_conversion("colour (PF) PFM"));
    const netpbm_size size = read_size(file);
    const std::string scale_token = read_token(file, "scale");
    double scale = 0;
    const auto [end, error] = std::from_chars(scale_token.data(), scale_token.data() + scale_token.size(), scale);
    if (error != std::errc{} || end != scale_token.data() + scale_token.size() || scale == 0 || !std::isfinite(scale))
        fail(file.path(), "bad header: PFM scale '" + scale_token + "' must be a non-zero number");
    const std::endian order = scale < 0 ? std::endian::little : std::endian::big;

    const std::uint64_t channels = colour ? 3 : 1;
    require_samples(file, size, channels * sizeof(float));
    host_image<float> image(static_cast<std::int64_t>(size.width), static_cast<std::int64_t>(size.height));
    std::vector<float> samples(colour ? size.width * channels : 0);
    for (std::int64_t y = image.height() - 1; y >= 0; --y) {  // bottom row first
        float* row = image.view().row(y);
        float* destination = colour ? samples.data() : row;
        file.read_exact(destination, size.width * channels * sizeof(float), "the PFM samples");
        swap_to_native(destination, size.width * channels, order);
        if (colour)
            for (std::uint64_t x = 0; x < size.width; ++x)
                row[x] = luma(samples[3 * x], samples[3 * x + 1], samples[3 * x + 2]);
    }
    return image;
}

}  // namespace

any_host_image read_netpbm(const std::string& path, const read_options& options) {
    input_file file(path);
    char magic[2] = {};
    if (std::fread(magic, 1, 2, file.handle()) != 2 || magic[0] != 'P')
        fail(path, "not a Netpbm file (no P5, P6, Pf or PF magic number)");
    switch (magic[1]) {
    case '5': return read_pgm(file);
    case '6': return read_ppm(file, options);
    case 'f': return read_pfm(file, options, false);
    case 'F': return read_pfm(file, options, true);
    case '1':
    case '2':
    case '3':
    case '4':
        fail(path, std::string("Netpbm type P") + magic[1] +
                       " is not supported; granula reads binary PGM (P5), PPM (P6) and PFM (Pf, PF)");
    default: fail(path, "not a Netpbm file (no P5, P6, Pf or PF magic number)");
    }
}

void write_pgm(const std::string& path, const any_host_view& image) {
    require_non_empty(path, image, "PGM");
    output_file file(path);
    const int maxval = image.type == pixel_type::uint8 ? 255 : 65535;
    const std::string header = "P5\n" + std::to_string(image.width) + " " + std::to_string(image.height) + "\n" +
                               std::to_string(maxval) + "\n";
    file.write(header.data(), header.size());
    if (image.type == pixel_type::uint8)
        write_samples(file, image.as<const std::uint8_t>(), std::endian::big, row_order::top_down);
    else
        write_samples(file, image.as<const std::uint16_t>(), std::endian::big, row_order::top_down);
    file.commit();
}

void write_pfm(const std::string& path, const any_host_view& image) {
    require_non_empty(path, image, "PFM");
    output_file file(path);
    const std::string header = "Pf\n" + std::to_string(image.width) + " " + std::to_string(image.height) + "\n-1.0\n";
    file.write(header.data(), header.size());
    write_samples(file, image.as<const float>(), std::endian::little, row_order::bottom_up);  // scale -1: little-endian
    file.commit();
}

}  // namespace granula::io::detail
