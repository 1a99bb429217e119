"""CuPy's binary erosion beside granula's bit-packed one, on the same GPU in the same run.

CuPy (cupyx.scipy.ndimage.binary_erosion) loops over the structuring element for every pixel of
a bool image; granula's figures come from bench_gpu_binary run here with the same size.

    python3 bench/gpu_compare_binary.py --bench /tmp/b/bench/gpu/bench_gpu_binary [--size 4096]

It also times granula.binary_erosion on a CuPy bool mask against CuPy's, element by element.
"""

import argparse
import subprocess
import time

import cupy
import numpy as np
from cupyx.scipy import ndimage


def median_ms(fn, reps=5):
    fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(reps):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop))
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", required=True)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    n = args.size
    rng = np.random.default_rng(1)
    image = cupy.asarray(rng.random((n, n)) < 0.97)
    image_u8 = image.astype(cupy.uint8)
    print(f"CuPy {cupy.__version__}, {n}x{n} bool, 97% ones")
    print(f"{'operation':44s} {'ms':>10s}")
    for size in (3, 15, 63):
        structure = cupy.ones((size, size), dtype=bool)
        ms = median_ms(lambda: ndimage.binary_erosion(image, structure, border_value=1), reps=3 if size == 63 else 5)
        print(f"{'cupy binary_erosion square:' + str(size):44s} {ms:10.4f}")
    ms = median_ms(lambda: ndimage.grey_erosion(image_u8, size=(63, 63), mode="nearest"), reps=3)
    print(f"{'cupy grey_erosion uint8 63x63':44s} {ms:10.4f}")
    # Bool masks on the device, as a CuPy user has them: granula.binary_erosion against
    # cupyx.scipy.ndimage.binary_erosion with the same footprint (border_value=1 is granula's
    # 'ignore'), results compared.
    import granula

    print(f"\n{'bool mask, binary_erosion':44s} {'granula ms':>10s} {'CuPy ms':>10s} {'CuPy/granula':>12s}")
    for spec in ("square:3", "disk:7", "line:31:30", "disk:31"):
        mask, _origin = granula.footprints.parse(spec).footprint()
        structure = cupy.asarray(mask)
        ours = median_ms(lambda: granula.binary_erosion(image, spec))
        theirs = median_ms(lambda: ndimage.binary_erosion(image, structure, border_value=1), reps=3)
        reference = ndimage.binary_erosion(image, structure, border_value=1)
        same = bool((granula.binary_erosion(image, spec) == reference).all())
        name = spec + (" (same)" if same else " (DIFFERENT)")
        print(f"{name:44s} {ours:10.4f} {theirs:10.4f} {theirs / ours:11.1f}x")
    t0 = time.time()
    result = subprocess.run([args.bench, "--size", str(n), "--no-uint8"], capture_output=True, text=True, check=True)
    print(f"\ngranula bench_gpu_binary --size {n} ({time.time() - t0:.1f} s):")
    print(result.stdout)


if __name__ == "__main__":
    main()
