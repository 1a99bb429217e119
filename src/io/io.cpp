// Front of granula::io: picks the format from the file extension, calls its reader or writer,
// and turns every failure -- out of memory for a huge image included -- into an io_error that
// names the file. The shared file plumbing of io_internal.hpp lives here too.
#include "granula/io/io.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <filesystem>
#include <limits>
#include <new>
#include <system_error>
#include <utility>

#include "io/io_internal.hpp"

namespace granula::io {
namespace detail {

void fail(const std::string& path, const std::string& reason) { throw io_error(path + ": " + reason); }

std::string size_text(std::uint64_t width, std::uint64_t height) {
    return std::to_string(width) + "x" + std::to_string(height);
}

std::uint64_t checked_pixel_bytes(const std::string& path, std::uint64_t width, std::uint64_t height,
                                  std::uint64_t bytes_per_pixel) {
    const auto bytes = static_cast<unsigned __int128>(width) * height * bytes_per_pixel;
    if (bytes > static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()))
        fail(path, "declared image size " + size_text(width, height) + " is too large");
    return static_cast<std::uint64_t>(bytes);
}

namespace {

std::string system_reason() { return std::generic_category().message(errno); }

void require_not_directory(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail(path, "is a directory, not an image file");
}

}  // namespace

std::uint64_t probe_readable_file(const std::string& path) { return input_file(path).size(); }

input_file::input_file(std::string path) : path_(std::move(path)) {
    require_not_directory(path_);
    file_ = std::fopen(path_.c_str(), "rb");
    if (!file_) fail(path_, "cannot open: " + system_reason());
    std::error_code ec;
    size_ = std::filesystem::file_size(path_, ec);
    if (ec) {
        std::fclose(file_);
        fail(path_, "cannot determine the file size: " + ec.message());
    }
}

input_file::~input_file() { std::fclose(file_); }

std::uint64_t input_file::remaining() const {
    const auto position = static_cast<std::uint64_t>(std::max<long long>(0, ftello(file_)));
    return position < size_ ? size_ - position : 0;
}

void input_file::read_exact(void* destination, std::uint64_t bytes, const char* what) {
    const std::uint64_t available = remaining();
    const std::size_t got = std::fread(destination, 1, bytes, file_);
    if (got != bytes) {
        if (std::ferror(file_)) fail(path_, std::string("read error in ") + what + ": " + system_reason());
        fail(path_, std::string("truncated: ") + what + " needs " + std::to_string(bytes) + " bytes, the file holds " +
                        std::to_string(std::min<std::uint64_t>(available, got)));
    }
}

partial_output_remover::~partial_output_remover() {
    if (!committed_) std::remove(path_.c_str());
}

output_file::output_file(std::string path) : path_(std::move(path)) {
    require_not_directory(path_);
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) fail(path_, "cannot create: " + system_reason());
}

output_file::~output_file() {
    if (file_) {
        std::fclose(file_);
        std::remove(path_.c_str());
    }
}

void output_file::write(const void* data, std::uint64_t bytes) {
    if (bytes == 0) return;  // an empty row of an empty image may have no buffer at all
    if (std::fwrite(data, 1, bytes, file_) != bytes) fail(path_, "write failed: " + system_reason());
}

void output_file::commit() {
    std::FILE* file = std::exchange(file_, nullptr);
    const bool failed = std::ferror(file) != 0;
    if (std::fclose(file) != 0 || failed) {
        const std::string reason = system_reason();
        std::remove(path_.c_str());
        fail(path_, "write failed: " + reason);
    }
}

void require_non_empty(const std::string& path, const any_host_view& image, const char* format) {
    if (image.width == 0 || image.height == 0)
        fail(path, std::string("cannot write an empty (") + size_text(image.width, image.height) + ") image as " +
                       format);
}

std::string needs_grey_conversion(const std::string& layout) {
    return "is a " + layout +
           " image; granula processes grey images: ask for conversion to grey (BT.601 luma) with "
           "read_options::to_grey (CLI --to-grey, Python to_grey=True)";
}

namespace {
// Byte b with its bit order reversed (bit 7 <-> bit 0, ...).
constexpr std::array<std::uint8_t, 256> reversed_bytes = [] {
    std::array<std::uint8_t, 256> table{};
    for (unsigned b = 0; b < 256; ++b) {
        unsigned r = 0;
        for (int k = 0; k < 8; ++k) r |= ((b >> k) & 1u) << (7 - k);
        table[b] = static_cast<std::uint8_t>(r);
    }
    return table;
}();
}  // namespace

void bits_from_msb_first(const std::uint8_t* bytes, std::uint64_t row_bytes, bool invert, host_bit_view out) {
    const std::int64_t width = out.width(), words = out.row_words();
    const std::int64_t tail = width % bits_per_word;
    const bit_word last_mask = tail ? (bit_word{1} << tail) - 1 : ~bit_word{0};
    for (std::int64_t y = 0; y < out.height(); ++y) {
        const std::uint8_t* in = bytes + static_cast<std::uint64_t>(y) * row_bytes;
        bit_word* row = out.row(y);
        for (std::int64_t w = 0; w < words; ++w) {
            bit_word word = 0;
            const std::int64_t first = w * 8, count = std::min<std::int64_t>(8, static_cast<std::int64_t>(row_bytes) - first);
            for (std::int64_t k = 0; k < count; ++k) word |= bit_word{reversed_bytes[in[first + k]]} << (8 * k);
            if (invert) word = ~word;
            row[w] = w + 1 == words ? word & last_mask : word;
        }
    }
}

void msb_first_row(const_host_bit_view bits, std::int64_t y, std::uint8_t* row) {
    const std::int64_t width = bits.width(), bytes = (width + 7) / 8;
    const bit_word* words = bits.row(y);
    for (std::int64_t b = 0; b < bytes; ++b) {
        std::uint8_t byte = static_cast<std::uint8_t>(words[b / 8] >> (8 * (b % 8)));
        if (8 * (b + 1) > width) byte &= static_cast<std::uint8_t>((1u << (width - 8 * b)) - 1);  // bits past the width
        row[b] = reversed_bytes[byte];
    }
}

}  // namespace detail

namespace {

enum class file_format { png, tiff, pgm, ppm, pfm, npy };

constexpr const char* known_extensions = ".png, .tif, .tiff, .pgm, .pnm, .ppm (read only), .pfm, .npy";

file_format format_of(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == ".png") return file_format::png;
    if (ext == ".tif" || ext == ".tiff") return file_format::tiff;
    if (ext == ".pgm" || ext == ".pnm") return file_format::pgm;
    if (ext == ".ppm") return file_format::ppm;
    if (ext == ".pfm") return file_format::pfm;
    if (ext == ".npy") return file_format::npy;
    detail::fail(path, (ext.empty() ? std::string("has no file extension") : "unknown file extension '" + ext + "'") +
                           "; the format is chosen by extension: " + known_extensions);
}

// Runs a reader or writer, turning what the core throws for impossible sizes and running out of
// memory into io_error naming the file.
template <class F>
decltype(auto) naming_the_file(const std::string& path, F&& f) {
    try {
        return f();
    } catch (const io_error&) {
        throw;
    } catch (const std::bad_alloc&) {
        detail::fail(path, "not enough memory for the image it declares");
    } catch (const granula::invalid_argument& e) {
        detail::fail(path, e.what());
    }
}

}  // namespace

any_host_image read_image(const std::string& path, const read_options& options) {
    const file_format format = format_of(path);
    return naming_the_file(path, [&] {
        switch (format) {
        case file_format::png: return detail::read_png(path, options);
        case file_format::tiff: return detail::read_tiff(path, options);
        case file_format::pgm:
        case file_format::ppm:
        case file_format::pfm: return detail::read_netpbm(path, options);
        case file_format::npy: return detail::read_npy(path);
        }
        detail::fail(path, "unreachable file format");
    });
}

void check_write_format(const std::string& path, pixel_type type) {
    const std::string name(to_string(type));
    switch (format_of(path)) {
    case file_format::png:
        if (type == pixel_type::float32) detail::fail(path, "PNG cannot hold float32 pixels; write them as .tif, .pfm or .npy");
        return;
    case file_format::pgm:
        if (type == pixel_type::float32)
            detail::fail(path, "PGM holds 8- and 16-bit integers; write float32 pixels as .pfm, .tif or .npy");
        return;
    case file_format::ppm: detail::fail(path, "granula writes grey images: use .pgm, not .ppm");
    case file_format::pfm:
        if (type != pixel_type::float32)
            detail::fail(path, "PFM holds float32 pixels; write " + name + " pixels as .png, .pgm, .tif or .npy");
        return;
    case file_format::tiff:
        if (!tiff_supported()) detail::fail(path, "cannot write TIFF: this granula was built without TIFF support (libtiff)");
        return;
    case file_format::npy: return;
    }
}

void write_labels(const std::string& path, host_view<const std::int32_t> labels) {
    if (format_of(path) != file_format::npy) detail::fail(path, "label images are written as .npy (int32)");
    naming_the_file(path, [&] { detail::write_npy_labels(path, labels); });
}

void write_labels(const std::string& path, host_view<const std::int64_t> labels) {
    if (format_of(path) != file_format::npy)
        detail::fail(path, "int64 label images are written as .npy; no image format holds 64-bit labels");
    naming_the_file(path, [&] { detail::write_npy_labels(path, labels); });
}

void write_rgb_png(const std::string& path, host_view<const std::uint8_t> rgb) {
    if (format_of(path) != file_format::png) detail::fail(path, "colour images are written as .png");
    naming_the_file(path, [&] { detail::write_rgb_png(path, rgb); });
}

host_bit_image read_bits(const std::string& path) {
    const file_format format = format_of(path);
    return naming_the_file(path, [&] {
        if (format == file_format::png) return detail::read_png_bits(path);
        if (format == file_format::tiff) return detail::read_tiff_bits(path);
        detail::fail(path, "read_bits reads 1-bit PNG and TIFF files; read this one with read_image and pack it");
    });
}

void write_bits(const std::string& path, const_host_bit_view bits) {
    const file_format format = format_of(path);
    naming_the_file(path, [&] {
        if (bits.empty()) detail::fail(path, "cannot write an empty " + detail::size_text(bits.width(), bits.height()) + " bit image");
        if (format == file_format::png) return detail::write_png_bits(path, bits);
        if (format == file_format::tiff) return detail::write_tiff_bits(path, bits);
        detail::fail(path, "write_bits writes 1-bit .png and .tif files; unpack the bits to write other formats");
    });
}

void write_image(const std::string& path, const any_host_view& image) {
    check_write_format(path, image.type);
    const file_format format = format_of(path);
    naming_the_file(path, [&] {
        switch (format) {
        case file_format::png: return detail::write_png(path, image);
        case file_format::tiff: return detail::write_tiff(path, image);
        case file_format::pgm: return detail::write_pgm(path, image);
        case file_format::ppm: return;  // refused by check_write_format()
        case file_format::pfm: return detail::write_pfm(path, image);
        case file_format::npy: return detail::write_npy(path, image);
        }
    });
}

}  // namespace granula::io
