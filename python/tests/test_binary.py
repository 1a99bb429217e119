"""Binary morphology: granula.binary_* on 0/1 arrays and granula.binary on packed images equal
granula's grey operations on the 0/1 image and scipy.ndimage's binary operations; packing
matches numpy's bit order; every documented error is raised. GPU cases skip without CuPy/GPU.
"""

import doctest

import numpy as np
import pytest
from scipy import ndimage

import granula
from granula import binary

OPS = ["erosion", "dilation", "opening", "closing"]
MODES = ["ignore", "constant", "nearest", "reflect", "mirror", "wrap"]
SHAPES = [(1, 1), (1, 130), (70, 1), (33, 64), (17, 65), (40, 200)]
FOOTPRINTS = ["hline:1", "hline:5", "hline:64", "hline:300", "vline:4", "vline:90", "rect:3x7", "rect:63x2", "square:9"]


def random_binary(rng, shape, density=0.6):
    return (rng.random(shape) < density).astype(np.uint8)


def test_docstring_examples():
    failures, _ = doctest.testmod(binary, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op", OPS)
def test_pixel_functions_equal_grey_path(rng, shape, op):
    image = random_binary(rng, shape, 0.8 if op in ("erosion", "opening") else 0.2)
    for footprint in FOOTPRINTS:
        for mode in MODES:
            for cval in (0, 1) if mode == "constant" else (0,):
                got = getattr(granula, "binary_" + op)(image, footprint, mode=mode, cval=cval)
                want = getattr(granula, op)(image, footprint, mode=mode, cval=cval)
                np.testing.assert_array_equal(got, want, err_msg=f"{footprint} {mode} {cval}")


@pytest.mark.parametrize("op", OPS)
def test_packed_functions_equal_grey_path(rng, op):
    image = random_binary(rng, (45, 131))
    packed = binary.pack(image)
    for footprint in FOOTPRINTS:
        for mode in MODES:
            got = getattr(binary, op)(packed, footprint, mode=mode).unpack()
            np.testing.assert_array_equal(got, getattr(granula, op)(image, footprint, mode=mode), err_msg=f"{footprint} {mode}")


@pytest.mark.parametrize("size", [(3, 3), (5, 1), (1, 7), (63, 63), (4, 6)])
def test_equals_scipy_binary_operations(rng, size):
    """scipy's binary erosion with border_value=1 is granula's 'ignore'; with 0, constant 0.
    Its origin n // 2 and reflected dilation match granula's for odd and even sizes."""
    image = random_binary(rng, (120, 150), 0.9)
    structure = np.ones(size, dtype=bool)
    footprint = f"rect:{size[1]}x{size[0]}"
    np.testing.assert_array_equal(
        granula.binary_erosion(image, footprint), ndimage.binary_erosion(image, structure, border_value=1)
    )
    np.testing.assert_array_equal(
        granula.binary_erosion(image, footprint, mode="constant", cval=0),
        ndimage.binary_erosion(image, structure, border_value=0),
    )
    sparse = random_binary(rng, (120, 150), 0.05)
    np.testing.assert_array_equal(granula.binary_dilation(sparse, footprint), ndimage.binary_dilation(sparse, structure))
    for op in ("opening", "closing"):
        np.testing.assert_array_equal(
            getattr(granula, "binary_" + op)(image, footprint, mode="constant", cval=0),
            getattr(ndimage, "binary_" + op)(image, structure, border_value=0),
        )


def test_window_off_the_image_gives_one():
    """A footprint without its origin has windows that miss the image: binary erosion gives 1
    there, as scipy's with border_value=1, and the grey erosion the dtype's maximum (the one
    place where binary_erosion and erosion of the 0/1 image differ)."""
    image = np.ones((3, 6), np.uint8)
    image[1, 3] = 0
    footprint = granula.footprints.mask([[1, 0, 0]], origin=(0, 2))  # reads x - 2
    want = ndimage.binary_erosion(image, np.array([[1, 0, 0]], bool), border_value=1, origin=(0, 1))
    np.testing.assert_array_equal(granula.binary_erosion(image, footprint), want.astype(np.uint8))
    np.testing.assert_array_equal(binary.erosion(binary.pack(image), footprint).unpack(), want.astype(np.uint8))
    assert (granula.erosion(image, footprint)[:, :2] == 255).all()
    assert want[:, :2].all() and not want[1, 5]


def test_hit_or_miss_equals_erosions(rng):
    """The definition, through granula's own erosions of the image and of its complement."""
    image = random_binary(rng, (50, 77))
    for mode, cval in (("ignore", 0), ("constant", 0), ("constant", 1), ("reflect", 0)):
        got = binary.hit_or_miss(image, "hline:3", "rect:2x4", mode=mode, cval=cval)
        want = granula.erosion(image, "hline:3", mode=mode, cval=cval) & granula.erosion(
            1 - image, "rect:2x4", mode=mode, cval=1 - cval
        )
        np.testing.assert_array_equal(got, want)
        packed = binary.hit_or_miss(binary.pack(image), "hline:3", "rect:2x4", mode=mode, cval=cval)
        np.testing.assert_array_equal(packed.unpack(), want)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.uint16, np.float32])
def test_pack_layout_and_roundtrip(rng, dtype):
    for shape in SHAPES:
        values = rng.integers(0, 200, shape)
        image = (values > 100) if dtype == np.bool_ else values.astype(dtype)
        threshold = 0 if dtype == np.bool_ else 100.5 if dtype == np.float32 else 100
        packed = binary.pack(image, threshold=threshold)
        bits = (values > 100).astype(np.uint8)
        # Bit 0 of each word is the leftmost pixel: numpy's little bit order, 8 bytes a word.
        padded = np.zeros((shape[0], packed.words.shape[1] * 64), np.uint8)
        padded[:, : shape[1]] = bits
        want_words = np.packbits(padded, axis=1, bitorder="little").view("<u8")
        np.testing.assert_array_equal(packed.words, want_words)
        np.testing.assert_array_equal(binary.unpack(packed, dtype=dtype), bits.astype(dtype))


def test_unpack_into_out_and_bool(rng):
    image = random_binary(rng, (9, 70))
    packed = binary.pack(image)
    out = np.full((9, 70), 7, np.float32)
    assert binary.unpack(packed, out=out) is out
    np.testing.assert_array_equal(out, image)
    np.testing.assert_array_equal(binary.unpack(packed, dtype=bool), image.astype(bool))


def test_packed_image_from_words():
    words = np.zeros((2, 3), np.uint64)
    words[1, 2] = 1 << 5
    packed = binary.PackedImage(words, 140)
    assert packed.shape == (2, 140)
    assert binary.unpack(packed)[1, 133] == 1 and binary.unpack(packed).sum() == 1


def test_errors():
    image = np.zeros((4, 5), np.uint8)
    with pytest.raises(ValueError, match="outside the range of uint8"):
        binary.pack(image, threshold=256)
    with pytest.raises(ValueError, match="threshold is NaN"):
        binary.pack(image.astype(np.float32), threshold=float("nan"))
    with pytest.raises(ValueError, match="cval 0 or 1"):
        granula.binary_erosion(image, "square:3", mode="constant", cval=2)
    with pytest.raises(ValueError, match="cval 0 or 1"):
        binary.dilation(binary.pack(image), mode="constant", cval=0.5)
    with pytest.raises(ValueError, match="must match|out must have"):
        granula.binary_opening(image, out=np.zeros((4, 6), np.uint8))
    with pytest.raises(ValueError, match="must match"):
        binary.unpack(binary.pack(image), out=np.zeros((5, 5), np.uint8))
    with pytest.raises(ValueError, match="uint64"):
        binary.PackedImage(np.zeros((2, 2), np.uint32), 10)
    with pytest.raises(ValueError, match="does not fit"):
        binary.PackedImage(np.zeros((2, 2), np.uint64), 129)
    with pytest.raises(ValueError, match="contiguous columns"):
        binary.PackedImage(np.zeros((2, 4), np.uint64)[:, ::2], 100)
    with pytest.raises(ValueError):
        binary.pack(np.zeros((0, 3), np.uint8))
    with pytest.raises(TypeError):
        binary.erosion(image)


try:
    import cupy
except ImportError:
    cupy = None


def _gpu_missing():
    if cupy is None:
        return "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return "no CUDA device"
    except cupy.cuda.runtime.CUDARuntimeError as error:
        return f"no usable CUDA device ({error})"
    if not granula.cuda_available():
        return "this granula build has no CUDA backend or sees no GPU"
    return None


GPU_MISSING = _gpu_missing()
gpu = pytest.mark.skipif(GPU_MISSING is not None, reason=f"GPU test skipped: {GPU_MISSING}")


@gpu
@pytest.mark.parametrize("op", OPS)
def test_cupy_equals_numpy(rng, op):
    image = random_binary(rng, (300, 517), 0.9 if op in ("erosion", "opening") else 0.1)
    device = cupy.asarray(image)
    for footprint in ("square:63", "hline:100", "rect:3x200"):
        for mode in ("ignore", "reflect", "wrap"):
            got = getattr(granula, "binary_" + op)(device, footprint, mode=mode)
            assert isinstance(got, cupy.ndarray)
            np.testing.assert_array_equal(cupy.asnumpy(got), getattr(granula, "binary_" + op)(image, footprint, mode=mode))
            packed = getattr(binary, op)(binary.pack(device), footprint, mode=mode)
            assert packed.on_device
            np.testing.assert_array_equal(cupy.asnumpy(packed.unpack()), getattr(granula, op)(image, footprint, mode=mode))


@gpu
def test_cupy_pack_matches_numpy(rng):
    values = rng.integers(0, 255, (33, 1000)).astype(np.uint8)
    packed = binary.pack(cupy.asarray(values), threshold=128)
    np.testing.assert_array_equal(cupy.asnumpy(packed.words), binary.pack(values, threshold=128).words)
    np.testing.assert_array_equal(cupy.asnumpy(binary.unpack(packed, dtype=bool)), values > 128)


@gpu
def test_cupy_equals_scipy_erosion(rng):
    image = random_binary(rng, (200, 300), 0.95)
    got = granula.binary_erosion(cupy.asarray(image), "rect:15x9")
    np.testing.assert_array_equal(cupy.asnumpy(got), ndimage.binary_erosion(image, np.ones((9, 15), bool), border_value=1))


@pytest.mark.parametrize("op", OPS)
def test_bool_masks_give_bool_masks(rng, op):
    """A bool mask runs as its 0/1 bytes: the uint8 result as bool, into out= too, like scipy's."""
    mask = random_binary(rng, (70, 93), 0.7).astype(bool)
    function = getattr(granula, "binary_" + op)
    want = function(mask.astype(np.uint8), "disk:2", mode="reflect")
    got = function(mask, "disk:2", mode="reflect")
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want.astype(bool))
    strided = mask[::2, 3:]  # rows at twice the stride, starting 3 bytes in
    out = np.ones(strided.shape, dtype=bool)
    assert function(strided, "disk:2", mode="reflect", out=out) is out
    np.testing.assert_array_equal(out, function(strided.astype(np.uint8), "disk:2", mode="reflect").astype(bool))
    if op == "erosion":
        scipy_result = ndimage.binary_erosion(mask, np.ones((3, 3), bool), border_value=1)
        np.testing.assert_array_equal(granula.binary_erosion(mask, "square:3"), scipy_result)


@gpu
def test_cupy_bool_masks(rng):
    mask = random_binary(rng, (120, 333), 0.8).astype(bool)
    got = granula.binary_erosion(cupy.asarray(mask), "disk:3")
    assert isinstance(got, cupy.ndarray) and got.dtype == cupy.bool_
    np.testing.assert_array_equal(cupy.asnumpy(got), granula.binary_erosion(mask, "disk:3"))
