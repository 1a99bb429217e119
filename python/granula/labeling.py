"""Connected-component labelling (``granula.label``)."""

import sys

import numpy as np

from . import _core
from ._operations import _cuda_stream, _framework
from .binary import PackedImage

# The largest int32 label; module level so tests can lower it to reach the int64 path on small images.
_INT32_MAX = 2**31 - 1


def _label_dtype(rows, cols, connectivity, binary):
    """int32, or int64 when the most components an image of this shape can have exceeds int32."""
    if binary:
        # A chessboard of single pixels (4-connectivity) or of pixels two apart (8-connectivity).
        most = -(-rows * cols // 2) if connectivity == 1 else -(-rows // 2) * -(-cols // 2)
    else:
        most = rows * cols  # equal-value input: every pixel can be its own component
    return np.int64 if most > _INT32_MAX else np.int32


def label(image, connectivity=2, background=0, *, return_num=False, statistics=False, intensity_image=None,
          method="auto"):
    """Label the connected components of equal non-background value.

    Two pixels belong to one component when they are neighbours (``connectivity=1``: the 4 edge
    neighbours, ``2``: also the 4 corner neighbours) and hold the same value other than
    ``background``. Components get the labels 1..N in raster order of their first pixel, the
    numbers of ``scipy.ndimage.label`` and ``skimage.measure.label``; the background gets 0. CPU
    (numpy input) and GPU (CuPy input) give the same labels bit for bit.

    Parameters
    ----------
    image : (M, N) array of bool, uint8, uint16 or uint32, or a granula.binary.PackedImage
        numpy array (labelled on the CPU) or CuPy array (labelled on the GPU). A packed image's
        set bits are the foreground: on the CPU they are labelled without unpacking, on the GPU
        unpacked first.
    connectivity : {1, 2}, optional
        Neighbourhood, as in scikit-image. Default 2 (8-neighbours).
    background : int, optional
        The value that belongs to no component. Default 0.
    return_num : bool, optional
        Also return the number of components.
    statistics : bool, optional
        Also return a dict of per-component arrays indexed by ``label - 1``: ``area``,
        ``min_row``, ``min_col``, ``max_row``, ``max_col`` (bounding box, max exclusive as in
        ``skimage.measure.regionprops``), ``centroid_row``, ``centroid_col``, ``value`` (the
        component's pixel value, uint32 whatever the input's dtype). numpy
        arrays for numpy input; CuPy arrays for CuPy input, computed and left on the GPU (queued
        on the current stream, like the labels).
    intensity_image : (M, N) array of uint8, uint16 or float32, optional
        With ``statistics``: adds ``mean_intensity``, ``min_intensity`` and ``max_intensity`` of
        this image over each component (NaN pixels make the mean NaN and are skipped by min and
        max). In the image's memory: numpy with numpy input, CuPy (computed on the GPU) with
        CuPy input.
    method : {'auto', 'tile_merge'}, optional
        How the GPU labels: ``'auto'`` (the fastest) or ``'tile_merge'``, the seed paper's
        algorithm (Stava & Benes 2011) generalised to any size and kept as its reference; both
        give the same labels and statistics. The CPU has ``'auto'`` only.

    Returns
    -------
    labels : (M, N) int32 or int64 array
        numpy or CuPy, like ``image``. int32 unless the most components an image of this shape
        could have exceeds 2**31 - 1, then int64: for bool input and packed images
        ``ceil(M*N/2)`` with ``connectivity=1`` (a chessboard), ``ceil(M/2)*ceil(N/2)`` with
        ``connectivity=2``; for uint8, uint16 and uint32 input ``M*N`` (equal-value input can
        have a component per pixel). The dtype depends on shape, dtype and connectivity only,
        never on the pixels: int64 starts at about 2**32 bool pixels (2**33 with
        ``connectivity=2``) and at 2**31 uint8/uint16/uint32 pixels.
    num : int
        Number of components, when ``return_num``.
    stats : dict
        The statistics (numpy or CuPy arrays, like ``image``), when ``statistics``.

    Raises
    ------
    ValueError
        For a connectivity other than 1 or 2, a dtype other than bool, uint8, uint16 and uint32
        (float and signed input included), an empty image, a background the dtype cannot hold,
        an intensity image of another shape, an unknown method, or ``'tile_merge'`` with numpy
        input.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> image = np.array([[1, 1, 0, 2],
    ...                   [0, 0, 1, 2],
    ...                   [3, 0, 0, 0]], dtype=np.uint8)
    >>> granula.label(image)
    array([[1, 1, 0, 2],
           [0, 0, 1, 2],
           [3, 0, 0, 0]], dtype=int32)
    >>> labels, num = granula.label(image, connectivity=1, return_num=True)
    >>> num
    4
    >>> granula.label(image > 0, statistics=True)[1]["area"].tolist()
    [5, 1]
    """
    if connectivity not in (1, 2) or isinstance(connectivity, bool):
        raise ValueError(f"connectivity must be 1 (4-neighbours) or 2 (8-neighbours), not {connectivity!r}")
    binary = isinstance(image, PackedImage) or getattr(image, "dtype", None) == bool
    if getattr(image, "dtype", None) is not None and image.dtype == bool:
        image = image.view(np.uint8) if isinstance(image, np.ndarray) else image.astype("uint8")
    if not 0 <= int(background) < 2**32:
        raise ValueError(f"background must be a pixel value, 0 <= background < 2**32, not {background}")
    if method not in ("auto", "tile_merge"):
        raise ValueError(f"unknown labelling method {method!r}; allowed: 'auto', 'tile_merge'")
    if isinstance(image, PackedImage):
        if not image.on_device and method != "auto":
            raise ValueError(f"label: method {method!r} is a GPU method; the CPU labels with 'auto'")
        if background != 0 or intensity_image is not None:
            raise ValueError("a packed image's foreground is its set bits: background and intensity_image do not apply")
        if image.on_device:
            image = image.unpack()
        else:
            out = np.empty(image.shape, dtype=_label_dtype(*image.shape, connectivity, True))
            num, stats = _core.label_bits(*image._raw(), out, connectivity, statistics)
            return _label_result(out, num, stats, return_num, statistics)
    rows, cols, _, on_device = _core.describe_image(image, label_input=True)
    dtype = _label_dtype(rows, cols, connectivity, binary)
    if on_device:
        if _framework(image) != "cupy":
            raise ValueError("granula.label on the GPU takes CuPy arrays")
        cupy = sys.modules["cupy"]
        out = cupy.empty((rows, cols), dtype=dtype)
        num, stats = _core.label_device(image, out.data.ptr, out.strides[0] // out.itemsize, dtype == np.int64,
                                        connectivity, int(background), statistics, intensity_image,
                                        _cuda_stream(image), image.device.id, method)
    else:
        out = np.empty((rows, cols), dtype=dtype)
        num, stats = _core.label_host(image, out, connectivity, int(background), statistics, intensity_image, method)
    return _label_result(out, num, stats, return_num, statistics)


def _label_result(out, num, stats, return_num, statistics):
    result = (out,)
    if return_num:
        result += (num,)
    if statistics:
        result += (stats,)
    return result[0] if len(result) == 1 else result


# Public as granula.label (as numpy's set_module does), so help() and the doctests find it there.
label.__module__ = "granula"
