"""Footprints of every shape: scikit-image's masks, and results equal to scipy.ndimage's with
the same footprint mask, pixel for pixel."""

import numpy as np
import pytest

import granula
from granula import footprints

skimage_morphology = pytest.importorskip("skimage.morphology", reason="scikit-image is not installed")
scipy_ndimage = pytest.importorskip("scipy.ndimage", reason="scipy is not installed")

from conftest import DTYPES, random_image  # noqa: E402


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (lambda r=r: footprints.disk(r), lambda r=r: skimage_morphology.disk(r)) for r in (1, 2, 3, 5, 10, 31)
    ]
    + [(lambda r=r: footprints.diamond(r), lambda r=r: skimage_morphology.diamond(r)) for r in (1, 2, 7)]
    + [(lambda m=m, n=n: footprints.octagon(m, n), lambda m=m, n=n: skimage_morphology.octagon(m, n)) for m, n in ((1, 1), (2, 3), (5, 2), (4, 4))]
    + [(lambda w=w, h=h: footprints.ellipse(w, h), lambda w=w, h=h: skimage_morphology.ellipse(w, h)) for w, h in ((1, 1), (3, 2), (7, 4), (5, 9))],
)
def test_masks_equal_scikit_image(ours, theirs):
    mask, origin = ours().footprint()
    expected = theirs().astype(bool)
    np.testing.assert_array_equal(mask, expected)
    assert origin == (expected.shape[0] // 2, expected.shape[1] // 2)


def shapes(rng):
    random_mask = rng.random((7, 10)) < 0.5
    random_mask[3, 5] = True
    return [
        "line:25:30",
        "line:9:-71.3",
        "line:60:135",
        "line:7:100",
        "line:130:30",  # longer than the images are wide: run shortened under constant and ignore
        "line:100:80",
        "disk:4",
        "disk:7:4",
        "disk:9:8",
        "diamond:3",
        "octagon:2:2",
        "ellipse:5x2",
        random_mask,
    ]


def scipy_footprint(footprint):
    """The footprint's mask and its origin as scipy counts it, from the mask's centre (a line's
    origin is there, give or take a row where its rounding is lopsided: line:130:30)."""
    mask, (row, col) = footprints.as_footprint(footprint, None).footprint()
    return mask, (row - mask.shape[0] // 2, col - mask.shape[1] // 2)


SCIPY = {
    "erosion": scipy_ndimage.grey_erosion,
    "dilation": scipy_ndimage.grey_dilation,
    "opening": scipy_ndimage.grey_opening,
    "closing": scipy_ndimage.grey_closing,
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", ["reflect", "nearest", "mirror", "wrap", "constant"])
@pytest.mark.parametrize("operation", sorted(SCIPY))
def test_matches_scipy_with_the_same_mask(rng, operation, mode, dtype):
    image = random_image(rng, (41, 53), dtype)
    cval = 3 if dtype != np.float32 else -1.5
    for footprint in shapes(rng):
        mask, origin = scipy_footprint(footprint)
        got = getattr(granula, operation)(image, footprint, mode=mode, cval=cval)
        expected = SCIPY[operation](image, footprint=mask, mode=mode, cval=cval, origin=origin)
        np.testing.assert_array_equal(got, expected, err_msg=f"{footprint} {operation} {mode}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_ignore_is_scipy_constant_with_the_neutral_value(rng, dtype):
    image = random_image(rng, (37, 29), dtype)
    top = np.inf if dtype == np.float32 else np.iinfo(dtype).max
    bottom = -np.inf if dtype == np.float32 else 0
    for footprint in shapes(rng):
        mask, origin = scipy_footprint(footprint)
        np.testing.assert_array_equal(
            granula.erosion(image, footprint),
            scipy_ndimage.grey_erosion(image, footprint=mask, mode="constant", cval=top, origin=origin),
        )
        np.testing.assert_array_equal(
            granula.dilation(image, footprint),
            scipy_ndimage.grey_dilation(image, footprint=mask, mode="constant", cval=bottom, origin=origin),
        )


def test_mask_origin_moves_the_result(rng):
    image = random_image(rng, (20, 20), np.uint8)
    shifted = footprints.mask(np.ones((1, 3), dtype=bool), origin=(0, 0))
    # The window x .. x + 2 is hline:3 (window x - 1 .. x + 1) read one pixel to the right.
    expected = granula.erosion(image, "hline:3", mode="nearest")
    got = granula.erosion(image, shifted, mode="nearest")
    np.testing.assert_array_equal(got[:, :-1], expected[:, 1:])


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: footprints.line(5, float("nan")), "finite"),
        (lambda: footprints.line(0, 30), "must be >= 1"),
        (lambda: footprints.disk(-1), "must be >= 0"),
        (lambda: footprints.disk(5, periodic_lines=5), "0 \\(exact\\), 4, 6 or 8"),
        (lambda: footprints.octagon(2, 0), "must be >= 1"),
        (lambda: footprints.mask(np.zeros((3, 3), dtype=bool)), "no set pixel"),
        (lambda: footprints.mask(np.array([[0, 2, 1]])), "only 0 and 1"),
        (lambda: footprints.mask(np.ones((3, 3)), origin=(3, 0)), "outside"),
        (lambda: footprints.mask(np.ones((2, 2, 2))), "non-empty 2-D"),
    ],
)
def test_bad_footprints(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def matlab_reference(name):
    """MATLAB's strel('disk', r, 0) and strel('diamond', r) for r = 0..10, as scikit-image ships
    them in its Debian package (scripts/install-deps extracts it into build/reference)."""
    import os
    from pathlib import Path

    candidates = [os.environ.get("GRANULA_SKIMAGE_DATA", ""),
                  Path(__file__).resolve().parents[2] / "build/reference/usr/lib/python3/dist-packages/skimage/data",
                  "/usr/lib/python3/dist-packages/skimage/data"]
    for folder in candidates:
        path = Path(folder) / name
        if folder and path.is_file():
            return np.load(path)
    pytest.skip(f"{name} not found (scripts/install-deps extracts python3-skimage's data into build/reference)")


@pytest.mark.parametrize("shape, make", [("disk", footprints.disk), ("diamond", footprints.diamond)])
def test_masks_equal_matlab(shape, make):
    data = matlab_reference(f"{shape}-matlab-output.npz")
    assert len(data.files) == 11
    for key in data.files:
        mask, origin = make(int(key)).footprint()
        expected = data[key].astype(bool)
        np.testing.assert_array_equal(mask, expected, err_msg=f"{shape} radius {int(key)}")
        assert origin == (expected.shape[0] // 2, expected.shape[1] // 2)
