"""Shared helpers of the Python tests: seeded random images and a brute-force numpy reference.

The reference shares nothing with granula: it pads with numpy.pad and takes the minimum or
maximum over every window with sliding_window_view, so it is obviously correct and slow.
"""

import zlib

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import granula

OPERATIONS = ["erosion", "dilation", "opening", "closing", "white_tophat", "black_tophat", "gradient"]
DTYPES = [np.uint8, np.uint16, np.float32]
MODES = ["ignore", "constant", "nearest", "reflect", "mirror", "wrap"]
# numpy.pad's names for the scipy.ndimage modes.
NUMPY_PAD = {"nearest": "edge", "reflect": "symmetric", "mirror": "reflect", "wrap": "wrap"}


@pytest.fixture
def rng(request):
    """A generator seeded from the test's id; the seed is printed, so a failure shows it."""
    seed = zlib.crc32(request.node.nodeid.encode())
    print(f"random seed {seed} for {request.node.nodeid}")
    return np.random.default_rng(seed)


def random_image(rng, shape, dtype, ties=False):
    """Random pixels over the dtype's range; ``ties`` draws from a few values only."""
    dtype = np.dtype(dtype)
    if ties:
        return rng.integers(0, 4, shape).astype(dtype)
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 1000).astype(dtype)
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype, endpoint=True)


def extreme(dtype, largest):
    """The dtype's largest (or smallest) value; infinity for floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.inf if largest else -np.inf
    info = np.iinfo(dtype)
    return info.max if largest else info.min


def _window(image, rows, cols, mode, cval, reflected, reduce, neutral):
    # The footprint's offsets run from -origin to size - 1 - origin, origin = size // 2; the
    # dilation reads image(x - b), so it looks the other way.
    before = [size // 2 for size in (rows, cols)]
    after = [size - 1 - size // 2 for size in (rows, cols)]
    if reflected:
        before, after = after, before
    pad_width = list(zip(before, after))
    if mode == "ignore":
        padded = np.pad(image, pad_width, constant_values=neutral)
    elif mode == "constant":
        padded = np.pad(image, pad_width, constant_values=cval)
    else:
        padded = np.pad(image, pad_width, mode=NUMPY_PAD[mode])
    return reduce(sliding_window_view(padded, (rows, cols)), axis=(2, 3))


def _difference(a, b):
    if a.dtype.kind == "f":
        return a - b
    return np.where(a > b, a - b, 0).astype(a.dtype)


def reference(operation, image, rows, cols, mode="ignore", cval=0.0):
    """Brute-force result of ``operation`` with a rows x cols rectangle (NaN propagates)."""

    def erode(f):
        return _window(f, rows, cols, mode, cval, False, np.min, extreme(f.dtype, True))

    def dilate(f):
        return _window(f, rows, cols, mode, cval, True, np.max, extreme(f.dtype, False))

    return compose(operation, image, erode, dilate, _difference)


def compose(operation, image, erode, dilate, subtract):
    """``operation`` built from an oracle's erosion, dilation and saturating subtraction."""
    if operation == "erosion":
        return erode(image)
    if operation == "dilation":
        return dilate(image)
    if operation == "opening":
        return dilate(erode(image))
    if operation == "closing":
        return erode(dilate(image))
    if operation == "white_tophat":
        return subtract(image, dilate(erode(image)))
    if operation == "black_tophat":
        return subtract(erode(dilate(image)), image)
    if operation == "gradient":
        return subtract(dilate(image), erode(image))
    raise AssertionError(operation)


def run(operation, image, footprint, **kwargs):
    return getattr(granula, operation)(image, footprint, **kwargs)
