"""How granula takes and returns host arrays: strided views without copies, out=, in place,
read-only input, and the CPU settings (threads, SIMD) not changing results."""

import numpy as np
import pytest

import granula
from conftest import DTYPES, OPERATIONS, random_image, reference, run

FOOTPRINTS = [("hline:5", (1, 5)), ("vline:6", (6, 1)), ("rect:4x3", (3, 4))]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("operation", OPERATIONS)
def test_strided_views(rng, operation, dtype):
    # Sub-images at random offsets in larger buffers, for the input and for out=.
    for _ in range(6):
        rows, cols = rng.integers(1, 40, size=2)
        top, left, pad_rows, pad_cols = rng.integers(0, 9, size=4)
        buffer = random_image(rng, (rows + top + pad_rows, cols + left + pad_cols), dtype)
        view = buffer[top : top + rows, left : left + cols]
        out_buffer = np.zeros((rows + 3, cols + 5), dtype=dtype)
        out_view = out_buffer[2 : 2 + rows, 1 : 1 + cols]
        for footprint, (fr, fc) in FOOTPRINTS:
            expected = reference(operation, np.ascontiguousarray(view), fr, fc)
            np.testing.assert_array_equal(run(operation, view, footprint), expected)
            returned = run(operation, view, footprint, out=out_view)
            assert returned is out_view
            np.testing.assert_array_equal(out_view, expected)
            outside = np.ones(out_buffer.shape, dtype=bool)
            outside[2 : 2 + rows, 1 : 1 + cols] = False
            assert not out_buffer[outside].any(), "granula wrote outside out="


def test_result_is_a_new_contiguous_numpy_array(rng):
    image = random_image(rng, (10, 12), np.uint16)[::2]
    result = granula.erosion(image, "hline:3")
    assert type(result) is np.ndarray and result.flags.c_contiguous and not np.shares_memory(result, image)


def test_single_row_and_column_views_take_any_outer_stride(rng):
    image = random_image(rng, (30, 40), np.uint8)
    for view in (image[::7][:1], image[:, ::3][:, :1], image[3:4, 5:30], image[2:20, 9:10]):
        expected = reference("dilation", np.ascontiguousarray(view), 3, 3)
        np.testing.assert_array_equal(granula.dilation(view, "square:3"), expected)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_in_place_and_overlapping_out(rng, operation):
    image = random_image(rng, (25, 31), np.float32)
    expected = reference(operation, image, 3, 5)
    work = image.copy()
    assert run(operation, work, "rect:5x3", out=work) is work
    np.testing.assert_array_equal(work, expected)
    # out overlaps the input shifted by one row.
    buffer = np.zeros((26, 31), dtype=np.float32)
    buffer[:25] = image
    run(operation, buffer[:25], "rect:5x3", out=buffer[1:])
    np.testing.assert_array_equal(buffer[1:], expected)


def test_read_only_input(rng):
    image = random_image(rng, (9, 9), np.uint8)
    image.setflags(write=False)
    np.testing.assert_array_equal(granula.erosion(image, "square:3"), reference("erosion", image, 3, 3))


def test_keywords_and_defaults(rng):
    image = random_image(rng, (20, 20), np.uint8)
    # footprint defaults to the registry's square:3; mode to 'ignore'.
    np.testing.assert_array_equal(granula.erosion(image), reference("erosion", image, 3, 3))
    np.testing.assert_array_equal(
        granula.opening(image, footprint=granula.footprints.rectangle(2, 5), mode="constant", cval=9),
        reference("opening", image, 2, 5, "constant", 9),
    )
    np.testing.assert_array_equal(
        granula.closing(image, np.ones((4, 1), dtype=bool)), reference("closing", image, 4, 1)
    )
    with pytest.raises(TypeError):
        granula.erosion(image, "hline:3", "reflect")  # mode is keyword-only


def test_threads_and_simd_do_not_change_results(rng):
    image = random_image(rng, (257, 301), np.uint8)
    baseline = {op: run(op, image, "rect:17x9", mode="reflect") for op in OPERATIONS}
    try:
        for threads, simd in ((1, True), (2, True), (1, False), (3, False)):
            granula.set_num_threads(threads)
            granula.set_simd_enabled(simd)
            assert granula.num_threads() == threads and granula.simd_enabled() == simd
            for op in OPERATIONS:
                np.testing.assert_array_equal(run(op, image, "rect:17x9", mode="reflect"), baseline[op])
    finally:
        granula.set_num_threads(0)
        granula.set_simd_enabled(True)


def test_build_info_and_version():
    assert granula.build_info().startswith(f"granula {granula.__version__}")
    assert isinstance(granula.cuda_available(), bool)


def test_generated_functions_follow_the_registry():
    registry = granula._core.operations()
    assert set(OPERATIONS) <= {name for name, _, _ in registry}
    for name, summary, parameters in registry:
        if [param for param, _, _ in parameters] != ["footprint", "mode", "cval"]:
            continue
        function = getattr(granula, name)
        assert function.__name__ == name and name in granula.__all__
        assert function.__doc__.startswith(summary[0].upper() + summary[1:])
        assert "Examples" in function.__doc__ and "scipy.ndimage." in function.__doc__


def test_gil_is_released_during_compute(rng):
    # While a worker thread runs long operations, this thread must keep running: with the GIL
    # held through a call it would stall for the whole call.
    import threading
    import time

    image = random_image(rng, (4096, 4096), np.float32)
    granula.set_num_threads(1)
    try:
        start = time.perf_counter()
        granula.opening(image, "rect:31x31")
        call = time.perf_counter() - start
        worker = threading.Thread(target=lambda: [granula.opening(image, "rect:31x31") for _ in range(3)])
        longest_stall, last = 0.0, time.perf_counter()
        worker.start()
        while worker.is_alive():
            now = time.perf_counter()
            longest_stall, last = max(longest_stall, now - last), now
        worker.join()
    finally:
        granula.set_num_threads(0)
    assert longest_stall < call / 2, f"this thread stalled {longest_stall:.3f} s during {call:.3f} s calls"
