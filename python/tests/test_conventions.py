"""convention='opencv', 'scipy' and 'matlab' against the libraries themselves, pixel for pixel.

Every footprint is handed to the peer as its mask: a cv2 kernel with the default anchor
(w // 2, h // 2), a scipy.ndimage footprint= (origin 0 or the origin= asked for) and, for
MATLAB, whose origin rule is floor((size + 1) / 2) counted from 1, scipy.ndimage with that
origin and the neutral padding MATLAB uses (the max for erosions, the min for dilations).
"""

import numpy as np
import pytest

import granula
from conftest import DTYPES, OPERATIONS, compose, random_image

cv2 = pytest.importorskip("cv2", reason="OpenCV (opencv-python-headless) is not installed")
ndi = pytest.importorskip("scipy.ndimage", reason="scipy is not installed")

from test_opencv import MORPH as CV2_MORPH  # noqa: E402

fp = granula.footprints


def _random_mask(rng, rows, cols):
    mask = rng.random((rows, cols)) < 0.5
    mask[rng.integers(rows), rng.integers(cols)] = True
    return mask


def _elements(rng):
    """Footprints OpenCV, scipy and MATLAB can all be given as masks: even and odd rectangles,
    lines at angles, disks, diamonds, octagons, ellipses and random asymmetric masks."""
    elements = [fp.parse(spec) for spec in ("hline:2", "hline:4", "hline:15", "vline:2", "vline:6", "rect:4x3",
                                            "rect:6x4", "rect:5x3", "square:7", "rect:2x2")]
    elements += [fp.line(length, angle) for length in (5, 8, 16) for angle in (0, 17, 30, 45, 72, 90, 110, 135, 163)]
    elements += [fp.disk(r) for r in (1, 2, 4)] + [fp.diamond(2), fp.octagon(2, 1)]
    elements += [fp.ellipse(3, 2), fp.ellipse(2, 4)]
    elements += [fp.mask(_random_mask(rng, rows, cols)) for rows, cols in ((3, 4), (4, 4), (5, 2), (6, 7), (1, 6))]
    # OpenCV's own shapes, even sizes included.
    elements += [fp.mask(cv2.getStructuringElement(shape, size).astype(bool))
                 for shape in (cv2.MORPH_ELLIPSE, cv2.MORPH_CROSS) for size in ((7, 4), (6, 6), (5, 9))]
    return elements


SHAPES = [(1, 1), (1, 23), (19, 1), (31, 44)]
def _opencv_float_padding_as_inf(result):
    """OpenCV pads float images with -+FLT_MAX (its morphologyDefaultBorderValue() cast), granula
    with -+inf: the two differ only where a window misses the image entirely (a footprint
    without its origin), and there only in that sign of infinity versus FLT_MAX."""
    if result.dtype.kind != "f":
        return result
    largest = np.finfo(result.dtype).max
    return np.where(result == largest, np.inf, np.where(result == -largest, -np.inf, result)).astype(result.dtype)


def _centred(footprint):
    """The footprint's mask as a granula footprint with the origin at the centre (n // 2), which
    is where OpenCV's default anchor and scipy's origin 0 put it."""
    return fp.mask(footprint.footprint()[0])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_opencv_convention_equals_opencv(rng, operation, dtype):
    for footprint in _elements(rng):
        mask, origin = footprint.footprint()
        kernel = mask.astype(np.uint8)
        centred = _centred(footprint)
        for shape in SHAPES:
            image = random_image(rng, shape, dtype, ties=shape[0] == 19)
            expected = cv2.morphologyEx(image, CV2_MORPH[operation], kernel).reshape(shape)
            expected = _opencv_float_padding_as_inf(expected)
            got = getattr(granula, operation)(image, centred, convention="opencv")
            np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} as a mask on {shape}")
            # The footprint itself: its origin is the anchor.
            anchored = cv2.morphologyEx(image, CV2_MORPH[operation], kernel, anchor=origin[::-1]).reshape(shape)
            anchored = _opencv_float_padding_as_inf(anchored)
            got = getattr(granula, operation)(image, footprint, convention="opencv")
            np.testing.assert_array_equal(got, anchored, err_msg=f"{footprint}, anchor {origin[::-1]}, on {shape}")


def test_opencv_convention_with_borders_and_erode_dilate(rng):
    """cv2.erode and cv2.dilate directly, and OpenCV's other borders under their scipy names."""
    borders = {"nearest": cv2.BORDER_REPLICATE, "reflect": cv2.BORDER_REFLECT, "mirror": cv2.BORDER_REFLECT_101}
    image = random_image(rng, (37, 29), np.uint8)
    for footprint in _elements(rng):
        kernel = footprint.footprint()[0].astype(np.uint8)
        centred = _centred(footprint)
        np.testing.assert_array_equal(granula.erosion(image, centred, convention="opencv"), cv2.erode(image, kernel))
        np.testing.assert_array_equal(granula.dilation(image, centred, convention="opencv"), cv2.dilate(image, kernel))
        for mode, border in borders.items():
            for operation in OPERATIONS:
                expected = cv2.morphologyEx(image, CV2_MORPH[operation], kernel, borderType=border)
                got = getattr(granula, operation)(image, centred, mode=mode, convention="opencv")
                np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} {operation} {mode}")
        constant = cv2.dilate(image, kernel, borderType=cv2.BORDER_CONSTANT, borderValue=201)
        got = granula.dilation(image, centred, mode="constant", cval=201, convention="opencv")
        np.testing.assert_array_equal(got, constant, err_msg=str(footprint))


def test_opencv_pads_floats_with_flt_max():
    """The one documented difference: a window that misses the image (here a 1 x 1 image and a
    footprint without its origin) is FLT_MAX in OpenCV's float erosion, +inf in granula's."""
    image = np.zeros((1, 1), np.float32)
    kernel = np.array([[0, 0, 1]], np.uint8)
    assert cv2.erode(image, kernel)[0, 0] == np.finfo(np.float32).max
    assert cv2.dilate(image, kernel)[0, 0] == -np.finfo(np.float32).max
    assert granula.erosion(image, kernel.astype(bool), convention="opencv")[0, 0] == np.inf
    assert granula.dilation(image, kernel.astype(bool), convention="opencv")[0, 0] == -np.inf


def test_opencv_convention_differs_from_granula_for_even_sizes(rng):
    image = random_image(rng, (20, 20), np.uint8)
    assert not np.array_equal(granula.dilation(image, "hline:4"), cv2.dilate(image, np.ones((1, 4), np.uint8)))
    np.testing.assert_array_equal(
        granula.dilation(image, "hline:4", convention="opencv"), cv2.dilate(image, np.ones((1, 4), np.uint8))
    )


SCIPY = {
    "erosion": ndi.grey_erosion,
    "dilation": ndi.grey_dilation,
    "opening": ndi.grey_opening,
    "closing": ndi.grey_closing,
    "white_tophat": ndi.white_tophat,
    "black_tophat": ndi.black_tophat,
    "gradient": ndi.morphological_gradient,
}


def _scipy_saturated(operation, image, mask, **kwargs):
    """scipy's result, except where its unsigned difference wraps around (the opening above the
    image, the closing below it, the dilation below the erosion): granula gives 0 there."""
    result = SCIPY[operation](image, footprint=mask, **kwargs)
    if image.dtype.kind == "f":
        return result
    if operation == "white_tophat":
        negative = ndi.grey_opening(image, footprint=mask, **kwargs) > image
    elif operation == "black_tophat":
        negative = ndi.grey_closing(image, footprint=mask, **kwargs) < image
    elif operation == "gradient":
        dilated = ndi.grey_dilation(image, footprint=mask, **kwargs)
        negative = dilated < ndi.grey_erosion(image, footprint=mask, **kwargs)
    else:
        return result
    return np.where(negative, 0, result).astype(image.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_scipy_convention_equals_scipy(rng, operation, dtype):
    for footprint in _elements(rng):
        mask = footprint.footprint()[0]
        centred = _centred(footprint)
        for shape in SHAPES:
            image = random_image(rng, shape, dtype, ties=shape[0] == 19)
            # scipy's default mode, 'reflect', is the convention's default.
            got = getattr(granula, operation)(image, centred, convention="scipy")
            np.testing.assert_array_equal(got, _scipy_saturated(operation, image, mask), err_msg=f"{footprint} {shape}")
            for mode in ("nearest", "mirror", "wrap", "constant"):
                got = getattr(granula, operation)(image, centred, mode=mode, cval=3, convention="scipy")
                expected = _scipy_saturated(operation, image, mask, mode=mode, cval=3)
                np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} {shape} {mode}")


@pytest.mark.parametrize("operation", OPERATIONS)
def test_scipy_origin_is_with_origin(rng, operation):
    """scipy's origin=(a, b) is footprint.with_origin(rows // 2 + a, cols // 2 + b), for every
    origin scipy allows."""
    image = random_image(rng, (23, 27), np.float32)
    for rows, cols in ((3, 4), (4, 2), (2, 5)):
        mask = _random_mask(rng, rows, cols)
        for a in range(-(rows // 2), (rows - 1) // 2 + 1):
            for b in range(-(cols // 2), (cols - 1) // 2 + 1):
                moved = fp.mask(mask).with_origin(rows // 2 + a, cols // 2 + b)
                got = getattr(granula, operation)(image, moved, convention="scipy")
                expected = SCIPY[operation](image, footprint=mask, origin=(a, b))
                np.testing.assert_array_equal(got, expected, err_msg=f"{mask.astype(int)} origin {(a, b)}")


def _matlab(operation, image, mask):
    """MATLAB's imerode, imdilate and their compositions, by its documented rules: the origin at
    floor((size + 1) / 2) counted from 1 (scipy's origin -1 along even sizes), the image padded
    with the max for erosions and the min for dilations; differences saturate (imsubtract)."""
    rows, cols = mask.shape
    origin = ((rows + 1) // 2 - 1 - rows // 2, (cols + 1) // 2 - 1 - cols // 2)
    lowest, highest = (-np.inf, np.inf) if image.dtype.kind == "f" else (0, np.iinfo(image.dtype).max)

    def erode(f):
        return ndi.grey_erosion(f, footprint=mask, origin=origin, mode="constant", cval=highest)

    def dilate(f):
        return ndi.grey_dilation(f, footprint=mask, origin=origin, mode="constant", cval=lowest)

    def subtract(a, b):
        return a - b if a.dtype.kind == "f" else np.where(a > b, a - b, 0).astype(a.dtype)

    return compose(operation, image, erode, dilate, subtract)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_matlab_convention_follows_its_origin_rule(rng, operation, dtype):
    for rows, cols in ((1, 2), (2, 1), (2, 2), (4, 3), (3, 6), (4, 4), (6, 5)):
        for mask in (np.ones((rows, cols), bool), _random_mask(rng, rows, cols)):
            for shape in SHAPES:
                image = random_image(rng, shape, dtype)
                got = getattr(granula, operation)(image, mask, convention="matlab")
                expected = _matlab(operation, image, mask)
                np.testing.assert_array_equal(got, expected, err_msg=f"{mask.astype(int)} on {shape}")
                # The same as granula's own with the origin moved to MATLAB's.
                moved = fp.mask(mask, origin=((rows - 1) // 2, (cols - 1) // 2))
                np.testing.assert_array_equal(got, getattr(granula, operation)(image, moved))


def test_conventions_agree_on_odd_symmetric_footprints(rng):
    image = random_image(rng, (25, 30), np.uint16)
    for operation in OPERATIONS:
        for footprint in ("square:5", "disk:3", "diamond:2", "line:9:45"):
            expected = getattr(granula, operation)(image, footprint)
            for convention in ("opencv", "matlab"):
                got = getattr(granula, operation)(image, footprint, convention=convention)
                np.testing.assert_array_equal(got, expected, err_msg=f"{operation} {footprint} {convention}")


def test_bad_convention_and_mode(rng):
    image = random_image(rng, (5, 5), np.uint8)
    with pytest.raises(ValueError, match="unknown convention 'cv2'; allowed: granula, opencv, scipy, matlab"):
        granula.erosion(image, "square:3", convention="cv2")
    with pytest.raises(ValueError, match="unknown border mode 'edge'; allowed: default, ignore"):
        granula.dilation(image, "square:3", mode="edge", convention="scipy")
    with pytest.raises(ValueError, match="outside the 1x4 footprint"):
        fp.hline(4).with_origin(0, 4)
    # mode='default' is the convention's default; convention is keyword-only.
    np.testing.assert_array_equal(
        granula.opening(image, "hline:4", mode="default", convention="scipy"),
        granula.opening(image, "hline:4", mode="reflect"),
    )
    with pytest.raises(TypeError):
        granula.erosion(image, "hline:3", "default", 0.0, "opencv")
