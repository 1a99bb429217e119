// Front of granula::io: picks the format from the file extension, calls its reader or writer,
// and turns every failure -- out of memory for a huge image included -- into an io_error that
// names the file. The shared file plumbing of io_internal.hpp lives here too.
#include "granula/io/io.hpp"

#include <algorithm>
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

void write_rgb_png(const std::string& path, host_view<const std::uint8_t> rgb) {
    if (format_of(path) != file_format::png) detail::fail(path, "colour images are written as .png");
    naming_the_file(path, [&] { detail::write_rgb_png(path, rgb); });
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
