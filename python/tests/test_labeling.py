"""granula.label against scipy.ndimage.label and skimage.measure.label (exact labels) on the
image families of issue 6 (random images of every density and granularity up to 8192x8192,
structured images, real scanned pages, equal-value images of every input type), its statistics
against skimage.measure.regionprops, CPU against GPU, and every documented error."""

import pathlib

import numpy as np
import pytest
from scipy import ndimage
from skimage import filters, io, measure

import granula

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
STRUCTURE = {1: ndimage.generate_binary_structure(2, 1), 2: np.ones((3, 3), bool)}
DENSITIES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
GRANULARITIES = [1, 2, 4, 8, 16]
STATISTICS = ("area", "min_row", "min_col", "max_row", "max_col", "centroid_row", "centroid_col", "value")


def blocks(rng, shape, density, granularity, levels=1):
    """YACCLAB-style random image: granularity x granularity blocks, each foreground (a value in
    1..levels, levels < 256) with probability density. float32 draws keep 8192x8192 affordable."""
    small = (-(-shape[0] // granularity), -(-shape[1] // granularity))
    on = rng.random(small, dtype=np.float32) < density
    values = on.astype(np.uint8) if levels == 1 else rng.integers(1, levels + 1, small, dtype=np.uint8) * on
    if granularity == 1:
        return values
    return np.repeat(np.repeat(values, granularity, 0), granularity, 1)[: shape[0], : shape[1]]


def random_image(density, granularity, shape=(509, 611)):
    """The random image of one density and granularity, the same in every test that asks for it."""
    rng = np.random.default_rng([6301, round(density * 10), granularity])
    return blocks(rng, shape, density, granularity)


def chessboard(shape, cell=1):
    """Squares of cell x cell pixels, alternately 0 and 1 (built in uint8: 8192x8192 stays small)."""
    rows = (np.arange(shape[0]) // cell % 2).astype(np.uint8)
    cols = (np.arange(shape[1]) // cell % 2).astype(np.uint8)
    return rows[:, None] ^ cols[None, :]


def _spiral(n):
    """A one-pixel-wide square spiral in an n x n image."""
    image = np.zeros((n, n), np.uint8)
    y, x, dy, dx, length = n // 2, n // 2, 0, 1, 2
    while True:
        for _ in range(2):
            for _ in range(length):
                if not (0 <= y < n and 0 <= x < n):
                    return image
                image[y, x] = 1
                y, x = y + dy, x + dx
            dy, dx = dx, -dy
        length += 2


def structured_images():
    """Issue 6's structured families as (name, binary uint8 image)."""
    rng = np.random.default_rng(6311)
    return [
        ("all zeros", np.zeros((77, 130), np.uint8)),
        ("all ones", np.ones((300, 1001), np.uint8)),
        ("one pixel", np.ones((1, 1), np.uint8)),
        ("chessboard", chessboard((257, 131))),
        ("chessboard of 3x3 squares", chessboard((100, 203), 3)),
        ("spiral", _spiral(301)),
        ("spiral, even size", _spiral(64)),
        ("row", blocks(rng, (1, 5000), 0.7, 1)),
        ("column", blocks(rng, (5000, 1), 0.7, 1)),
        ("row of ones", np.ones((1, 4099), np.uint8)),
        ("column of ones", np.ones((4099, 1), np.uint8)),
    ]


def scanned_pages():
    """data/page.png (printed text) and data/text.png (handwriting), photographed and unevenly
    lit, thresholded as documents are: at Otsu's global level and by Sauvola's local one, both
    polarities: (name, bool image)."""
    images = []
    for name in ("page.png", "text.png"):
        grey = io.imread(DATA / name)
        for method, level in [("Otsu", filters.threshold_otsu(grey)), ("Sauvola", filters.threshold_sauvola(grey))]:
            images.append((f"{name} > {method}", grey > level))
            images.append((f"{name} <= {method}", grey <= level))
    return images


def large_image(name):
    """The 8192x8192 images."""
    shape = (8192, 8192)
    if name == "all ones":
        return np.ones(shape, np.uint8)
    if name == "chessboard":
        return chessboard(shape)
    density, granularity = {"density 0.5 granularity 1": (0.5, 1), "density 0.9 granularity 16": (0.9, 16)}[name]
    return random_image(density, granularity, shape)


LARGE = ["density 0.5 granularity 1", "density 0.9 granularity 16", "all ones", "chessboard"]


def assert_labels_equal(got, want, what):
    """numpy.testing's report on a mismatch, without its cost (seconds at 8192x8192) on a match."""
    if not np.array_equal(got, want):
        np.testing.assert_array_equal(got, want, err_msg=what)


def expect_scipy_labels(image, connectivity, labels, num, what):
    expected, n = ndimage.label(image, STRUCTURE[connectivity])
    assert num == n, what
    assert_labels_equal(labels, expected, what)


@pytest.mark.parametrize("connectivity", [1, 2])
@pytest.mark.parametrize("granularity", GRANULARITIES)
@pytest.mark.parametrize("density", DENSITIES)
def test_binary_equals_scipy(connectivity, density, granularity):
    image = random_image(density, granularity)
    labels, num = granula.label(image, connectivity, return_num=True)
    assert labels.dtype == np.int32
    expect_scipy_labels(image, connectivity, labels, num, f"density {density} granularity {granularity}")


@pytest.mark.parametrize("connectivity", [1, 2])
def test_structured_images_equal_scipy(connectivity):
    for name, image in structured_images():
        labels, num = granula.label(image, connectivity, return_num=True)
        expect_scipy_labels(image, connectivity, labels, num, name)


@pytest.mark.parametrize("connectivity", [1, 2])
def test_scanned_pages_equal_scipy(connectivity):
    for name, image in scanned_pages():
        labels, num = granula.label(image, connectivity, return_num=True)
        expect_scipy_labels(image, connectivity, labels, num, name)


@pytest.mark.parametrize("name", LARGE)
def test_8192_squared_equals_scipy(name):
    image = large_image(name)
    for connectivity in (1, 2):
        labels, num = granula.label(image, connectivity, return_num=True)
        expect_scipy_labels(image, connectivity, labels, num, f"{name} connectivity {connectivity}")


@pytest.mark.parametrize("shape", [(1, 1), (1, 57), (57, 1), (3, 2), (600, 500)])
def test_shapes_and_bool_input(shape):
    rng = np.random.default_rng(6302)
    image = rng.random(shape) < 0.5
    np.testing.assert_array_equal(granula.label(image), ndimage.label(image, STRUCTURE[2])[0])


def equal_value_images():
    """Multi-valued images as (name, image, a second background to try): random blocks of a few
    values in each input type, uint32 ones whose values differ only above bit 16 (a path that
    kept 16 bits would merge their components), and the grey pages, whole and quantised."""
    rng = np.random.default_rng(6303)
    few = blocks(rng, (131, 97), 0.8, 2, levels=4)
    grey = io.imread(DATA / "page.png")
    return [
        ("uint8, 4 values", few, 3),
        ("uint16, 4 values", few.astype(np.uint16) * 1000, 3000),
        ("uint32, 4 values above 2**16", few.astype(np.uint32) * 65536 + 1, 2 * 65536 + 1),
        ("uint32, the largest value", np.where(few == 2, np.uint32(2**32 - 1), few.astype(np.uint32)), 2**32 - 1),
        ("page.png grey", grey, 255),
        ("page.png in 8 levels", grey // 32, 7),
        ("page.png in 8 levels above 2**16", (grey // 32).astype(np.uint32) * 65536 + 1, 1),
    ]


@pytest.mark.parametrize("connectivity", [1, 2])
def test_equal_value_equals_skimage(connectivity):
    for name, image, other_background in equal_value_images():
        for background in (0, other_background):
            what = f"{name}, background {background}"
            expected, n = measure.label(image, connectivity=connectivity, background=background, return_num=True)
            labels, num = granula.label(image, connectivity, background=background, return_num=True)
            assert num == n, what
            np.testing.assert_array_equal(labels, expected, err_msg=what)


def first_pixels(labels):
    """The flat index of each component's first pixel in raster order, by label."""
    found, index = np.unique(labels.ravel(), return_index=True)
    return index[found > 0]


def test_uint32_input(monkeypatch):
    """uint32 labels like the other types: int32 labels (int64 when a component per pixel could
    overflow them), statistics whose value is the uint32 pixel value, strided views."""
    image = blocks(np.random.default_rng(6312), (131, 97), 0.8, 2, levels=4).astype(np.uint32) * 65536 + 1
    labels, num, stats = granula.label(image, return_num=True, statistics=True)
    assert labels.dtype == np.int32
    np.testing.assert_array_equal(labels, measure.label(image, connectivity=2))
    assert num == labels.max() == len(stats["value"])
    assert stats["value"].dtype == np.uint32
    np.testing.assert_array_equal(stats["value"], image.ravel()[first_pixels(labels)])
    assert stats["value"].max() > 65535
    np.testing.assert_array_equal(stats["area"], np.bincount(labels.ravel())[1:])
    view = image[3:120:3, 5:90]
    np.testing.assert_array_equal(granula.label(view, 1), measure.label(view, connectivity=1))
    monkeypatch.setattr(granula.labeling, "_INT32_MAX", 0)
    wide, wide_stats = granula.label(image, statistics=True)
    assert wide.dtype == np.int64
    np.testing.assert_array_equal(wide, labels)
    np.testing.assert_array_equal(wide_stats["value"], stats["value"])


def test_strided_input():
    rng = np.random.default_rng(6304)
    image = blocks(rng, (120, 150), 0.5, 1)[5:100:2, 3:140]
    np.testing.assert_array_equal(granula.label(image), ndimage.label(image, STRUCTURE[2])[0])


def test_statistics_equal_regionprops():
    rng = np.random.default_rng(6305)
    image = blocks(rng, (90, 110), 0.5, 2, levels=3)
    intensity = rng.random(image.shape).astype(np.float32)
    labels, stats = granula.label(image, statistics=True, intensity_image=intensity)
    props = measure.regionprops(labels, intensity_image=intensity)
    assert len(props) == len(stats["area"])
    for i, p in enumerate(props):
        assert p.label == i + 1
        assert stats["area"][i] == p.area
        assert (stats["min_row"][i], stats["min_col"][i], stats["max_row"][i], stats["max_col"][i]) == p.bbox
        np.testing.assert_allclose((stats["centroid_row"][i], stats["centroid_col"][i]), p.centroid, rtol=1e-12)
        assert stats["value"][i] == image[p.coords[0][0], p.coords[0][1]]
        np.testing.assert_allclose(stats["mean_intensity"][i], p.intensity_mean, rtol=1e-6)
        assert stats["min_intensity"][i] == p.intensity_min
        assert stats["max_intensity"][i] == p.intensity_max


def test_errors():
    image = np.ones((4, 5), np.uint8)
    for c in (0, 3, -1, "2", True, 1.5):
        with pytest.raises(ValueError, match=r"connectivity must be 1 \(4-neighbours\) or 2 \(8-neighbours\)"):
            granula.label(image, c)
    for shape in [(0, 5), (5, 0)]:
        with pytest.raises(ValueError, match="is empty .*at least one pixel"):
            granula.label(np.zeros(shape, np.uint8))
    for dtype, background in [(np.uint8, 256), (np.uint16, 65536), (np.uint32, 2**32), (np.uint8, -1)]:
        with pytest.raises(ValueError, match="background"):
            granula.label(image.astype(dtype), background=background)
    with pytest.raises(ValueError, match="intensity"):
        granula.label(image, statistics=True, intensity_image=np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="GPU method"):
        granula.label(image, method="tile_merge")
    with pytest.raises(ValueError, match="GPU method"):
        granula.label(granula.binary.pack(image), method="tile_merge")
    with pytest.raises(ValueError, match="tile_merge"):
        granula.label(image, method="bke")


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint64, np.complex64]
)
def test_unsupported_dtypes(dtype):
    """Float and signed input: a ValueError that names the dtype and the allowed ones."""
    name = np.dtype(dtype).name
    with pytest.raises(ValueError, match=f"image has dtype {name}; allowed: bool, uint8, uint16, uint32"):
        granula.label(np.ones((4, 5), dtype))


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed: the GPU labelling tests need it")
    if not granula.cuda_available():
        pytest.skip("no CUDA device or this granula build has no CUDA backend")
    return cupy


def expect_gpu_equals_cpu(cupy, image, connectivity, what, method="auto", statistics=True):
    """CuPy input labelled by `method` gives the CPU's count, labels and (when asked) statistics,
    the statistics as CuPy arrays of the CPU's dtypes."""
    cpu = granula.label(image, connectivity, return_num=True, statistics=statistics)
    gpu = granula.label(cupy.asarray(image), connectivity, return_num=True, statistics=statistics, method=method)
    assert isinstance(gpu[0], cupy.ndarray), what
    assert gpu[1] == cpu[1], what
    assert_labels_equal(cupy.asnumpy(gpu[0]), cpu[0], what)
    if statistics:
        for key in STATISTICS:
            assert isinstance(gpu[2][key], cupy.ndarray), f"{what}: {key}"
            assert gpu[2][key].dtype == cpu[2][key].dtype, f"{what}: {key}"
            np.testing.assert_array_equal(cupy.asnumpy(gpu[2][key]), cpu[2][key], err_msg=f"{what}: {key}")


@pytest.mark.parametrize("connectivity", [1, 2])
def test_gpu_equals_cpu(connectivity):
    cupy = _cupy()
    rng = np.random.default_rng(6306)
    for density, granularity, levels in [(0.5, 1, 1), (0.9, 3, 1), (0.7, 2, 3)]:
        image = blocks(rng, (513, 771), density, granularity, levels)
        expect_gpu_equals_cpu(cupy, image, connectivity, f"density {density} granularity {granularity}")
    labels, num, stats = granula.label(cupy.zeros((5, 7), np.uint8), connectivity, return_num=True, statistics=True)
    assert num == 0 and int(labels.max()) == 0
    assert all(isinstance(v, cupy.ndarray) and v.size == 0 for v in stats.values())


@pytest.mark.parametrize("connectivity", [1, 2])
def test_packed_images_equal_their_pixels(connectivity):
    rng = np.random.default_rng(6307)
    for shape, density in [((1, 1), 1.0), ((37, 63), 0.5), ((29, 65), 0.9), ((41, 200), 0.1)]:
        image = blocks(rng, shape, density, 1, 1)
        packed = granula.binary.pack(image)
        want, want_num, want_stats = granula.label(image, connectivity, return_num=True, statistics=True)
        got, got_num, got_stats = granula.label(packed, connectivity, return_num=True, statistics=True)
        assert got_num == want_num
        np.testing.assert_array_equal(got, want)
        for key in want_stats:
            np.testing.assert_array_equal(got_stats[key], want_stats[key], err_msg=key)
    with pytest.raises(ValueError, match="set bits"):
        granula.label(packed, background=1)


def test_packed_images_on_the_gpu_are_unpacked_and_labelled():
    cupy = _cupy()
    image = blocks(np.random.default_rng(6308), (64, 130), 0.6, 2, 1)
    labels = granula.label(granula.binary.pack(cupy.asarray(image)))
    np.testing.assert_array_equal(cupy.asnumpy(labels), granula.label(image))


def test_gpu_intensity_statistics_equal_cpu():
    cupy = _cupy()
    rng = np.random.default_rng(7)
    image = (rng.random((301, 257)) < 0.6).astype(np.uint8)
    for intensity in [rng.integers(0, 65535, image.shape, dtype=np.uint16), rng.random(image.shape, dtype=np.float32)]:
        _, cpu_stats = granula.label(image, statistics=True, intensity_image=intensity)
        _, gpu_stats = granula.label(cupy.asarray(image), statistics=True, intensity_image=cupy.asarray(intensity))
        for key in ["mean_intensity", "min_intensity", "max_intensity"]:
            assert isinstance(gpu_stats[key], cupy.ndarray), key
            np.testing.assert_allclose(cupy.asnumpy(gpu_stats[key]), cpu_stats[key], rtol=1e-12, err_msg=key)
    with pytest.raises(ValueError, match="CUDA array"):
        granula.label(cupy.asarray(image), statistics=True, intensity_image=intensity)


@pytest.mark.parametrize("connectivity", [1, 2])
def test_gpu_default_method_equals_cpu_on_every_family(connectivity):
    """The default GPU method on the images the CPU is checked on against scipy and skimage
    above: every density and granularity, the structured images, the scanned pages, the
    equal-value images of every input type."""
    cupy = _cupy()
    images = [(f"density {d} granularity {g}", random_image(d, g)) for d in DENSITIES for g in GRANULARITIES]
    images += structured_images() + scanned_pages()
    images += [(name, image) for name, image, _ in equal_value_images()]
    for name, image in images:
        expect_gpu_equals_cpu(cupy, image, connectivity, name)


@pytest.mark.parametrize("name", LARGE)
def test_gpu_8192_squared_equals_cpu(name):
    cupy = _cupy()
    image = large_image(name)
    for connectivity in (1, 2):
        # No statistics: the 4-connected chessboard has 2**25 components.
        expect_gpu_equals_cpu(cupy, image, connectivity, f"{name} connectivity {connectivity}", statistics=False)


@pytest.mark.parametrize("connectivity", [1, 2])
def test_gpu_tile_merge_equals_cpu(connectivity):
    """The seed paper's tile merge gives the CPU's labels and statistics on the default path's
    image families."""
    cupy = _cupy()
    rng = np.random.default_rng(6309)
    images = [(f"density {d} granularity {g}", random_image(d, g)) for d in (0.1, 0.5, 0.9) for g in (1, 4, 16)]
    images += structured_images()
    images += [(name, image) for name, image, _ in equal_value_images()]
    images += [
        ("4 values, 4099 wide", blocks(rng, (131, 4099), 0.8, 2, levels=4)),
        ("uint16, 100 values", blocks(rng, (257, 300), 0.9, 3, levels=100).astype(np.uint16) * 7),
    ]
    for name, image in images:
        expect_gpu_equals_cpu(cupy, image, connectivity, name, method="tile_merge")


def test_gpu_errors():
    cupy = _cupy()
    for dtype in (np.float32, np.int32, np.int64):
        with pytest.raises(ValueError, match="allowed: bool, uint8, uint16, uint32"):
            granula.label(cupy.ones((4, 5), dtype))
    with pytest.raises(ValueError, match="empty"):
        granula.label(cupy.zeros((0, 5), np.uint8))
    with pytest.raises(ValueError, match="background"):
        granula.label(cupy.ones((4, 5), np.uint16), background=65536)


def test_label_dtype_rule():
    """int32 unless the most components the shape allows exceeds 2**31 - 1 (no pixels needed)."""
    from granula.labeling import _label_dtype

    # Binary: a 4-connected chessboard has ceil(M*N/2) components, an 8-connected one ceil(M/2)*ceil(N/2).
    assert _label_dtype(65536, 65535, 1, True) == np.int32  # 2147450880
    assert _label_dtype(65536, 65537, 1, True) == np.int64  # 2147516416
    assert _label_dtype(92680, 92680, 2, True) == np.int32  # 46340^2 = 2147395600
    assert _label_dtype(92681, 92681, 2, True) == np.int64  # 46341^2 = 2147488281
    # Equal-value input: a component per pixel.
    assert _label_dtype(46340, 46340, 2, False) == np.int32  # 2147395600
    assert _label_dtype(46341, 46341, 2, False) == np.int64  # 2147488281
    assert _label_dtype(1, 2**31, 1, False) == np.int64


@pytest.fixture
def int64_labels(monkeypatch):
    """Lowers the int32 limit so that small images take the int64 label path end to end."""
    monkeypatch.setattr(granula.labeling, "_INT32_MAX", 0)


@pytest.mark.parametrize("connectivity", [1, 2])
def test_int64_labels_equal_scipy(int64_labels, connectivity):
    rng = np.random.default_rng(6309)
    for density, granularity, levels in [(0.5, 1, 1), (0.9, 3, 1), (0.7, 2, 3)]:
        image = blocks(rng, (157, 203), density, granularity, levels)
        if levels == 1:
            expected, n = ndimage.label(image, STRUCTURE[connectivity])
        else:
            expected, n = measure.label(image, connectivity=connectivity, return_num=True)
        labels, num, stats = granula.label(image, connectivity, return_num=True, statistics=True,
                                           intensity_image=image.astype(np.float32))
        assert labels.dtype == np.int64
        assert num == n
        np.testing.assert_array_equal(labels, expected)
        np.testing.assert_array_equal(stats["area"], np.bincount(expected.ravel())[1:])
        np.testing.assert_array_equal(stats["mean_intensity"], stats["value"].astype(np.float64))
    packed = granula.binary.pack(image > 0)
    got = granula.label(packed, connectivity)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, ndimage.label(image > 0, STRUCTURE[connectivity])[0])


def test_int64_labels_on_the_gpu_equal_cpu(int64_labels):
    cupy = _cupy()
    rng = np.random.default_rng(6310)
    image = blocks(rng, (513, 771), 0.7, 2, 3)
    intensity = rng.random(image.shape, dtype=np.float32)
    cpu, cpu_stats = granula.label(image, statistics=True, intensity_image=intensity)
    gpu, gpu_stats = granula.label(cupy.asarray(image), statistics=True, intensity_image=cupy.asarray(intensity))
    assert cpu.dtype == np.int64 and gpu.dtype == cupy.int64
    np.testing.assert_array_equal(cupy.asnumpy(gpu), cpu)
    for key in cpu_stats:
        np.testing.assert_allclose(cupy.asnumpy(gpu_stats[key]), cpu_stats[key], rtol=1e-12, err_msg=key)
