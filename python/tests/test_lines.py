"""Linear openings at any angle and their analyses: equality with scipy.ndimage and granula's
footprint mode where they express the same operator, orientation and spectrum on oriented
stripes, granulometry, rotation against scipy.ndimage.rotate, rotation detection on a real page
rotated by known angles and on synthetic staves, the errors, and CuPy (skipped without a GPU)."""

import pathlib

import numpy as np
import pytest

import granula
from conftest import DTYPES, random_image

scipy_ndimage = pytest.importorskip("scipy.ndimage", reason="scipy is not installed")

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
DIAGONALS = [45, 135]


def _line_footprint(length, angle):
    """The line's mask and its origin in scipy's terms (offset from the centre ``n // 2``)."""
    mask, origin = granula.footprints.line(length, angle).footprint()
    return mask, tuple(o - n // 2 for o, n in zip(origin, mask.shape))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("angle", [0, 45, 90, 135])
def test_axes_and_diagonals_equal_scipy(rng, angle, dtype):
    """At 0/45/90/135 degrees the scan-line filters equal scipy's with the line footprint: 'constant'
    at every one of them, 'nearest' and 'reflect' along rows and columns (a diagonal's 2-D border
    is not its scan line's), and 'ignore' equals granula's footprint-mode operators."""
    for shape in [(1, 9), (17, 23), (40, 31)]:
        image = random_image(rng, shape, dtype)
        for length in [1, 2, 5, 8, 17]:
            if length > (shape[1] if angle in (0, 45, 135) else shape[0]):
                continue
            mask, origin = _line_footprint(length, angle)
            modes = ["constant"] + ([] if angle in DIAGONALS else ["nearest", "reflect"])
            for mode in modes:
                for ours, theirs in ((granula.line_opening, scipy_ndimage.grey_opening),
                                     (granula.line_closing, scipy_ndimage.grey_closing),
                                     (granula.line_erosion, scipy_ndimage.grey_erosion),
                                     (granula.line_dilation, scipy_ndimage.grey_dilation)):
                    got = ours(image, length, angle, mode=mode, cval=7)
                    expected = theirs(image, footprint=mask, mode=mode, cval=7, origin=origin)
                    np.testing.assert_array_equal(got, expected, err_msg=f"{ours.__name__} {length} {mode} {shape}")
            footprint = granula.footprints.line(length, angle)
            np.testing.assert_array_equal(granula.line_opening(image, length, angle), granula.opening(image, footprint))
            np.testing.assert_array_equal(granula.line_closing(image, length, angle), granula.closing(image, footprint))
            np.testing.assert_array_equal(granula.line_erosion(image, length, angle), granula.erosion(image, footprint))
            np.testing.assert_array_equal(granula.line_dilation(image, length, angle), granula.dilation(image, footprint))


def test_opening_properties_and_out(rng):
    image = random_image(rng, (37, 41), np.uint8)
    for angle in [0.0, 17.5, 63.0, 100.0, 171.3]:
        opened = granula.line_opening(image, 9, angle)
        assert np.all(opened <= image)
        np.testing.assert_array_equal(granula.line_opening(opened, 9, angle), opened)
        closed = granula.line_closing(image, 9, angle)
        assert np.all(closed >= image)
        for algorithm in ["fifo", "stack"]:
            np.testing.assert_array_equal(granula.line_opening(image, 9, angle, algorithm=algorithm), opened)
    out = image.copy()
    assert granula.line_opening(out, 9, 30, out=out) is out  # in place
    np.testing.assert_array_equal(out, granula.line_opening(image, 9, 30))


def _stripes(angle, shape=(96, 96), period=9, width=3):
    """Bright stripes along `angle` degrees (counter-clockwise on screen) on black."""
    y, x = np.mgrid[0:shape[0], 0:shape[1]]
    t = np.radians(angle)
    across = x * np.sin(t) + y * np.cos(t)  # constant along the stripes' direction (cos t, -sin t)
    return np.where(np.mod(across, period) < width, 200, 10).astype(np.uint8)


@pytest.mark.parametrize("angle", [0, 30, 75, 120, 160])
def test_orientation_and_spectrum_find_the_stripes(angle):
    image = _stripes(angle, width=2)  # a line 5 degrees off leaves such a stripe within 41 pixels
    sup, orientation = granula.orientation(image, 41, angles=36)
    assert sup.dtype == np.uint8 and orientation.dtype == np.float32 and orientation.shape == image.shape
    inner = (slice(20, -20), slice(20, -20))
    kept = sup[inner] == 200  # the stripe pixels some line fits in
    assert kept.sum() > 0.3 * (image[inner] == 200).sum()
    values, counts = np.unique(orientation[inner][kept], return_counts=True)
    assert values[np.argmax(counts)] == angle
    np.testing.assert_array_equal(sup, np.max([granula.line_opening(image, 41, a) for a in range(0, 180, 5)], axis=0))
    angles, spectrum = granula.angular_spectrum(image, 41, angles=36)
    np.testing.assert_array_equal(angles, np.arange(0, 180, 5))
    assert angles[np.argmax(spectrum)] == angle
    expected = [granula.line_opening(image, 41, a).sum(dtype=np.float64) for a in angles]
    np.testing.assert_array_equal(spectrum, expected)
    # Closings of the inverted stripes: the same angle at the spectrum's minimum.
    inverted = 255 - image
    inf, closing_orientation = granula.orientation(inverted, 41, angles=36, closing=True)
    np.testing.assert_array_equal(inf, 255 - sup)
    np.testing.assert_array_equal(closing_orientation, orientation)
    _, closing_spectrum = granula.angular_spectrum(inverted, 41, angles=36, closing=True)
    assert angles[np.argmin(closing_spectrum)] == angle


def test_angles_as_a_sequence_and_ties():
    image = np.full((10, 12), 5, np.uint8)  # every angle ties: the smallest wins
    _, orientation = granula.orientation(image, 3, angles=[90, 10.5, 45])
    assert np.all(orientation == 10.5)
    angles, spectrum = granula.angular_spectrum(image, 3, angles=(90, 10.5))
    np.testing.assert_array_equal(angles, [90, 10.5])
    np.testing.assert_array_equal(spectrum, [600, 600])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["line_opening", "line_closing", "line_erosion", "line_dilation"])
def test_many_angles_stack_and_reductions(rng, name, dtype):
    """angles= gives each angle's image, equal to one call per angle; reduce= their maximum and
    minimum at each pixel (numpy's, NaN propagating), without the stack."""
    image = random_image(rng, (37, 53), dtype)
    if np.issubdtype(dtype, np.floating):
        image[rng.random(image.shape) < 0.01] = np.nan
    f = getattr(granula, name)
    angles = [100.0, 10.0, 170.0, 45.0, 0.0, 133.3, 62.0]
    stack = f(image, 7, angles=angles)
    assert stack.shape == (len(angles), 37, 53) and stack.dtype == image.dtype
    expected = np.stack([f(image, 7, a) for a in angles])
    np.testing.assert_array_equal(stack, expected)
    np.testing.assert_array_equal(f(image, 7, angles=angles, reduce="max"), expected.max(axis=0))
    np.testing.assert_array_equal(f(image, 7, angles=angles, reduce="min"), expected.min(axis=0))
    out = np.empty((4, 37, 53), image.dtype)
    assert f(image, 7, angles=4, out=out) is out
    np.testing.assert_array_equal(out, np.stack([f(image, 7, a) for a in [0, 45, 90, 135]]))


def test_infimum_of_openings_keeps_what_is_long_in_every_direction():
    cross = np.zeros((21, 21), np.uint8)
    cross[10, :] = cross[:, 10] = 200  # long in one direction each
    cross[3:10, 12:19] = 100  # a 7x7 square: long in every direction
    sup = granula.line_opening(cross, 7, angles=8, reduce="max")
    inf = granula.line_opening(cross, 7, angles=8, reduce="min")
    assert np.all(sup[10, :] == 200) and np.all(sup[:, 10] == 200)
    assert np.all(inf[10, :3] == 0) and np.all(inf[:3, 10] == 0)
    assert inf[6, 15] == 100 and inf.max() <= 100


def test_granulometry():
    image = _stripes(30)
    lengths = [1, 5, 9, 21, 41]
    sums = granula.granulometry(image, lengths, angles=12)
    for length, total in zip(lengths, sums):
        sup, _ = granula.orientation(image, length, angles=12)
        assert total == sup.sum(dtype=np.float64)
    assert np.all(np.diff(sums) <= 0)
    closings = granula.granulometry(image, lengths, angles=[0, 90], closing=True)
    assert np.all(np.diff(closings) >= 0)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_rotate_matches_scipy(rng, dtype):
    """Bilinear rotation equals scipy.ndimage.rotate(order=1, reshape=False, mode='constant') to
    1e-3 for float32 and 1 grey level for integers (rounding), exactly at multiples of 90."""
    image = random_image(rng, (33, 48), dtype)
    if np.dtype(dtype).kind == "f":
        image = (image / 1000).astype(dtype)
    for angle in [0, 90, -90, 180, 3.7, -17.25, 45, 133]:
        got = granula.rotate(image, angle, fill=3)
        expected = scipy_ndimage.rotate(image, angle, reshape=False, order=1, mode="constant", cval=3)
        assert got.dtype == image.dtype and got.shape == image.shape
        # Pixels whose pre-image lies within a hair of the border may go either way: skip them.
        rows, cols = image.shape
        y, x = np.mgrid[0:rows, 0:cols].astype(np.float64)
        cy, cx = (rows - 1) / 2, (cols - 1) / 2
        t = np.radians(angle)
        sx = cx + np.cos(t) * (x - cx) - np.sin(t) * (y - cy)
        sy = cy + np.sin(t) * (x - cx) + np.cos(t) * (y - cy)
        margin = np.minimum.reduce([np.abs(sx), np.abs(sx - (cols - 1)), np.abs(sy), np.abs(sy - (rows - 1))])
        clear = margin > 1e-6
        if angle % 90 == 0:
            if rows == cols or angle % 180 == 0:
                np.testing.assert_array_equal(got, expected)
            continue
        tolerance = 1e-3 if np.dtype(dtype).kind == "f" else 1
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))[clear]
        assert diff.max() <= tolerance, f"{angle} degrees: max difference {diff.max()}"
    np.testing.assert_array_equal(granula.rotate(image, 0), image)


def _read_page():
    cv2 = pytest.importorskip("cv2", reason="OpenCV reads data/page.png")
    return cv2.imread(str(DATA / "page.png"), cv2.IMREAD_UNCHANGED)


def test_deskew_recovers_known_rotations_of_a_real_page():
    """data/page.png (384x191, photographed, its text lines bent from about -1.0 degrees on the left
    to +0.5 on the right; -0.2 as a whole by a projection-profile search): rotated with
    scipy.ndimage.rotate (not granula's rotate) by known angles, recovered within 0.1 degrees of the
    angle plus the unrotated page's result."""
    page = _read_page()
    own = granula.deskew(page)
    assert abs(own - -0.2) <= 0.1  # measured -0.28
    for angle in [-8.6, -3.1, 1.3, 6.4]:
        tilted = scipy_ndimage.rotate(page, angle, reshape=False, order=1, mode="constant", cval=255)
        assert abs(granula.deskew(tilted) - own - angle) <= 0.1, angle


def test_deskew_staves_with_the_closing_method():
    sheet = np.full((300, 480), 235, np.uint8)
    for staff in range(3):
        for line in range(5):
            sheet[50 + staff * 85 + line * 9, 30:450] = 30
    rng = np.random.default_rng(3)
    for _ in range(40):  # note heads and stems
        cx, cy = rng.integers(40, 430), 50 + rng.integers(0, 3) * 85 + rng.integers(-2, 11) * 4
        yy, xx = np.mgrid[-4:5, -5:6]
        sheet[cy - 4:cy + 5, cx - 5:cx + 6][xx * xx * 16 + yy * yy * 25 <= 400] = 20
        sheet[cy - 28:cy + 1, cx + 5] = 20
    for angle in [-7.7, 0.0, 4.4]:
        tilted = granula.rotate(sheet, angle, fill=235)
        assert abs(granula.deskew(tilted, method="closing") - angle) <= 0.05
        assert abs(granula.deskew(tilted, method="closing", length=250, range=(-8, 8), step=0.2) - angle) <= 0.05


def test_errors():
    image = np.zeros((20, 30), np.uint8)
    with pytest.raises(ValueError, match=">= 1"):
        granula.line_opening(image, 0, 0)
    with pytest.raises(ValueError, match="whole number"):
        granula.line_opening(image, 2.5, 0)
    with pytest.raises(ValueError, match="does not fit"):
        granula.line_opening(image, 21, 90)
    with pytest.raises(ValueError, match="finite"):
        granula.line_closing(image, 3, float("nan"))
    with pytest.raises(ValueError, match="allowed: ignore, constant, nearest, reflect"):
        granula.line_opening(image, 3, 0, mode="wrap")
    with pytest.raises(ValueError, match="allowed: auto, fifo, stack"):
        granula.line_opening(image, 3, 0, algorithm="quick")
    with pytest.raises(ValueError, match="positive number of angles"):
        granula.orientation(image, 3, angles=0)
    # Refused before a list of them is built (1e9 angles took over 6 GB before).
    with pytest.raises(ValueError, match=r"must be in 1\.\.1000000"):
        granula.orientation(image, 3, angles=10**9)
    with pytest.raises(ValueError, match="too many"):
        granula.angular_spectrum(image, 3, angles=np.zeros(1000001))
    with pytest.raises(ValueError, match="too many"):
        granula.granulometry(image, range(1, 10**9))
    with pytest.raises(ValueError, match="empty"):
        granula.angular_spectrum(image, 3, angles=[])
    with pytest.raises(ValueError, match="does not fit"):
        granula.orientation(image, 25, angles=4)
    with pytest.raises(ValueError, match="lengths is empty"):
        granula.granulometry(image, [])
    with pytest.raises(ValueError, match="whole number"):
        granula.granulometry(image, [3, 4.5])
    with pytest.raises(ValueError, match="step"):
        granula.deskew(image, step=0)
    with pytest.raises(ValueError, match="empty"):
        granula.deskew(image, range=(5, -5))
    with pytest.raises(ValueError, match="allowed: text, closing"):
        granula.deskew(image, method="hough")
    with pytest.raises(ValueError, match="does not fit"):
        granula.deskew(image, length=31)
    with pytest.raises(ValueError, match="NaN"):
        granula.deskew(np.full((10, 10), np.nan, np.float32))
    with pytest.raises(ValueError, match="not representable"):
        granula.rotate(image, 10, fill=300)
    with pytest.raises(ValueError):
        granula.line_opening(np.zeros((4, 4), np.int32), 3, 0)
    with pytest.raises(ValueError, match="either angle"):
        granula.line_opening(image, 3)
    with pytest.raises(ValueError, match="either angle"):
        granula.line_opening(image, 3, 0, angles=4)
    with pytest.raises(ValueError, match="reduce= is for angles="):
        granula.line_erosion(image, 3, 0, reduce="max")
    with pytest.raises(ValueError, match="allowed: 'max', 'min'"):
        granula.line_closing(image, 3, angles=4, reduce="median")
    with pytest.raises(ValueError, match="empty"):
        granula.line_dilation(image, 3, angles=[])
    with pytest.raises(ValueError, match=r"shape \(4, 20, 30\)"):
        granula.line_opening(image, 3, angles=4, out=np.empty((3, 20, 30), np.uint8))
    with pytest.raises(ValueError, match="C-contiguous"):
        granula.line_opening(image, 3, angles=4, out=np.empty((20, 30, 4), np.uint8).transpose(2, 0, 1))
    with pytest.raises(ValueError, match="overlaps the input"):
        granula.line_opening(image, 3, angles=4, reduce="max", out=image)
    with pytest.raises(ValueError, match="does not fit"):
        granula.line_opening(image, 25, angles=4, reduce="min")


try:
    from test_gpu import MISSING, cupy
except ImportError:  # pragma: no cover
    MISSING, cupy = "test_gpu's CuPy check is unavailable", None


@pytest.mark.gpu
@pytest.mark.skipif(MISSING is not None, reason=f"GPU test skipped: {MISSING}")
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cupy_equals_numpy(rng, dtype):
    image = random_image(rng, (129, 257), dtype)
    device_image = cupy.asarray(image)
    for angle in [0, 45, 17.3, 101]:
        got = granula.line_opening(device_image, 15, angle)
        assert isinstance(got, cupy.ndarray)
        np.testing.assert_array_equal(got.get(), granula.line_opening(image, 15, angle))
        np.testing.assert_array_equal(granula.line_closing(device_image, 15, angle).get(),
                                      granula.line_closing(image, 15, angle))
    for name in ["line_opening", "line_closing", "line_erosion", "line_dilation"]:
        f = getattr(granula, name)
        stack = f(device_image, 15, angles=[30, 0, 100.5])
        assert isinstance(stack, cupy.ndarray) and stack.shape == (3, 129, 257)
        np.testing.assert_array_equal(stack.get(), f(image, 15, angles=[30, 0, 100.5]))
        for reduce in ["max", "min"]:
            np.testing.assert_array_equal(f(device_image, 15, angles=12, reduce=reduce).get(),
                                          f(image, 15, angles=12, reduce=reduce))
    sup, orientation = granula.orientation(device_image, 21, angles=30)
    expected_sup, expected_orientation = granula.orientation(image, 21, angles=30)
    np.testing.assert_array_equal(sup.get(), expected_sup)
    np.testing.assert_array_equal(orientation.get(), expected_orientation)
    # Sums: exact for integers; float32 sums are added in another order on the GPU.
    np.testing.assert_allclose(granula.angular_spectrum(device_image, 21, angles=30)[1],
                               granula.angular_spectrum(image, 21, angles=30)[1], rtol=1e-12)
    np.testing.assert_allclose(granula.granulometry(device_image, [3, 9, 27]), granula.granulometry(image, [3, 9, 27]),
                               rtol=1e-12)
    assert granula.deskew(device_image) == granula.deskew(image)
    np.testing.assert_array_equal(granula.rotate(device_image, 7).get(), granula.rotate(image, 7))
