"""granula against scipy.ndimage and the brute-force reference, pixel for pixel.

scipy.ndimage's grey morphology uses the same conventions as granula: the origin of an extent
of n pixels is at n // 2, dilation reflects the footprint, and the modes share their names.
granula's default mode 'ignore' has no scipy name, but for flat footprints that contain their
origin it equals 'nearest' (the replicated edge pixel is already under the footprint).
"""

import numpy as np
import pytest

scipy_ndimage = pytest.importorskip("scipy.ndimage", reason="scipy is not installed")

from conftest import DTYPES, MODES, OPERATIONS, random_image, reference, run  # noqa: E402

SCIPY = {
    "erosion": scipy_ndimage.grey_erosion,
    "dilation": scipy_ndimage.grey_dilation,
    "opening": scipy_ndimage.grey_opening,
    "closing": scipy_ndimage.grey_closing,
    "white_tophat": scipy_ndimage.white_tophat,
    "black_tophat": scipy_ndimage.black_tophat,
    "gradient": scipy_ndimage.morphological_gradient,
}

# (granula footprint, (rows, cols)): odd and even, lines, rectangles, longer than the images.
FOOTPRINTS = [
    ("hline:1", (1, 1)),
    ("hline:2", (1, 2)),
    ("hline:3", (1, 3)),
    ("hline:16", (1, 16)),
    ("hline:31", (1, 31)),
    ("hline:80", (1, 80)),
    ("vline:4", (4, 1)),
    ("vline:15", (15, 1)),
    ("vline:70", (70, 1)),
    ("rect:5x3", (3, 5)),
    ("rect:4x6", (6, 4)),
    ("square:2", (2, 2)),
    ("rect:9x9", (9, 9)),
]
SHAPES = [(1, 1), (1, 37), (29, 1), (23, 45), (64, 67)]
CVAL = {np.uint8: 77, np.uint16: 40000, np.float32: -12.5}


def scipy_result(operation, image, size, mode, cval):
    """scipy.ndimage's result; 'ignore' is 'nearest' there.

    scipy subtracts in the image's dtype, so an unsigned top-hat wraps around where the
    'constant' border makes the opening exceed the image (or the closing fall below it);
    granula saturates at 0, so those are computed from scipy's opening and closing.
    """
    scipy_mode = "nearest" if mode == "ignore" else mode
    kwargs = dict(size=size, mode=scipy_mode, cval=cval)
    if image.dtype.kind == "u" and operation in ("white_tophat", "black_tophat"):
        if operation == "white_tophat":
            a, b = image, scipy_ndimage.grey_opening(image, **kwargs)
        else:
            a, b = scipy_ndimage.grey_closing(image, **kwargs), image
        return np.where(a > b, a - b, 0).astype(image.dtype)
    return SCIPY[operation](image, **kwargs)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_matches_scipy(rng, operation, mode, dtype):
    cval = CVAL[dtype]
    for shape in SHAPES:
        image = random_image(rng, shape, dtype)
        for footprint, size in FOOTPRINTS:
            got = run(operation, image, footprint, mode=mode, cval=cval)
            expected = scipy_result(operation, image, size, mode, cval)
            assert got.dtype == image.dtype and got.shape == image.shape
            np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} on {shape}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_matches_brute_force_with_ties(rng, operation, mode, dtype):
    cval = CVAL[dtype]
    for shape in SHAPES:
        image = random_image(rng, shape, dtype, ties=True)
        for footprint, (rows, cols) in FOOTPRINTS:
            got = run(operation, image, footprint, mode=mode, cval=cval)
            expected = reference(operation, image, rows, cols, mode, cval)
            np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} on {shape}")


@pytest.mark.parametrize("mode", ["constant", "nearest", "reflect", "mirror", "wrap"])
def test_brute_force_reference_agrees_with_scipy(rng, mode):
    # The oracle used for 'ignore' and NaN must itself be right where scipy can judge it.
    for shape in SHAPES:
        image = random_image(rng, shape, np.float32)
        for _, (rows, cols) in FOOTPRINTS:
            for operation in OPERATIONS:
                np.testing.assert_array_equal(
                    reference(operation, image, rows, cols, mode, 3.0),
                    scipy_result(operation, image, (rows, cols), mode, 3.0),
                )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_nan_propagates(rng, operation, mode):
    # A NaN anywhere under the footprint makes the result NaN (numpy's minimum/maximum rule).
    for shape in SHAPES[1:]:
        image = random_image(rng, shape, np.float32)
        image[rng.random(shape) < 0.03] = np.nan
        for footprint, (rows, cols) in FOOTPRINTS:
            got = run(operation, image, footprint, mode=mode, cval=1.0)
            expected = reference(operation, image, rows, cols, mode, 1.0)
            np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} on {shape}")


def test_nan_and_infinities_by_hand():
    image = np.array([[np.inf, -np.inf, 1.0], [np.nan, 0.0, 2.0]], dtype=np.float32)
    # hline:2 has its origin at index 1: erosion takes min(image[x - 1], image[x]).
    np.testing.assert_array_equal(
        run("erosion", image, "hline:2"), np.array([[np.inf, -np.inf, -np.inf], [np.nan, np.nan, 0.0]])
    )
    # vline:2 reflected: dilation takes max(image[y], image[y + 1]).
    np.testing.assert_array_equal(
        run("dilation", image, "vline:2"), np.array([[np.nan, 0.0, 2.0], [np.nan, 0.0, 2.0]])
    )
