"""granula against OpenCV (cv2.erode, cv2.dilate, cv2.morphologyEx), pixel for pixel.

Conventions: cv2.getStructuringElement(MORPH_RECT, (w, h)) with the default anchor (w // 2,
h // 2) is granula's footprint for erosion. OpenCV does not reflect the kernel for dilation, so
granula's dilation equals cv2.dilate with the anchor (w - 1 - w // 2, h - 1 - h // 2); for odd
sizes the two anchors coincide and cv2.morphologyEx gives every operation directly. Borders:
BORDER_CONSTANT with the default morphologyDefaultBorderValue() is 'ignore'; BORDER_CONSTANT
with a value is 'constant'; BORDER_REPLICATE, BORDER_REFLECT and BORDER_REFLECT_101 are
'nearest', 'reflect' and 'mirror'. OpenCV's morphology has no BORDER_WRAP.
"""

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2", reason="OpenCV (opencv-python-headless) is not installed")

from conftest import DTYPES, OPERATIONS, compose, random_image, run  # noqa: E402

BORDERS = {
    "ignore": cv2.BORDER_CONSTANT,
    "constant": cv2.BORDER_CONSTANT,
    "nearest": cv2.BORDER_REPLICATE,
    "reflect": cv2.BORDER_REFLECT,
    "mirror": cv2.BORDER_REFLECT_101,
}
MORPH = {
    "erosion": cv2.MORPH_ERODE,
    "dilation": cv2.MORPH_DILATE,
    "opening": cv2.MORPH_OPEN,
    "closing": cv2.MORPH_CLOSE,
    "white_tophat": cv2.MORPH_TOPHAT,
    "black_tophat": cv2.MORPH_BLACKHAT,
    "gradient": cv2.MORPH_GRADIENT,
}
# (granula footprint, (width, height)) as OpenCV sizes kernels.
FOOTPRINTS = [
    ("hline:3", (3, 1)),
    ("hline:4", (4, 1)),
    ("hline:15", (15, 1)),
    ("hline:64", (64, 1)),
    ("vline:2", (1, 2)),
    ("vline:31", (1, 31)),
    ("rect:5x3", (5, 3)),
    ("rect:6x4", (6, 4)),
    ("square:7", (7, 7)),
]
SHAPES = [(1, 1), (1, 40), (33, 1), (37, 53), (96, 71)]
CVAL = {np.uint8: 201, np.uint16: 999, np.float32: 3.25}


def opencv_result(operation, image, size, mode, cval):
    width, height = size
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (width, height))
    border = dict(borderType=BORDERS[mode])
    if mode == "constant":
        border["borderValue"] = cval
    if width % 2 and height % 2:
        return cv2.morphologyEx(image, MORPH[operation], kernel, **border)
    erosion_anchor = (width // 2, height // 2)
    dilation_anchor = (width - 1 - width // 2, height - 1 - height // 2)

    def erode(f):
        return cv2.erode(f, kernel, anchor=erosion_anchor, **border)

    def dilate(f):
        return cv2.dilate(f, kernel, anchor=dilation_anchor, **border)

    return compose(operation, image, erode, dilate, cv2.subtract)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", list(BORDERS))
@pytest.mark.parametrize("operation", OPERATIONS)
def test_matches_opencv(rng, operation, mode, dtype):
    cval = CVAL[dtype]
    for shape in SHAPES:
        image = random_image(rng, shape, dtype)
        for footprint, size in FOOTPRINTS:
            got = run(operation, image, footprint, mode=mode, cval=cval)
            expected = opencv_result(operation, image, size, mode, cval).reshape(shape)
            np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} on {shape}")


def test_opencv_unreflected_dilation_differs_for_even_sizes():
    # Pins the convention: with its default anchor cv2.dilate is not granula's (scipy's)
    # dilation for even sizes.
    image = np.zeros((1, 8), dtype=np.uint8)
    image[0, 3] = 9
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (4, 1))
    np.testing.assert_array_equal(run("dilation", image, "hline:4")[0], [0, 9, 9, 9, 9, 0, 0, 0])
    np.testing.assert_array_equal(cv2.dilate(image, kernel)[0], [0, 0, 9, 9, 9, 9, 0, 0])
