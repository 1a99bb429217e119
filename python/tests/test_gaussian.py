"""granula.gaussian against scipy.ndimage.gaussian_filter (fir: to float rounding; deriche and
recursive6: within their stated accuracy), OpenCV, the dtype rules, and every documented error."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import granula

MODES = ["reflect", "constant", "nearest", "mirror", "wrap"]


def _image(shape=(61, 77), dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        return rng.random(shape, dtype=np.float32) * 10
    return rng.integers(0, np.iinfo(dtype).max, shape, dtype=dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [(0, 0), (1, 0), (0, 2), (2, 1)])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_fir_matches_scipy(mode, order, dtype):
    img = _image(dtype=dtype)
    got = granula.gaussian(img, (1.2, 2.5), order=order, mode=mode, cval=3.0, method="fir")
    want = ndi.gaussian_filter(img.astype(np.float64), (1.2, 2.5), order=order, mode=mode, cval=3.0)
    assert got.dtype == np.float32
    scale = max(np.abs(want).max(), np.abs(img).max().astype(float))
    assert np.abs(got - want).max() <= 1e-5 * scale


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(1, 1), (1, 40), (33, 1), (90, 71)])
def test_deriche_within_its_accuracy_of_scipy(mode, shape):
    img = _image(shape)
    got = granula.gaussian(img, 6.0, mode=mode, method="deriche")
    want = ndi.gaussian_filter(img.astype(np.float64), 6.0, mode=mode, truncate=12.0)
    assert np.abs(got - want).max() <= 2e-3 * np.abs(img).max()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [(0, 0), (1, 0), (0, 2)])
@pytest.mark.parametrize("method, bounds", [("recursive6", (2e-5, 1e-4)), ("recursive5", (1e-4, 1e-3))])
def test_recursive6_and_5_within_their_accuracy_of_scipy(mode, order, method, bounds):
    img = _image((90, 71))
    got = granula.gaussian(img, (5.0, 9.0), order=order, mode=mode, cval=2.0, method=method)
    want = ndi.gaussian_filter(img.astype(np.float64), (5.0, 9.0), order=order, mode=mode, cval=2.0, truncate=12.0)
    assert np.abs(got - want).max() <= bounds[2 in order] * np.abs(img).max()


def test_auto_is_recursive5_on_the_cpu():
    img = _image((40, 50))
    assert np.array_equal(granula.gaussian(img, 6.0), granula.gaussian(img, 6.0, method="recursive5"))


def test_truncate_radius_and_sigma_zero():
    img = _image()
    got = granula.gaussian(img, (0, 2.0), method="fir", radius=(0, 3))
    want = ndi.gaussian_filter1d(img.astype(np.float64), 2.0, axis=1, radius=3)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(img).max()
    got = granula.gaussian(img, 2.0, truncate=2.0)
    want = ndi.gaussian_filter(img.astype(np.float64), 2.0, truncate=2.0)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(img).max()
    assert np.array_equal(granula.gaussian(img, 0.0), img)


def test_input_dtype_output_and_out():
    img = _image(dtype=np.uint8)
    f = granula.gaussian(img, 3.0)
    u = granula.gaussian(img, 3.0, output_dtype=np.uint8)
    assert u.dtype == np.uint8
    assert np.array_equal(u, np.clip(np.rint(f), 0, 255).astype(np.uint8))
    out = np.empty(img.shape, np.float32)
    assert granula.gaussian(img, 3.0, out=out) is out
    assert np.array_equal(out, f)


def test_matches_opencv_reflect_at_equal_kernel():
    cv2 = pytest.importorskip("cv2")
    img = _image((64, 80))
    got = granula.gaussian(img, 2.0, method="fir", radius=6)
    want = cv2.GaussianBlur(img, (13, 13), 2.0, borderType=cv2.BORDER_REFLECT)
    assert np.abs(got - want).max() <= 1e-5 * np.abs(img).max()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(sigma=-1.0), "sigma"),
        (dict(sigma=float("nan")), "sigma"),
        (dict(sigma=2.0, order=3), "allowed: 0, 1, 2"),
        (dict(sigma=2.0, order=1, method="yvv"), "order 0 only"),
        (dict(sigma=2.0, mode="bounce"), "unknown border mode"),
        (dict(sigma=2.0, mode="ignore"), "ignore"),
        (dict(sigma=2.0, method="box"), "unknown Gaussian method"),
        (dict(sigma=(1.0, 2.0, 3.0)), "one per axis"),
        (dict(sigma=2.0, radius=-3), "radius"),
        (dict(sigma=2.0, truncate=0.0), "truncate"),
        (dict(sigma=2.0, output_dtype=np.uint16), "output_dtype"),
        (dict(sigma=2.0, method="yvv", split="three_way"), "unknown Gaussian split"),
        (dict(sigma=2.0, method="deriche", split="two_way_exact"), "applies to the yvv methods"),
        (dict(sigma=1e7), "sigma up to 100000"),
        (dict(sigma=1e300), r"is 1e\+300;"),
        (dict(sigma=2.0, method="fir", truncate=1e9), "fir radius"),
    ],
)
def test_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        granula.gaussian(_image(dtype=np.uint8), **kwargs)


def test_bad_out():
    with pytest.raises(ValueError, match="out"):
        granula.gaussian(_image(), 1.0, out=np.empty((3, 3), np.float32))


def test_gpu_equals_cpu():
    cp = pytest.importorskip("cupy")
    if not granula.cuda_available():
        pytest.skip("no CUDA device")
    img = _image((300, 257))
    for method in ["deriche", "fir"]:
        want = granula.gaussian(img, (4.0, 7.0), order=(0, 1), method=method)
        got = granula.gaussian(cp.asarray(img), (4.0, 7.0), order=(0, 1), method=method)
        assert isinstance(got, cp.ndarray)
        assert np.abs(cp.asnumpy(got) - want).max() <= 1e-5 * np.abs(img).max()


@pytest.mark.parametrize("method", ["recursive6", "recursive5"])
def test_recursive6_and_5_are_cpu_only_for_now(method):
    cp = pytest.importorskip("cupy")
    if not granula.cuda_available():
        pytest.skip("no CUDA device")
    with pytest.raises(RuntimeError, match=method):
        granula.gaussian(cp.asarray(_image()), 5.0, method=method)


def test_yvv_split_on_the_cpu():
    img = _image((40, 30))
    one_way = granula.gaussian(img, 4.0, method="yvv")
    assert np.array_equal(granula.gaussian(img, 4.0, method="yvv", split="two_way_exact"), one_way)
    with pytest.raises(RuntimeError, match="CUDA backend only"):
        granula.gaussian(img, 4.0, method="yvv", split="two_way")


def test_gpu_yvv_splits():
    cp = pytest.importorskip("cupy")
    if not granula.cuda_available():
        pytest.skip("no CUDA device")
    img = _image((300, 257))
    want = granula.gaussian(img, (4.0, 7.0), method="yvv")
    for split in ["one_way", "two_way_exact"]:
        got = cp.asnumpy(granula.gaussian(cp.asarray(img), (4.0, 7.0), method="yvv", split=split))
        assert np.abs(got - want).max() <= 1e-5 * np.abs(img).max(), split
    paper = cp.asnumpy(granula.gaussian(cp.asarray(img), (4.0, 7.0), method="yvv", split="two_way"))
    off = np.abs(paper - want).max()
    assert 1e-3 * np.abs(img).max() < off < 0.5 * np.abs(img - want).max()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [(0, 0), (1, 2), (2, 0)])
@pytest.mark.parametrize("shape", [(150, 290), (7, 5), (41, 3)])
def test_fir_both_axes_at_sigma_5_matches_scipy(mode, order, shape):
    # Both axes fir run as one pass (bands of 64 rows, 128-column chunks): radius 20, so the
    # small shapes are shorter than the kernel on both axes.
    img = _image(shape, seed=3)
    got = granula.gaussian(img, 5.0, order=order, mode=mode, cval=-2.0, method="fir")
    want = ndi.gaussian_filter(img.astype(np.float64), 5.0, order=order, mode=mode, cval=-2.0)
    assert np.abs(got - want).max() <= 1e-5 * max(np.abs(want).max(), np.abs(img).max())


def test_fir_nan_reaches_what_scipy_reaches():
    img = _image((140, 300))
    img[70, 150] = np.nan
    img[3, 290] = np.inf
    got = granula.gaussian(img, (5.0, 3.0), method="fir")
    want = ndi.gaussian_filter(img, (5.0, 3.0))
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
