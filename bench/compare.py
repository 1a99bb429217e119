#!/usr/bin/env python3
"""granula side by side with its peers, in one run on one machine.

CPU (4096 x 4096 by default): granula.erosion against cv2.erode and scipy.ndimage.grey_erosion
with the same footprint mask and border ('ignore' = OpenCV's default border = scipy's
'constant' with the type's largest value), with the same thread count for granula and OpenCV
(scipy.ndimage is single-threaded). Cases: uint8 horizontal and vertical lines of L = 3, 15, 63,
255; float32 lines of L = 255; a 255 x 255 uint8 rectangle; lines of 255 at 30 and 45 degrees,
a disk of radius 31, MATLAB's periodic-line disk of radius 31 (against OpenCV's 63 x 63
ellipse), a random 64 x 64 mask, and the everyday small elements: squares of 3 and 5 (uint8 and
float32), disks of radius 1, 3 and 10, a diamond of radius 3. With --op opening, granula.opening
(convention "opencv": the dilation by the footprint itself, as cv2 does) against
cv2.morphologyEx(MORPH_OPEN) instead, scipy left out; likewise white_tophat, black_tophat and
gradient against MORPH_TOPHAT, MORPH_BLACKHAT and MORPH_GRADIENT. Each time is the median of
--repeat runs after a warm-up, granula's and OpenCV's calls alternated, their ratio the median
of the pairs' ratios (so that a shared machine's changes of speed meet both), each writing into
an array allocated once; every result is checked against OpenCV's pixel for pixel.

GPU (--gpu; 16384 x 16384 by default): granula on CuPy arrays against
cupyx.scipy.ndimage.grey_erosion, timed with CUDA events, and against a device-to-device copy
of the image (the floor: read and write every byte once). The image is several times the L2
cache, so repeated runs are not flattered by it.

Usage: python3 bench/compare.py [--threads 1 2] [--repeat 5] [--size 4096] [--cases line:255:30 ...]
                                [--op erosion|opening|white_tophat|black_tophat|gradient] [--gpu]
"""

import argparse
import os
import platform
import statistics
import time

import numpy as np

import granula
from alternated import alternated_ms

CPU_CASES = [("uint8", f"{axis}line:{length}") for length in (3, 15, 63, 255) for axis in "hv"]
CPU_CASES += [("float32", "hline:255"), ("float32", "vline:255"), ("uint8", "square:255")]
CPU_CASES += [("uint8", "line:255:30"), ("uint8", "line:255:45"), ("uint8", "disk:31"), ("uint8", "disk:31:4")]
CPU_CASES += [("uint8", "random:64")]
CPU_CASES += [("uint8", "square:3"), ("uint8", "square:5"), ("float32", "square:3"), ("uint8", "disk:1")]
CPU_CASES += [("uint8", "disk:3"), ("uint8", "disk:10"), ("uint8", "diamond:3")]
# Cases where OpenCV gets its own shape instead of granula's mask (so results differ): MATLAB's
# periodic-line disk against the ellipse a user of OpenCV would take for a disk of radius 31.
OPENCV_OWN_KERNEL = {"disk:31:4": ("ellipse 63x63", (63, 63))}
GPU_CASES = [("uint8", f"{axis}line:{length}") for length in (3, 63, 255, 1001) for axis in "hv"]
GPU_CASES += [("float32", f"{axis}line:{length}") for length in (63, 255) for axis in "hv"]
GPU_CASES += [("uint8", "line:63:45"), ("uint8", "line:255:30"), ("uint8", "line:1001:30"), ("uint8", "disk:31")]
GPU_CASES += [("uint8", "disk:31:4")]


# granula's operations beside erosion (--op) and OpenCV's morphologyEx names for them.
OPENCV_OPS = {"opening": "MORPH_OPEN", "white_tophat": "MORPH_TOPHAT", "black_tophat": "MORPH_BLACKHAT",
              "gradient": "MORPH_GRADIENT"}


def footprint_of(spec):
    """The case's granula footprint and its mask; "random:N" is a fixed random N x N mask."""
    if spec.startswith("random:"):
        n = int(spec.split(":")[1])
        mask = np.random.default_rng(64).random((n, n)) < 0.5
        mask[n // 2, n // 2] = True
        footprint = granula.footprints.mask(mask)
    else:
        footprint = granula.footprints.parse(spec)
    return footprint, footprint.footprint()[0]


def scipy_erosion(ndi, image, footprint, out, to_array=np.asarray):
    """scipy's (or CuPy's, with to_array=cupy.asarray) erosion by granula's footprint with its
    'ignore' border; size= for rectangles. scipy's origin is the box's centre, which a line's
    origin need not be."""
    mask, (oy, ox) = footprint.footprint()
    origin = (oy - mask.shape[0] // 2, ox - mask.shape[1] // 2)
    top = np.inf if image.dtype.kind == "f" else np.iinfo(image.dtype).max
    if mask.all():
        return ndi.grey_erosion(image, size=mask.shape, mode="nearest", origin=origin, output=out)
    return ndi.grey_erosion(image, footprint=to_array(mask), mode="constant", cval=top, origin=origin, output=out)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            return next(line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def median_ms(function, repeat):
    function()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def random_image(rng, size, dtype):
    if dtype == "uint8":
        return rng.integers(0, 256, (size, size), dtype=np.uint8)
    return rng.standard_normal((size, size), dtype=np.float32)


def print_table(title, header, rows):
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    print(f"\n{title}")
    for line in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(cell).rjust(w) for cell, w in zip(line, widths)))


def cpu_benchmark(size, threads_list, repeat, with_scipy, cases, op):
    import cv2
    import scipy
    import scipy.ndimage as ndi

    print(f"OpenCV {cv2.__version__}, scipy {scipy.__version__}")
    rng = np.random.default_rng(0)
    images = {dtype: random_image(rng, size, dtype) for dtype in ("uint8", "float32")}
    rows = []
    scipy_ms = {}
    for threads in threads_list:
        cv2.setNumThreads(threads)
        granula.set_num_threads(threads)
        for dtype, spec in CPU_CASES:
            if cases and spec not in cases:
                continue
            image = images[dtype]
            footprint, mask = footprint_of(spec)
            kernel = mask.astype(np.uint8)
            anchor = (footprint.footprint()[1][1], footprint.footprint()[1][0])
            label = spec
            if spec in OPENCV_OWN_KERNEL:
                name, kernel_size = OPENCV_OWN_KERNEL[spec]
                kernel, anchor, label = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, kernel_size), (-1, -1), f"{spec} (cv2 {name})"
            out = np.empty_like(image)
            # OpenCV writes into an array of its own as granula does: a result allocated each call
            # took cv2 from 16 to 26 ms on a 4096x4096 opening in one sequence of calls (stop 58).
            dst = np.empty_like(image)

            def ours():
                if op == "erosion":
                    return granula.erosion(image, footprint, out=out)
                return getattr(granula, op)(image, footprint, out=out, convention="opencv")

            def theirs():
                if op == "erosion":
                    return cv2.erode(image, kernel, dst=dst, anchor=anchor)
                return cv2.morphologyEx(image, getattr(cv2, OPENCV_OPS[op]), kernel, dst=dst, anchor=anchor)

            g, c, ratio = alternated_ms(ours, theirs, repeat)
            ours()
            same = np.array_equal(out, theirs())
            row = [dtype, label, threads, f"{g:.2f}", f"{c:.2f}", f"{ratio:.1f}x"]
            if with_scipy:
                if (dtype, spec) not in scipy_ms:  # single-threaded: measured once
                    scipy_ms[dtype, spec] = median_ms(lambda: scipy_erosion(ndi, image, footprint, out), repeat)
                s = scipy_ms[dtype, spec]
                row += [f"{s:.2f}", f"{s / g:.1f}x"]
            rows.append(row + ["n/a" if spec in OPENCV_OWN_KERNEL else "yes" if same else "NO"])
    granula.set_num_threads(0)
    header = ["dtype", "footprint", "threads", "granula ms", "OpenCV ms", "OpenCV/granula"]
    if with_scipy:
        header += ["scipy ms", "scipy/granula"]
    print_table(f"CPU {op}, {size}x{size}, mode 'ignore' (median of {repeat})", header + ["equal"], rows)


def gpu_benchmark(size, repeat):
    import cupy
    import cupyx.scipy.ndimage as cndi

    print(f"CuPy {cupy.__version__}")
    def event_ms(function):
        function()  # warm-up
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        times = []
        for _ in range(repeat):
            start.record()
            function()
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop))
        return statistics.median(times)

    device = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    rng = cupy.random.default_rng(0)
    images = {
        "uint8": rng.integers(0, 256, (size, size), dtype=cupy.uint8),
        "float32": rng.standard_normal((size, size), dtype=cupy.float32),
    }
    rows = []
    for dtype, spec in GPU_CASES:
        image = images[dtype]
        out, copy = cupy.empty_like(image), cupy.empty_like(image)
        footprint = footprint_of(spec)[0]
        copy_ms = event_ms(lambda: copy.data.copy_from_device_async(image.data, image.nbytes))
        g = event_ms(lambda: granula.erosion(image, footprint, out=out))
        c = event_ms(lambda: scipy_erosion(cndi, image, footprint, copy, cupy.asarray))
        same = bool(cupy.array_equal(out, copy))
        gbps = 2 * image.nbytes / (g * 1e-3) / 1e9
        rows.append([dtype, spec, f"{copy_ms:.3f}", f"{g:.3f}", f"{g / copy_ms:.2f}", f"{gbps:.0f}", f"{c:.3f}",
                     f"{c / g:.1f}x", "yes" if same else "NO"])
    header = ["dtype", "footprint", "copy ms", "granula ms", "granula/copy", "granula GB/s", "CuPy ms",
              "CuPy/granula", "equal"]
    print_table(f"GPU erosion on {device}, {size}x{size}, mode 'ignore' (CUDA events, median of {repeat})",
                header, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2], help="CPU thread counts (default 1 2)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--size", type=int, default=4096, help="CPU image side (default 4096)")
    parser.add_argument("--no-scipy", action="store_true", help="leave scipy.ndimage out of the CPU table")
    parser.add_argument("--cases", nargs="+", metavar="FOOTPRINT",
                        help="run only the CPU cases with these footprints (e.g. line:255:30 random:64)")
    parser.add_argument("--op", choices=["erosion", *OPENCV_OPS], default="erosion",
                        help="the CPU operation (default erosion; the others leave scipy out)")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU table")
    parser.add_argument("--gpu", action="store_true", help="also compare with CuPy on the GPU")
    parser.add_argument("--gpu-size", type=int, default=16384, help="GPU image side (default 16384)")
    args = parser.parse_args()
    print(granula.build_info())
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs: {cpu_name()}")
    if not args.no_cpu:
        cpu_benchmark(args.size, args.threads, args.repeat, not args.no_scipy and args.op == "erosion", args.cases,
                      args.op)
    if args.gpu:
        gpu_benchmark(args.gpu_size, args.repeat)


if __name__ == "__main__":
    main()
