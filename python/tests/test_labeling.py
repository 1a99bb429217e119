"""granula.label against scipy.ndimage.label and skimage.measure.label (exact labels), its
statistics against skimage.measure.regionprops, CPU against GPU, and every documented error."""

import numpy as np
import pytest
from scipy import ndimage
from skimage import measure

import granula


def blocks(rng, shape, density, granularity, levels=1):
    """YACCLAB-style random image: granularity x granularity blocks, each foreground (a value in
    1..levels) with probability density."""
    small = (-(-shape[0] // granularity), -(-shape[1] // granularity))
    on = rng.random(small) < density
    values = rng.integers(1, levels + 1, small) * on
    return np.repeat(np.repeat(values, granularity, 0), granularity, 1)[: shape[0], : shape[1]].astype(np.uint8)


STRUCTURE = {1: ndimage.generate_binary_structure(2, 1), 2: np.ones((3, 3), bool)}


@pytest.mark.parametrize("connectivity", [1, 2])
@pytest.mark.parametrize("density", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("granularity", [1, 4])
def test_binary_equals_scipy(connectivity, density, granularity):
    rng = np.random.default_rng(6301)
    image = blocks(rng, (157, 203), density, granularity)
    expected, n = ndimage.label(image, STRUCTURE[connectivity])
    labels, num = granula.label(image, connectivity, return_num=True)
    assert labels.dtype == np.int32
    assert num == n
    np.testing.assert_array_equal(labels, expected)


@pytest.mark.parametrize("shape", [(1, 1), (1, 57), (57, 1), (3, 2), (600, 500)])
def test_shapes_and_bool_input(shape):
    rng = np.random.default_rng(6302)
    image = rng.random(shape) < 0.5
    np.testing.assert_array_equal(granula.label(image), ndimage.label(image, STRUCTURE[2])[0])


@pytest.mark.parametrize("connectivity", [1, 2])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_equal_value_equals_skimage(connectivity, dtype):
    rng = np.random.default_rng(6303)
    image = blocks(rng, (131, 97), 0.8, 2, levels=4).astype(dtype)
    expected = measure.label(image, connectivity=connectivity, background=0)
    np.testing.assert_array_equal(granula.label(image, connectivity), expected)
    expected3 = measure.label(image, connectivity=connectivity, background=3)
    np.testing.assert_array_equal(granula.label(image, connectivity, background=3), expected3)


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
    for c in (0, 3, "2", True):
        with pytest.raises(ValueError, match="connectivity"):
            granula.label(image, c)
    with pytest.raises(ValueError, match="float32"):
        granula.label(image.astype(np.float32))
    with pytest.raises(ValueError):
        granula.label(np.zeros((0, 5), np.uint8))
    with pytest.raises(ValueError, match="background"):
        granula.label(image, background=300)
    with pytest.raises(ValueError, match="intensity"):
        granula.label(image, statistics=True, intensity_image=np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="GPU method"):
        granula.label(image, method="tile_merge")
    with pytest.raises(ValueError, match="GPU method"):
        granula.label(granula.binary.pack(image), method="tile_merge")
    with pytest.raises(ValueError, match="tile_merge"):
        granula.label(image, method="bke")


def _cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed: the GPU labelling tests need it")
    if not granula.cuda_available():
        pytest.skip("no CUDA device or this granula build has no CUDA backend")
    return cupy


@pytest.mark.parametrize("connectivity", [1, 2])
def test_gpu_equals_cpu(connectivity):
    cupy = _cupy()
    rng = np.random.default_rng(6306)
    for density, granularity, levels in [(0.5, 1, 1), (0.9, 3, 1), (0.7, 2, 3)]:
        image = blocks(rng, (513, 771), density, granularity, levels)
        cpu, cpu_stats = granula.label(image, connectivity, statistics=True)
        gpu, gpu_stats = granula.label(cupy.asarray(image), connectivity, statistics=True)
        assert isinstance(gpu, cupy.ndarray)
        np.testing.assert_array_equal(cupy.asnumpy(gpu), cpu)
        for key in ("area", "min_row", "min_col", "max_row", "max_col", "centroid_row", "centroid_col", "value"):
            assert isinstance(gpu_stats[key], cupy.ndarray), key
            assert gpu_stats[key].dtype == cpu_stats[key].dtype, key
            np.testing.assert_array_equal(cupy.asnumpy(gpu_stats[key]), cpu_stats[key], err_msg=key)
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


@pytest.mark.parametrize("connectivity", [1, 2])
def test_gpu_tile_merge_equals_cpu(connectivity):
    """The seed paper's tile merge gives the CPU's labels and statistics on the default path's
    image families."""
    cupy = _cupy()
    rng = np.random.default_rng(6309)
    images = [blocks(rng, (513, 771), d, g) for d in (0.1, 0.5, 0.9) for g in (1, 4, 16)]
    images += [
        np.ones((300, 1001), np.uint8),
        np.zeros((77, 130), np.uint8),
        (np.indices((257, 131)).sum(0) % 2).astype(np.uint8),
        _spiral(301),
        blocks(rng, (1, 5000), 0.7, 1),
        blocks(rng, (5000, 1), 0.7, 1),
        blocks(rng, (131, 4099), 0.8, 2, levels=4),
        blocks(rng, (257, 300), 0.9, 3, levels=100).astype(np.uint16) * 7,
    ]
    for image in images:
        cpu, cpu_num, cpu_stats = granula.label(image, connectivity, return_num=True, statistics=True)
        gpu, gpu_num, gpu_stats = granula.label(
            cupy.asarray(image), connectivity, return_num=True, statistics=True, method="tile_merge"
        )
        assert gpu_num == cpu_num, image.shape
        np.testing.assert_array_equal(cupy.asnumpy(gpu), cpu)
        for key in ("area", "min_row", "min_col", "max_row", "max_col", "centroid_row", "centroid_col", "value"):
            np.testing.assert_array_equal(cupy.asnumpy(gpu_stats[key]), cpu_stats[key], err_msg=key)
        default = granula.label(cupy.asarray(image), connectivity)
        np.testing.assert_array_equal(cupy.asnumpy(default), cpu)


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
