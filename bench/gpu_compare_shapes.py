#!/usr/bin/env python3
"""granula's general structuring elements on the GPU (16384 x 16384 uint8): lines at an angle, a
disk and an octagon, timed with CUDA events against a device-to-device copy of the image and,
where CuPy finishes in reasonable time, cupyx.scipy.ndimage.grey_erosion with the same mask
(mode 'constant' at 255 = granula's 'ignore'). Medians of 5 runs (3 for CuPy).

Usage: python3 bench/gpu_compare_shapes.py   (needs CuPy and the installed granula package)
"""
import cupy as cp, granula, numpy as np, cupyx.scipy.ndimage as cndi
from compare import scipy_erosion
img = cp.random.default_rng(0).integers(0, 256, (16384, 16384), dtype=cp.uint8)
out, ref, cpy = cp.empty_like(img), cp.empty_like(img), cp.empty_like(img)
def ms(f, n=5):
    f(); s, e = cp.cuda.Event(), cp.cuda.Event(); t = []
    for _ in range(n):
        s.record(); f(); e.record(); e.synchronize(); t.append(cp.cuda.get_elapsed_time(s, e))
    return sorted(t)[len(t) // 2]
copy = ms(lambda: cpy.data.copy_from_device_async(img.data, img.nbytes))
for spec, peer in [("line:63:45", True), ("disk:31", True), ("disk:31:4", True), ("line:255:30", False),
                   ("line:1001:30", False), ("line:1001:10", False), ("line:1001:45", False), ("octagon:20:10", False)]:
    fp = granula.footprints.parse(spec)
    g = ms(lambda: granula.erosion(img, fp, out=out))
    line = f"{spec:14s} granula {g:8.3f} ms  {g/copy:6.1f}x copy"
    if peer:
        c = ms(lambda: scipy_erosion(cndi, img, fp, ref, cp.asarray), 3)
        line += f"  CuPy {c:9.3f} ms  {c/g:5.1f}x  equal={bool(cp.array_equal(out, ref))}"
    print(line, flush=True)
