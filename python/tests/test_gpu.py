"""CUDA arrays: CuPy results equal the numpy path bit for bit, views and out= are taken without
copies, and the work runs on the caller's current stream.

Skipped, with the reason, where CuPy, a CUDA device or granula's CUDA backend is missing.
"""

import numpy as np
import pytest

import granula
from conftest import DTYPES, MODES, OPERATIONS, random_image, run

try:
    import cupy
except ImportError:
    cupy = None


def _missing():
    if cupy is None:
        return "CuPy is not installed"
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return "no CUDA device"
    except cupy.cuda.runtime.CUDARuntimeError as error:
        return f"no usable CUDA device ({error})"
    if not granula.cuda_available():
        return "this granula build has no CUDA backend" if "no CUDA" in granula.build_info() else "granula sees no GPU"
    return None


MISSING = _missing()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(MISSING is not None, reason=f"GPU test skipped: {MISSING}")]

SHAPES = [(1, 1), (1, 300), (257, 1), (129, 515), (1000, 1031)]
FOOTPRINTS = ["hline:1", "hline:2", "hline:3", "hline:64", "hline:255", "hline:1001", "vline:2", "vline:15",
              "vline:256", "vline:1001", "rect:5x3", "rect:33x64"]


def random_with_nan(rng, shape, dtype):
    image = random_image(rng, shape, dtype)
    if image.dtype.kind == "f":
        image[rng.random(shape) < 0.001] = np.nan
    return image


@pytest.mark.parametrize("convention", ["opencv", "scipy", "matlab"])
@pytest.mark.parametrize("operation", OPERATIONS)
def test_conventions_on_cupy_equal_numpy(rng, operation, convention):
    footprints = ["hline:4", "rect:6x3", "line:16:30", "disk:3", np.array([[1, 0, 0, 1], [0, 1, 1, 0]], bool)]
    for dtype in DTYPES:
        image = random_with_nan(rng, (129, 515), dtype)
        for footprint in footprints:
            expected = run(operation, image, footprint, convention=convention)
            got = run(operation, cupy.asarray(image), footprint, convention=convention)
            np.testing.assert_array_equal(got.get(), expected, err_msg=f"{footprint} {np.dtype(dtype).name}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_cupy_equals_numpy(rng, operation, mode, dtype):
    for shape in SHAPES:
        image = random_with_nan(rng, shape, dtype)
        device_image = cupy.asarray(image)
        for footprint in FOOTPRINTS:
            expected = run(operation, image, footprint, mode=mode, cval=7)
            got = run(operation, device_image, footprint, mode=mode, cval=7)
            assert isinstance(got, cupy.ndarray) and got.dtype == image.dtype and got.shape == image.shape
            np.testing.assert_array_equal(got.get(), expected, err_msg=f"{footprint} on {shape}")


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_large_image_with_ties(rng, dtype):
    image = random_image(rng, (4097, 3001), dtype, ties=True)
    device_image = cupy.asarray(image)
    for footprint in ("hline:63", "vline:63", "rect:255x255"):
        for operation in ("erosion", "dilation", "opening"):
            expected = run(operation, image, footprint, mode="reflect")
            np.testing.assert_array_equal(run(operation, device_image, footprint, mode="reflect").get(), expected)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_strided_device_views_and_out(rng, operation):
    for _ in range(4):
        rows, cols = (int(n) for n in rng.integers(1, 300, size=2))
        top, left = (int(n) for n in rng.integers(0, 40, size=2))
        buffer = cupy.asarray(random_image(rng, (rows + top + 17, cols + left + 33), np.uint16))
        view = buffer[top : top + rows, left : left + cols]
        expected = run(operation, view.get(), "rect:7x5")
        np.testing.assert_array_equal(run(operation, view, "rect:7x5").get(), expected)
        out_buffer = cupy.zeros((rows + 2, cols + 9), dtype=np.uint16)
        out_view = out_buffer[1 : 1 + rows, 4 : 4 + cols]
        assert run(operation, view, "rect:7x5", out=out_view) is out_view
        np.testing.assert_array_equal(out_view.get(), expected)
        out_buffer[1 : 1 + rows, 4 : 4 + cols] = 0
        assert not out_buffer.any(), "granula wrote outside out="


def test_in_place_on_the_device(rng):
    image = random_image(rng, (300, 400), np.float32)
    expected = granula.closing(image, "rect:9x9")
    device_image = cupy.asarray(image)
    assert granula.closing(device_image, "rect:9x9", out=device_image) is device_image
    np.testing.assert_array_equal(device_image.get(), expected)


SPIN_THEN_FILL = r"""
extern "C" __global__ void spin_then_fill(unsigned char* p, long long n, long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) { }
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = (unsigned char)((i * 7919) % 251);
}
"""


def test_runs_on_the_current_cupy_stream_without_waiting():
    # A kernel on a non-blocking stream spins ~0.2 s, then writes the input. granula, called on
    # that stream, must see the written input (it queued behind the kernel) and return before
    # the GPU is done (no hidden synchronisation). On any other stream it would read zeros.
    kernel = cupy.RawKernel(SPIN_THEN_FILL, "spin_then_fill")
    stream = cupy.cuda.Stream(non_blocking=True)
    shape = (2048, 2048)
    with stream:
        image = cupy.zeros(shape, dtype=cupy.uint8)
        kernel((1,), (256,), (image, cupy.int64(image.size), cupy.int64(400_000_000)))
        result = granula.erosion(image, "hline:31")
        assert not stream.done, "granula waited for the GPU"
    stream.synchronize()
    expected_input = ((np.arange(image.size, dtype=np.int64) * 7919) % 251).astype(np.uint8).reshape(shape)
    np.testing.assert_array_equal(image.get(), expected_input)
    np.testing.assert_array_equal(result.get(), granula.erosion(expected_input, "hline:31"))


def test_dlpack_only_device_array_needs_out(rng):
    class DLPackOnly:
        def __init__(self, array):
            self._array = array

        def __dlpack__(self, **kwargs):
            return self._array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self._array.__dlpack_device__()

    image = random_image(rng, (64, 80), np.uint8)
    wrapped = DLPackOnly(cupy.asarray(image))
    with pytest.raises(ValueError, match="pass out="):
        granula.dilation(wrapped, "hline:5")
    out = cupy.empty((64, 80), dtype=cupy.uint8)
    granula.dilation(wrapped, "hline:5", out=out)
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_array_equal(out.get(), granula.dilation(image, "hline:5"))


def test_torch_tensors(rng):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    image = random_image(rng, (123, 77), np.float32)
    tensor = torch.from_numpy(image).cuda()
    result = granula.gradient(tensor, "vline:9")
    assert isinstance(result, torch.Tensor) and result.is_cuda
    np.testing.assert_array_equal(result.cpu().numpy(), granula.gradient(image, "vline:9"))


def test_numba_device_arrays_through_cuda_array_interface(rng):
    numba_cuda = pytest.importorskip("numba.cuda", reason="Numba is not installed")
    image = random_image(rng, (50, 60), np.uint16)
    try:
        device_image, out = numba_cuda.to_device(image), numba_cuda.device_array((50, 60), dtype=np.uint16)
    except Exception as error:  # numba's own CUDA support may not match the driver
        pytest.skip(f"numba.cuda unusable here: {error}")
    with pytest.raises(ValueError, match="pass out="):
        granula.erosion(device_image, "rect:3x3")
    granula.erosion(device_image, "rect:3x3", out=out)
    np.testing.assert_array_equal(out.copy_to_host(), granula.erosion(image, "rect:3x3"))


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: cupy.zeros((8, 8), dtype=cupy.float64), "dtype float64"),
        (lambda: cupy.zeros((2, 8, 8), dtype=cupy.uint8), "2-D"),
        (lambda: cupy.zeros((0, 8), dtype=cupy.uint8), "empty"),
        (lambda: cupy.zeros((8, 9), dtype=cupy.uint8).T, "non-contiguous columns"),
        (lambda: cupy.zeros((8, 9), dtype=cupy.uint8)[::-1], "row stride"),
    ],
)
def test_bad_cupy_arrays(make, message):
    with pytest.raises(ValueError, match=message):
        granula.erosion(make())


def test_mixed_host_and_device():
    with pytest.raises(ValueError, match="CUDA device but image is .* in host memory"):
        granula.erosion(np.zeros((4, 4), np.uint8), out=cupy.zeros((4, 4), cupy.uint8))
    with pytest.raises(ValueError, match="host memory but image is .* on a CUDA device"):
        granula.erosion(cupy.zeros((4, 4), cupy.uint8), out=np.zeros((4, 4), np.uint8))
