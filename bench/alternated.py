"""Timing two functions side by side on a shared machine (the bench scripts' helper)."""

import statistics
import time


def alternated_ms(ours, theirs, repeat):
    """Median ms of each function, called in turn after a warm-up of each, and the median of
    the pairs' ratios theirs / ours: both meet the same moments of the machine, so the ratio
    holds when a shared machine's speed moves between calls."""

    def timed(fn):
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3

    ours()
    theirs()
    pairs = [(timed(ours), timed(theirs)) for _ in range(repeat)]
    return (statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs),
            statistics.median(p[1] / p[0] for p in pairs))
