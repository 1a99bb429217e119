"""Every documented error of the Python API: a clear exception, never a crash or a silent copy."""

import numpy as np
import pytest

import granula
from granula import footprints

IMAGE = np.zeros((8, 9), dtype=np.uint8)


class FakeCudaArray:
    """An object that claims CUDA memory through __cuda_array_interface__ (never dereferenced
    by these tests: each one fails before any memory is touched)."""

    def __init__(self, shape=(8, 9), typestr="|u1", strides=None, readonly=False, ptr=0x10000):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (ptr, readonly),
            "strides": strides,
            "version": 3,
        }


@pytest.mark.parametrize(
    "dtype", [np.float64, np.float16, np.int8, np.int16, np.int32, np.uint32, np.int64, np.bool_, np.complex64]
)
def test_unsupported_dtypes(dtype):
    with pytest.raises(ValueError, match=r"dtype .*allowed: uint8, uint16, float32"):
        granula.erosion(np.zeros((4, 4), dtype=dtype))


@pytest.mark.parametrize("dtype", [">u2", ">f4"])
def test_non_native_byte_order(dtype):
    with pytest.raises(ValueError, match="allowed dtypes: uint8, uint16, float32"):
        granula.erosion(np.zeros((4, 4), dtype=dtype))


@pytest.mark.parametrize("shape", [(), (5,), (2, 3, 4), (1, 1, 1, 1)])
def test_not_two_dimensional(shape):
    with pytest.raises(ValueError, match=r"must be a 2-D array \(rows, cols\)"):
        granula.dilation(np.zeros(shape, dtype=np.uint8))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0)])
def test_empty(shape):
    with pytest.raises(ValueError, match="is empty .*at least one pixel"):
        granula.opening(np.zeros(shape, dtype=np.float32))


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a.T,  # columns not contiguous
        lambda a: np.asfortranarray(a),
        lambda a: a[:, ::2],
        lambda a: a[::-1],  # negative row stride
        lambda a: a[:, ::-1],
        lambda a: np.broadcast_to(a[:1], a.shape),  # row stride 0
        lambda a: np.lib.stride_tricks.as_strided(a, shape=(4, 6), strides=(3, 1)),  # rows overlap
    ],
    ids=["transposed", "fortran", "column-step", "negative-rows", "negative-columns", "broadcast", "overlapping-rows"],
)
def test_unsupported_layouts(make):
    image = make(np.zeros((6, 8), dtype=np.uint8))
    with pytest.raises(ValueError, match="contiguous columns .* without copying"):
        granula.erosion(image)


def test_row_stride_not_a_multiple_of_the_itemsize():
    raw = np.zeros(200, dtype=np.uint8)
    image = np.ndarray((4, 5), dtype=np.uint16, buffer=raw, offset=0, strides=(11, 2))
    with pytest.raises(ValueError, match=r"strides \(11, 2\).* without copying"):
        granula.erosion(image)


@pytest.mark.parametrize("value", [[[1, 2], [3, 4]], "image", 3.0, None])
def test_not_an_array(value):
    with pytest.raises(TypeError, match="must be a numpy array or a CUDA array"):
        granula.erosion(value)


@pytest.mark.parametrize("mode", ["bogus", "", "Reflect", "grid-wrap"])
def test_unknown_mode(mode):
    with pytest.raises(ValueError, match="ignore, constant, nearest, reflect, mirror, wrap"):
        granula.erosion(IMAGE, mode=mode)


def test_mode_of_wrong_type():
    with pytest.raises(TypeError):
        granula.erosion(IMAGE, mode=1)


@pytest.mark.parametrize(
    "dtype, cval", [(np.uint8, 256), (np.uint8, -1), (np.uint8, float("nan")), (np.uint16, 70000), (np.float32, 1e39)]
)
def test_cval_not_representable(dtype, cval):
    with pytest.raises(ValueError, match="cval .* not representable"):
        granula.erosion(np.zeros((3, 3), dtype=dtype), mode="constant", cval=cval)


@pytest.mark.parametrize(
    "footprint", ["hline:0", "hline:-3", "vline:", "rect:3", "rect:0x3", "square:x", "circle:5", "hline", ""]
)
def test_bad_footprint_text(footprint):
    with pytest.raises(ValueError, match="hline:L, vline:L, rect:WxH, square:N, line:L:ANGLE"):
        granula.erosion(IMAGE, footprint)


@pytest.mark.parametrize(
    "make", [lambda: footprints.hline(0), lambda: footprints.vline(-2), lambda: footprints.rectangle(0, 3),
             lambda: footprints.rectangle(3, 0), lambda: footprints.square(0)]
)
def test_footprint_sizes_below_one(make):
    with pytest.raises(ValueError, match="must be >= 1"):
        make()


@pytest.mark.parametrize(
    "mask, message",
    [
        (np.array([[1, 0, 2]]), "only 0 and 1"),
        (np.zeros((2, 3), dtype=bool), "no set pixel"),
        (np.ones((2, 2, 2), dtype=bool), "non-empty 2-D array"),
        (np.ones((0, 3), dtype=bool), "non-empty 2-D array"),
    ],
)
def test_bad_footprint_mask(mask, message):
    with pytest.raises(ValueError, match=message):
        granula.dilation(IMAGE, mask)


@pytest.mark.parametrize(
    "make", [lambda: granula.erosion(IMAGE, "disk:100000"), lambda: footprints.diamond(100000),
             lambda: footprints.ellipse(100000, 3000), lambda: footprints.line(100000000, 30).footprint()]
)
def test_footprints_too_large_for_a_mask(make):
    with pytest.raises(ValueError, match="too large for a footprint mask"):
        make()


def test_element_reaching_past_the_address_space_is_a_memory_error():
    # A periodic-line disk is applied to a copy padded by its reach: here about 364 TiB, which
    # no allocator gives (whatever the kernel's overcommit setting). The message says how much.
    with pytest.raises(MemoryError, match=r"out of memory: an image of .* GiB could not be allocated"):
        granula.erosion(IMAGE, "disk:10000000:4")


@pytest.mark.parametrize("footprint", [3, 2.5, ("hline", 3), [[1, 1]]])
def test_footprint_of_wrong_type(footprint):
    with pytest.raises(TypeError, match="footprint must be"):
        granula.dilation(IMAGE, footprint)


@pytest.mark.parametrize(
    "out, message",
    [
        (np.zeros((8, 8), dtype=np.uint8), r"out is a uint8 array of shape \(8, 8\)"),
        (np.zeros((8, 9), dtype=np.uint16), "out must have the image's shape, dtype and kind of memory"),
        (np.zeros((8, 9), dtype=np.float64), "out has dtype float64"),
        (np.zeros((9, 8), dtype=np.uint8).T, "non-contiguous columns"),
        (np.zeros((8, 9, 1), dtype=np.uint8), "out must be a 2-D array"),
        (FakeCudaArray(), "out is a uint8 array of shape .* on a CUDA device but image is .* in host memory"),
    ],
)
def test_bad_out(out, message):
    with pytest.raises(ValueError, match=message):
        granula.erosion(IMAGE, out=out)


def test_read_only_out():
    out = np.zeros_like(IMAGE)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="out is read-only"):
        granula.erosion(IMAGE, out=out)


def test_out_of_wrong_type():
    with pytest.raises(TypeError, match="out must be a numpy array"):
        granula.erosion(IMAGE, out=[[0] * 9] * 8)


def test_negative_thread_count():
    with pytest.raises(ValueError, match="thread count must be >= 0"):
        granula.set_num_threads(-1)
    with pytest.raises(ValueError, match="over granula's limit of 1024"):
        granula.set_num_threads(1025)


def test_host_array_of_another_framework_needs_out():
    # A 2-D buffer-protocol object granula can read but not make a result like.
    image = memoryview(np.zeros((4, 4), dtype=np.uint8))
    with pytest.raises(ValueError, match="pass out="):
        granula.erosion(image)
    out = np.empty((4, 4), dtype=np.uint8)
    assert granula.erosion(image, out=out) is out


@pytest.mark.parametrize(
    "fake, message",
    [
        (FakeCudaArray(typestr="<f8"), "dtype float64"),
        (FakeCudaArray(typestr=">f4"), "non-native byte order"),
        (FakeCudaArray(shape=(2, 3, 4)), "2-D"),
        (FakeCudaArray(shape=(0, 4)), "empty"),
        (FakeCudaArray(strides=(9, 2)), "non-contiguous columns"),
        (FakeCudaArray(strides=(-9, 1)), "row stride"),
    ],
)
def test_bad_cuda_arrays_are_rejected_before_any_cuda_call(fake, message):
    with pytest.raises(ValueError, match=message):
        granula.erosion(fake, out=FakeCudaArray())


@pytest.mark.parametrize(
    "change",
    [
        {"typestr": "|u"},
        {"typestr": "|ux"},
        {"shape": ("8", 9)},
        {"data": None},
        {"strides": (9,)},
    ],
)
def test_malformed_cuda_array_interface(change):
    fake = FakeCudaArray()
    fake.__cuda_array_interface__.update(change)
    with pytest.raises(ValueError, match="malformed __cuda_array_interface__"):
        granula.erosion(fake, out=FakeCudaArray())


def test_read_only_cuda_out():
    with pytest.raises(ValueError, match="out is a read-only CUDA array"):
        granula.erosion(FakeCudaArray(), out=FakeCudaArray(readonly=True))


@pytest.mark.skipif(granula.cuda_available(), reason="a CUDA device is present, so CUDA arrays are accepted")
def test_cuda_array_without_a_gpu():
    with pytest.raises(RuntimeError, match="no CUDA device is available|no CUDA backend"):
        granula.erosion(FakeCudaArray(), out=FakeCudaArray())
