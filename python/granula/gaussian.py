"""Gaussian smoothing and derivatives with scipy.ndimage.gaussian_filter's meaning."""

import numpy as np

from . import _core
from ._operations import _cuda_stream, _new_output

__all__ = ["gaussian"]

def _per_axis(value, name):
    if np.ndim(value) == 0:
        return [value, value]
    values = list(value)
    if len(values) != 2:
        raise ValueError(f"{name} must be one value or one per axis (2 for a 2-D image), got {len(values)}")
    return values


def gaussian(image, sigma, order=0, mode="reflect", cval=0.0, truncate=4.0, radius=None, method="auto", *,
             split="one_way", out=None, output_dtype=None):
    """Gaussian filter of a 2-D image, as ``scipy.ndimage.gaussian_filter``.

    The result along each axis is the convolution with the normalised sampled Gaussian (times
    scipy's derivative polynomial for ``order`` 1 or 2). numpy input runs on the CPU, CuPy (or
    any ``__cuda_array_interface__``) input on the GPU, on the current stream.

    Parameters
    ----------
    image : array of uint8, uint16 or float32, shape (rows, cols)
    sigma : float or pair of float
        Standard deviation in pixels, per axis (rows, cols). 0 leaves an axis untouched.
    order : int or pair of int
        Derivative order 0, 1 or 2 per axis (0 only for the yvv methods).
    mode : str or pair of str
        'reflect' (default), 'constant', 'nearest', 'mirror' or 'wrap', scipy's meanings.
    cval : float
        Value outside the image for ``mode='constant'``.
    truncate : float
        fir radius = round(truncate * sigma).
    radius : None, int or pair of int
        fir radius per axis, overriding ``truncate``.
    method : str
        'auto' (fir below sigma 3 on the CPU and below 10 on the GPU; above, recursive5 on the
        CPU and deriche on the GPU), 'fir' (exact), 'deriche' (recursive, 4th order, cost
        independent of sigma, relative l2 error <= 1e-3), 'recursive6' (recursive, 6th order,
        relative l2 error about 4e-6 for order 0; CPU only for now), 'recursive5' (recursive,
        5th order, about 4e-5 for order 0 and 1.1x faster than recursive6; CPU only for now),
        'yvv' / 'yvv1995' / 'yvv2002'
        (Young-van Vliet, 2-12% off, the seed paper's filter). See docs/gaussian.md for each
        one's accuracy.
    split : str
        How the GPU runs the yvv methods along a line, the seed paper's schemes: 'one_way'
        (one thread per line, the sequential recursion), 'two_way' (the paper's split, each
        half from its own end with the sampled Gaussian of the middle pixel between them:
        approximate) or 'two_way_exact' (the halves hand the recursion's state over: the
        sequential result up to float rounding). The CPU runs the sequential recursion and
        rejects 'two_way'.
    out : array, optional
        Where to write the result: the image's shape and memory, dtype float32 or the image's.
    output_dtype : None, numpy.float32 or the image's dtype
        dtype of a new result (default float32); the image's dtype rounds and clamps.

    Returns
    -------
    array
        ``out``, or a new array of the image's kind.

    Raises
    ------
    ValueError
        Negative or non-finite sigma, order outside 0..2 (outside 0 for yvv), an unknown mode,
        method or split, a split other than 'one_way' with a method other than yvv, a bad
        ``out`` or ``output_dtype``.
    RuntimeError
        A CUDA failure, or the 'two_way' split on the CPU.

    See Also
    --------
    scipy.ndimage.gaussian_filter, cv2.GaussianBlur

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> img = np.zeros((1, 7), np.float32); img[0, 3] = 1
    >>> np.round(granula.gaussian(img, (0, 1.0), mode='constant'), 4)
    array([[0.0044, 0.054 , 0.242 , 0.3989, 0.242 , 0.054 , 0.0044]],
          dtype=float32)
    """
    rows, cols, dtype, on_device = _core.describe_image(image)
    sigma = [float(s) for s in _per_axis(sigma, "sigma")]
    order = [int(o) for o in _per_axis(order, "order")]
    modes = [mode, mode] if isinstance(mode, str) else [str(m) for m in _per_axis(mode, "mode")]
    radii = [-1, -1] if radius is None else [int(r) for r in _per_axis(radius, "radius")]
    if radius is not None and any(r < 0 for r in radii):
        raise ValueError(f"radius must be >= 0, got {radius}")
    if out is None:
        if output_dtype is None or np.dtype(output_dtype) == np.float32:
            out_dtype = np.dtype(np.float32)
        elif np.dtype(output_dtype) == np.dtype(dtype):
            out_dtype = np.dtype(dtype)
        else:
            raise ValueError(f"output_dtype must be float32 or the image's dtype {dtype}, got {output_dtype}")
        out = _new_output(image, (rows, cols), out_dtype, on_device)
    stream = _cuda_stream(image) if on_device else 0
    _core.gaussian_run(image, out, sigma, order, modes, float(cval), float(truncate), radii, str(method), str(split),
                       stream)
    return out


gaussian.__module__ = "granula"  # public as granula.gaussian (documentation and doctests list it there)
