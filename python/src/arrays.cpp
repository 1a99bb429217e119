#include "arrays.hpp"

#include <bit>
#include <charconv>
#include <optional>
#include <type_traits>
#include <vector>

#include "granula/core/error.hpp"

namespace nb = nanobind;

namespace granula::python {
namespace {

// The dtype names numpy uses, for messages ("float64", "int32", "bool", ...).
std::string dtype_name(char kind, std::int64_t bytes) {
    switch (kind) {
    case 'u': return "uint" + std::to_string(8 * bytes);
    case 'i': return "int" + std::to_string(8 * bytes);
    case 'f': return "float" + std::to_string(8 * bytes);
    case 'c': return "complex" + std::to_string(8 * bytes);
    case 'b': return "bool";
    default: return std::string("'") + kind + std::to_string(bytes) + "'";
    }
}

// numpy's kind character of a pixel type: 'u' unsigned, 'i' signed, 'f' floating point.
template <class T>
constexpr char kind_of() {
    return std::is_floating_point_v<T> ? 'f' : std::is_signed_v<T> ? 'i' : 'u';
}

std::optional<pixel_type> find_pixel_type(char kind, std::int64_t bytes) {
#define GRANULA_MATCH(ctype, pname) \
    if (kind == kind_of<ctype>() && bytes == static_cast<std::int64_t>(sizeof(ctype))) return pixel_type::pname;
    GRANULA_FOR_EACH_PIXEL_TYPE(GRANULA_MATCH)
#undef GRANULA_MATCH
    return std::nullopt;
}

// The dtypes an import of `accepted` elements takes, for messages.
std::string accepted_names(accepted_elements accepted) {
    return accepted == accepted_elements::label_input ? "bool, uint8, uint16, uint32" : pixel_type_names();
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

// What every layout error message ends with.
std::string layout_rule() {
    return "granula takes 2-D (rows, cols) arrays with contiguous columns (strides[1] == itemsize) and "
           "rows at a positive stride that is a multiple of the itemsize, without copying; make a copy with "
           "numpy.ascontiguousarray / cupy.ascontiguousarray if needed";
}

// The layout as read from the object, before validation. Strides are in bytes.
struct raw_array {
    bool on_device = false;
    int device_id = -1;
    char kind = 0;
    std::int64_t itemsize = 0;
    std::string dtype;  // the name used in messages
    std::vector<std::int64_t> shape;
    std::vector<std::int64_t> byte_strides;  // empty: C-contiguous
    void* data = nullptr;
    bool readonly = false;  // known for __cuda_array_interface__; DLPack imports check it themselves
};

[[noreturn]] void reject(std::string_view role, const std::string& what) {
    throw invalid_argument(std::string(role) + " " + what);
}

// Python's str(obj).
std::string text(nb::handle obj) { return nb::steal<nb::str>(PyObject_Str(obj.ptr())).c_str(); }

// "numpy.ndarray", "list".
std::string object_type_name(nb::handle obj) {
    const std::string module = text(obj.type().attr("__module__")), name = text(obj.type().attr("__qualname__"));
    return module == "builtins" ? name : module + "." + name;
}

// __cuda_array_interface__ (versions 0-3): a dict with shape, typestr, data = (ptr, readonly),
// strides (bytes, or None when C-contiguous), and optionally mask (unsupported).
raw_array read_cuda_array_interface(nb::handle obj, std::string_view role) {
    const auto malformed = [&](const std::string& why) {
        reject(role, "has a malformed __cuda_array_interface__ (" + why + ")");
    };
    nb::object iface = obj.attr("__cuda_array_interface__");
    if (!nb::isinstance<nb::dict>(iface)) malformed("not a dict");
    nb::dict d = nb::borrow<nb::dict>(iface);
    if (!d.contains("shape") || !d.contains("typestr") || !d.contains("data")) malformed("no shape, typestr or data");
    if (d.contains("mask") && !d["mask"].is_none()) reject(role, "is a masked CUDA array; granula takes no masks");

    raw_array a;
    a.on_device = true;
    try {
        for (nb::handle extent : nb::object(d["shape"])) a.shape.push_back(nb::cast<std::int64_t>(extent));
        const auto typestr = nb::cast<std::string>(d["typestr"]);
        std::int64_t bytes = 0;
        const char* end = typestr.data() + typestr.size();
        if (typestr.size() < 3 || std::from_chars(typestr.data() + 2, end, bytes).ptr != end || bytes < 1)
            malformed("typestr '" + typestr + "'");
        a.kind = typestr[1];
        a.itemsize = bytes;
        a.dtype = dtype_name(a.kind, a.itemsize);
        const char foreign_order = std::endian::native == std::endian::little ? '>' : '<';
        if (typestr[0] == foreign_order && a.itemsize > 1) {
            a.dtype = "'" + typestr + "' (non-native byte order)";
            a.kind = '?';
        }
        nb::object data = d["data"];
        a.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(data[0]));
        a.readonly = nb::cast<bool>(data[1]);
        if (d.contains("strides") && !d["strides"].is_none())
            for (nb::handle s : nb::object(d["strides"])) a.byte_strides.push_back(nb::cast<std::int64_t>(s));
    } catch (const nb::cast_error&) {
        malformed("shape, strides and data must hold integers, typestr a string");
    } catch (const nb::python_error&) {  // not iterable or not indexable
        malformed("shape and strides must be tuples, data a (pointer, read-only) pair");
    }
    if (!a.byte_strides.empty() && a.byte_strides.size() != a.shape.size()) malformed("strides do not match shape");
    return a;
}

// DLPack device types (dlpack.h): the host-accessible and the CUDA-accessible ones.
constexpr int dl_cpu = 1, dl_cuda = 2, dl_cuda_host = 3, dl_cuda_managed = 13;

raw_array read_dlpack(const nb::ndarray<nb::ro>& t) {
    raw_array a;
    const int device = t.device_type();
    a.on_device = device == dl_cuda || device == dl_cuda_managed;
    a.device_id = t.device_id();
    if (!a.on_device && device != dl_cpu && device != dl_cuda_host)
        throw invalid_argument("arrays on DLPack device type " + std::to_string(device) +
                               " are not supported; granula takes host (CPU) and CUDA arrays");
    const nb::dlpack::dtype dt = t.dtype();
    using code = nb::dlpack::dtype_code;
    a.kind = dt.code == static_cast<std::uint8_t>(code::UInt)    ? 'u'
             : dt.code == static_cast<std::uint8_t>(code::Int)   ? 'i'
             : dt.code == static_cast<std::uint8_t>(code::Float) ? 'f'
             : dt.code == static_cast<std::uint8_t>(code::Bool)  ? 'b'
             : dt.code == static_cast<std::uint8_t>(code::Complex) ? 'c'
                                                                   : '?';
    a.itemsize = static_cast<std::int64_t>(t.itemsize());
    a.dtype = dt.lanes != 1 ? "a vector dtype" : dtype_name(a.kind, a.itemsize);
    if (dt.lanes != 1) a.kind = '?';
    for (std::size_t i = 0; i < t.ndim(); ++i) {
        a.shape.push_back(static_cast<std::int64_t>(t.shape(i)));
        a.byte_strides.push_back(t.stride(i) * a.itemsize);
    }
    a.data = static_cast<char*>(const_cast<void*>(t.data_handle())) + t.byte_offset();
    return a;
}

image_arg validate(const raw_array& a, std::string_view role, accepted_elements accepted) {
    image_arg img;
    img.on_device = a.on_device;
    img.device_id = a.device_id;
    const std::string where = a.on_device ? "CUDA array" : "host array";
    if (a.shape.size() != 2)
        reject(role, "must be a 2-D array (rows, cols); got a " + std::to_string(a.shape.size()) + "-D " + where +
                         " of shape " + shape_text(a.shape));
    const auto type = find_pixel_type(a.kind, a.itemsize);
    // label_input takes uint8, uint16 and uint32: float32 is a pixel type it refuses, uint32 no
    // pixel type at all (bool arrives as uint8 from granula.label).
    const bool allowed = accepted == accepted_elements::label_input
                             ? a.kind == 'u' && (a.itemsize == 1 || a.itemsize == 2 || a.itemsize == 4)
                             : type.has_value();
    if (!allowed)
        reject(role, "has dtype " + a.dtype + "; allowed: " + accepted_names(accepted) +
                         " (granula converts no types: use .astype() where you mean to)");
    img.uint32 = !type;  // label_input's uint32, the one allowed dtype that is no pixel type
    if (type) img.type = *type;
    img.height = a.shape[0];
    img.width = a.shape[1];
    if (img.height == 0 || img.width == 0)
        reject(role, "is empty (shape " + shape_text(a.shape) + "); granula needs at least one pixel");

    const std::int64_t size = a.itemsize;
    std::int64_t row_bytes = img.width * size, col_bytes = size;
    if (!a.byte_strides.empty()) {
        row_bytes = a.byte_strides[0];
        col_bytes = a.byte_strides[1];
    }
    const std::string strides = "(" + std::to_string(row_bytes) + ", " + std::to_string(col_bytes) + ") bytes";
    // A single column or row has no column or row step to speak of.
    if (img.width > 1 && col_bytes != size)
        reject(role, "has non-contiguous columns (shape " + shape_text(a.shape) + ", strides " + strides + "); " +
                         layout_rule());
    if (img.height > 1 && (row_bytes < img.width * size || row_bytes % size != 0))
        reject(role, "has an unsupported row stride (shape " + shape_text(a.shape) + ", strides " + strides +
                         "); " + layout_rule());
    img.stride = img.height > 1 ? row_bytes / size : img.width;
    img.data = a.data;
    return img;
}

}  // namespace

std::string_view image_arg::dtype_name() const { return uint32 ? "uint32" : to_string(type); }

std::string image_arg::describe() const {
    return std::string(dtype_name()) + " array of shape (" + std::to_string(height) + ", " +
           std::to_string(width) + ") " + (on_device ? "on a CUDA device" : "in host memory");
}

image_arg import_image(nb::handle obj, std::string_view role, bool writable, accepted_elements accepted) {
    if (nb::hasattr(obj, "__cuda_array_interface__")) {
        const raw_array a = read_cuda_array_interface(obj, role);
        if (writable && a.readonly) reject(role, "is a read-only CUDA array");
        return validate(a, role, accepted);
    }
    // An import that asks for writable memory refuses a read-only array: for `out`, try that
    // first, and a read-only import after it only to say why the array was refused.
    nb::ndarray<> mutable_array;
    nb::ndarray<nb::ro> array;
    if (writable && nb::try_cast(obj, mutable_array, false)) {
        array = nb::ndarray<nb::ro>(mutable_array);
    } else if (nb::try_cast(obj, array, false)) {
        if (writable) reject(role, "is read-only");
    } else {
        const std::string what = std::string(role) +
                                 " must be a numpy array or a CUDA array (CuPy, or any object with __dlpack__ or "
                                 "__cuda_array_interface__); got " + object_type_name(obj);
        if (!nb::hasattr(obj, "dtype")) throw nb::type_error(what.c_str());
        std::string layout = "dtype " + text(obj.attr("dtype"));
        for (const char* attribute : {"shape", "strides"})
            if (nb::hasattr(obj, attribute))
                layout += std::string(", ") + attribute + " " + text(obj.attr(attribute));
        reject(role, "is a " + object_type_name(obj) + " (" + layout +
                         ") that granula cannot read without a copy; allowed dtypes: " + accepted_names(accepted) +
                         "; " + layout_rule());
    }
    image_arg img = validate(read_dlpack(array), role, accepted);
    img.dlpack = std::move(array);
    return img;
}

}  // namespace granula::python
