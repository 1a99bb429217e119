#!/usr/bin/env python3
"""Linear openings on the CPU, granula against OpenCV, in one run on one machine (issue 4).

1. The orientation map of the paper's Fig. 1 workload: a 640 x 640 uint8 image, 180 angles,
   length 41 (supremum of the openings and the arg max angle). The paper took ~2000 ms on one
   core of an i7-870; OpenCV has no such operation, so its time is 180 morphologyEx calls with
   the footprint of each angle (granula's footprint mode), for scale.
2. Single openings of a 4096 x 4096 uint8 image with a line of 101 pixels: granula.line_opening
   against cv2.morphologyEx(MORPH_OPEN) with the same footprint. At 0, 45, 90 and 135 degrees
   the scan lines are the footprint lines, so both give the same image and it is checked pixel
   for pixel; at other angles cv2 gets the footprint of line(101, angle) (granula's footprint
   mode), timed only; with --footprint-mode granula.opening by that footprint is timed beside it
   and checked pixel for pixel.
OpenCV and granula run with the same thread count, their calls alternated (after a warm-up of
each), so that both meet the same moments of a shared machine, the single openings each
writing into an array allocated once; each time is the median of --repeat calls, and the ratio
the median of the --repeat pairs' ratios.

Usage: python3 bench/compare_lines.py [--threads 1 2] [--repeat 5] [--angles 30 150]
"""

import argparse

import numpy as np

import granula
from alternated import alternated_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--angles", type=float, nargs="+", default=[0, 45, 90, 135, 30, 60, 120, 150],
                        help="angles of the single openings, in degrees")
    parser.add_argument("--footprint-mode", action="store_true",
                        help="at angles off the axes and diagonals, also time granula.opening by "
                             "footprints.line(101, angle), which computes cv2's operation pixel for pixel")
    args = parser.parse_args()
    import cv2

    rng = np.random.default_rng(41)
    small = rng.integers(0, 256, (640, 640), dtype=np.uint8)
    large = rng.integers(0, 256, (4096, 4096), dtype=np.uint8)
    print("| threads | case | granula ms | OpenCV ms | OpenCV / granula | same pixels |")
    print("|---|---|---|---|---|---|")
    for threads in args.threads:
        granula.set_num_threads(threads)
        cv2.setNumThreads(threads)
        angles = np.arange(180) * 1.0
        kernels = [granula.footprints.line(41, a).footprint() for a in angles]

        def opencv_all_angles():
            for mask, (oy, ox) in kernels:
                cv2.morphologyEx(small, cv2.MORPH_OPEN, mask.astype(np.uint8), anchor=(ox, oy))

        ours, theirs, ratio = alternated_ms(lambda: granula.orientation(small, 41, angles=180), opencv_all_angles,
                                            args.repeat)
        print(f"| {threads} | orientation 640x640, 180 angles, L=41 | {ours:.1f} | {theirs:.1f} | "
              f"{ratio:.1f}x | - |")
        for angle in args.angles:
            element = granula.footprints.line(101, angle)
            mask, (oy, ox) = element.footprint()
            kernel = mask.astype(np.uint8)
            # Both write into arrays allocated once: a result allocated each call took cv2 from 16
            # to 26 ms at 90 degrees, two threads, in one sequence of calls (stop 58).
            out, dst = np.empty_like(large), np.empty_like(large)

            def opencv_opening():
                cv2.morphologyEx(large, cv2.MORPH_OPEN, kernel, dst=dst, anchor=(ox, oy))

            ours, theirs, ratio = alternated_ms(lambda: granula.line_opening(large, 101, angle, out=out),
                                                opencv_opening, args.repeat)
            same = "-"
            if angle % 45 == 0:
                same = "yes" if np.array_equal(out, dst) else "NO"
            print(f"| {threads} | opening 4096x4096, line 101 at {angle:g} deg | {ours:.1f} | {theirs:.1f} | "
                  f"{ratio:.1f}x | {same} |")
            if args.footprint_mode and angle % 45 != 0:
                # The footprint-mode opening: cv2's operation exactly, so the pixels are checked.
                ours, theirs, ratio = alternated_ms(lambda: granula.opening(large, element, out=out),
                                                    opencv_opening, args.repeat)
                same = "yes" if np.array_equal(out, dst) else "NO"
                print(f"| {threads} | opening 4096x4096, line 101 at {angle:g} deg, footprint mode | {ours:.1f} | "
                      f"{theirs:.1f} | {ratio:.1f}x | {same} |")


if __name__ == "__main__":
    main()
