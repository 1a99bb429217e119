"""CPU: granula's bit-packed binary erosion beside OpenCV, scipy and granula's own uint8 path.

All in one run on this machine: a random 0/1 image (97% ones), erosion by a square. Packing is
timed apart and not included in the packed figure (issue 7's targets: >= 20x granula uint8,
>= 50x cv2.erode on the unpacked image, 4096x4096, 63x63).

    PYTHONPATH=<build>/python python3 bench/compare_binary.py [--size 4096] [--square 63] [--threads N]
"""

import argparse
import time

import cv2
import numpy as np
from scipy import ndimage

import granula
from granula import binary


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--square", type=int, default=63)
    parser.add_argument("--threads", type=int, default=0, help="granula and OpenCV threads (0: all)")
    parser.add_argument("--reps", type=int, default=11)
    args = parser.parse_args()
    n, k = args.size, args.square
    granula.set_num_threads(args.threads)
    cv2.setNumThreads(args.threads if args.threads else -1)
    image = (np.random.default_rng(1).random((n, n)) < 0.97).astype(np.uint8)
    packed = binary.pack(image)
    footprint = f"square:{k}"
    kernel = np.ones((k, k), np.uint8)

    # The results agree before anything is timed (cv2 pads erosion with the maximum: 'ignore').
    want = granula.erosion(image, footprint)
    assert np.array_equal(binary.erosion(packed, footprint).unpack(), want)
    assert np.array_equal(cv2.erode(image, kernel), want)

    rows = [
        ("granula binary.erosion (packed)", median_ms(lambda: binary.erosion(packed, footprint), args.reps)),
        ("granula binary_erosion (uint8 in/out)", median_ms(lambda: granula.binary_erosion(image, footprint), args.reps)),
        ("granula erosion uint8", median_ms(lambda: granula.erosion(image, footprint), args.reps)),
        ("cv2.erode uint8", median_ms(lambda: cv2.erode(image, kernel), args.reps)),
        ("scipy binary_erosion", median_ms(lambda: ndimage.binary_erosion(image, np.ones((k, k), bool), border_value=1), 3)),
        ("granula binary.pack (uint8 -> bits)", median_ms(lambda: binary.pack(image), args.reps)),
        ("granula binary.unpack (bits -> uint8)", median_ms(lambda: binary.unpack(packed), args.reps)),
    ]
    packed_ms = rows[0][1]
    print(f"{n}x{n}, square {k}x{k}, granula threads {granula.num_threads()}, OpenCV threads {cv2.getNumThreads()}, "
          f"{granula.build_info()}")
    print(f"{'operation':42s} {'ms':>10s} {'/ packed':>10s}")
    for name, ms in rows:
        print(f"{name:42s} {ms:10.3f} {ms / packed_ms:10.1f}")


if __name__ == "__main__":
    main()
