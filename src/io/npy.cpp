// NumPy .npy files (format versions 1, 2 and 3): 2-D arrays in C order of dtype uint8 ('|u1'),
// uint16 ('<u2', '>u2'), float32 ('<f4', '>f4') and bool ('|b1', read as uint8 0/1). Anything
// else -- Fortran order, other dtypes, other dimensions -- fails with what to do instead.
// Empty arrays are valid here, unlike in the image formats. Written files are version 1.0,
// little-endian, with the header padded to 64 bytes as numpy writes it.
#include <array>
#include <string_view>
#include <vector>

#include "io/io_internal.hpp"

namespace granula::io::detail {
namespace {

constexpr std::string_view npy_magic{"\x93NUMPY", 6};
constexpr std::uint32_t max_header_bytes = 1 << 20;  // numpy's own headers are under 200 bytes

struct npy_header {
    std::string descr;
    bool fortran_order = false;
    std::vector<std::uint64_t> shape;
};

// Just enough of Python's literal syntax for the header dictionary numpy writes.
class header_parser {
public:
    header_parser(const std::string& path, std::string_view text) : path_(path), text_(text) {}

    npy_header parse() {
        npy_header header;
        bool has_descr = false, has_order = false, has_shape = false;
        expect('{');
        while (!consume('}')) {
            const std::string key = parse_string();
            expect(':');
            if (key == "descr") {
                skip_space();
                if (pos_ < text_.size() && text_[pos_] == '[')
                    fail(path_, "NPY array has a structured dtype; granula reads plain uint8, uint16, float32 or "
                                "bool arrays");
                header.descr = parse_string();
                has_descr = true;
            } else if (key == "fortran_order") {
                header.fortran_order = parse_bool();
                has_order = true;
            } else if (key == "shape") {
                header.shape = parse_shape();
                has_shape = true;
            } else {
                bad("unexpected key '" + key + "'");
            }
            if (!consume(',')) {
                expect('}');
                break;
            }
        }
        if (!has_descr || !has_order || !has_shape) bad("'descr', 'fortran_order' or 'shape' is missing");
        return header;
    }

private:
    [[noreturn]] void bad(const std::string& what) const { fail(path_, "corrupt NPY header: " + what); }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
    }
    bool consume(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!consume(c)) bad(std::string("expected '") + c + "'");
    }
    std::string parse_string() {
        skip_space();
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) bad("expected a quoted string");
        const char quote = text_[pos_++];
        const std::size_t end = text_.find(quote, pos_);
        if (end == std::string_view::npos) bad("unterminated string");
        std::string value(text_.substr(pos_, end - pos_));
        pos_ = end + 1;
        return value;
    }
    bool parse_bool() {
        skip_space();
        for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {"False", false}}) {
            if (text_.substr(pos_, word.size()) == word) {
                pos_ += word.size();
                return value;
            }
        }
        bad("fortran_order must be True or False");
    }
    std::vector<std::uint64_t> parse_shape() {
        expect('(');
        std::vector<std::uint64_t> shape;
        while (!consume(')')) {
            skip_space();
            std::uint64_t value = 0;
            std::size_t digits = 0;
            for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_, ++digits) {
                if (value > (std::uint64_t{1} << 59)) bad("a dimension is too large");
                value = value * 10 + static_cast<std::uint64_t>(text_[pos_] - '0');
            }
            if (digits == 0) bad("shape must be a tuple of whole numbers");
            shape.push_back(value);
            if (!consume(',')) {
                expect(')');
                break;
            }
        }
        return shape;
    }

    const std::string& path_;
    std::string_view text_;
    std::size_t pos_ = 0;
};

struct npy_dtype {
    pixel_type type;
    std::endian order;
    bool boolean;
};

npy_dtype parse_dtype(const std::string& path, const std::string& descr) {
    if (descr == "|u1" || descr == "<u1" || descr == ">u1") return {pixel_type::uint8, std::endian::native, false};
    if (descr == "|b1") return {pixel_type::uint8, std::endian::native, true};
    if (descr == "<u2") return {pixel_type::uint16, std::endian::little, false};
    if (descr == ">u2") return {pixel_type::uint16, std::endian::big, false};
    if (descr == "<f4") return {pixel_type::float32, std::endian::little, false};
    if (descr == ">f4") return {pixel_type::float32, std::endian::big, false};
    fail(path, "NPY dtype '" + descr +
                   "' is not supported; granula reads uint8 ('|u1'), uint16 ('<u2'), float32 ('<f4') and bool "
                   "('|b1') arrays -- convert with numpy's astype()");
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + (shape.size() == 1 ? ",)" : ")");
}

std::uint32_t little_endian_u32(const unsigned char* bytes, int count) {
    std::uint32_t value = 0;
    for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
    return value;
}

}  // namespace

any_host_image read_npy(const std::string& path) {
    input_file file(path);
    std::array<unsigned char, 8> preamble{};  // magic, major, minor
    const bool has_magic =
        std::fread(preamble.data(), 1, preamble.size(), file.handle()) == preamble.size() &&
        std::string_view(reinterpret_cast<const char*>(preamble.data()), npy_magic.size()) == npy_magic;
    if (!has_magic) fail(path, "not an NPY file (bad magic string)");
    const int major = preamble[6];
    if (major < 1 || major > 3)
        fail(path, "NPY format version " + std::to_string(major) + " is not supported (1, 2 and 3 are)");

    const int length_bytes = major == 1 ? 2 : 4;
    unsigned char length_field[4] = {};
    file.read_exact(length_field, length_bytes, "the NPY header length");
    const std::uint32_t header_bytes = little_endian_u32(length_field, length_bytes);
    if (header_bytes > max_header_bytes || header_bytes > file.remaining())
        fail(path, "corrupt NPY header: it claims " + std::to_string(header_bytes) + " bytes");
    std::string text(header_bytes, '\0');
    file.read_exact(text.data(), header_bytes, "the NPY header");

    const npy_header header = header_parser(path, text).parse();
    const npy_dtype dtype = parse_dtype(path, header.descr);
    if (header.shape.size() != 2)
        fail(path, "NPY array has shape " + shape_text(header.shape) +
                       "; granula reads 2-D arrays (height, width) -- select a channel or plane first");
    if (header.fortran_order)
        fail(path, "NPY array is in Fortran (column-major) order; save it in C order "
                   "(numpy.ascontiguousarray) first");

    const std::uint64_t height = header.shape[0], width = header.shape[1];
    const std::uint64_t data_bytes = checked_pixel_bytes(path, width, height, size_of(dtype.type));
    if (data_bytes > file.remaining())
        fail(path, "truncated: a " + shape_text(header.shape) + " array needs " + std::to_string(data_bytes) +
                       " bytes of data, the file holds " + std::to_string(file.remaining()));

    any_host_image image = make_host_image(dtype.type, static_cast<std::int64_t>(width), static_cast<std::int64_t>(height));
    if (data_bytes > 0) file.read_exact(image.view().data, data_bytes, "the NPY data");
    visit_pixel_type(dtype.type, [&]<class T>(type_tag<T>) {
        swap_to_native(static_cast<T*>(image.view().data), width * height, dtype.order);
    });
    if (dtype.boolean) {
        auto* values = static_cast<std::uint8_t*>(image.view().data);
        for (std::uint64_t i = 0; i < width * height; ++i) values[i] = values[i] != 0;
    }
    return image;
}

namespace {
// Writes the NPY header for a height x width array of `descr`, then the samples by `samples`.
template <class WriteSamples>
void write_npy_array(const std::string& path, const char* descr, std::int64_t width, std::int64_t height,
                     WriteSamples&& samples) {
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
                         std::to_string(height) + ", " + std::to_string(width) + "), }";
    // magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64
    // and ended by a newline.
    const std::size_t unpadded = npy_magic.size() + 4 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header += '\n';

    output_file file(path);
    file.write(npy_magic.data(), npy_magic.size());
    const unsigned char version_and_length[4] = {1, 0, static_cast<unsigned char>(header.size() & 0xff),
                                                 static_cast<unsigned char>(header.size() >> 8)};
    file.write(version_and_length, sizeof version_and_length);
    file.write(header.data(), header.size());
    samples(file);
    file.commit();
}
}  // namespace

void write_npy(const std::string& path, const any_host_view& image) {
    const char* descr = image.type == pixel_type::uint8 ? "|u1" : image.type == pixel_type::uint16 ? "<u2" : "<f4";
    write_npy_array(path, descr, image.width, image.height, [&](output_file& file) {
        visit_pixel_type(image.type, [&]<class T>(type_tag<T>) {
            write_samples(file, image.as<const T>(), std::endian::little, row_order::top_down);
        });
    });
}

void write_npy_labels(const std::string& path, host_view<const std::int32_t> labels) {
    write_npy_array(path, "<i4", labels.width(), labels.height(), [&](output_file& file) {
        write_samples(file, labels, std::endian::little, row_order::top_down);
    });
}

void write_npy_labels(const std::string& path, host_view<const std::int64_t> labels) {
    write_npy_array(path, "<i8", labels.width(), labels.height(), [&](output_file& file) {
        write_samples(file, labels, std::endian::little, row_order::top_down);
    });
}

}  // namespace granula::io::detail
