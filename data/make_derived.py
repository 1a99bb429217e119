"""Regenerates the derived samples in this folder from the scikit-image originals next to it.

    python3 data/make_derived.py

coins16.png       uint16: coins.png smoothed (Gaussian, sigma 1) and scaled by 256, rounded.
                  Its low bytes carry real information, so a byte-order mistake shows.
page_float32.npy  float32: page.png / 255.
"""
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

here = Path(__file__).resolve().parent

coins = np.asarray(Image.open(here / "coins.png"))
assert coins.dtype == np.uint8 and coins.ndim == 2
smooth = ndimage.gaussian_filter(coins.astype(np.float64), sigma=1.0)
coins16 = np.clip(np.rint(smooth * 256), 0, 65535).astype(np.uint16)
Image.fromarray(coins16).save(here / "coins16.png", optimize=True)

page = np.asarray(Image.open(here / "page.png"))
assert page.dtype == np.uint8 and page.ndim == 2
np.save(here / "page_float32.npy", (page / 255.0).astype(np.float32))
