"""Linear openings and closings at any angle and the analyses built on them (Karas et al. 2015):
orientation maps, angular spectra, granulometries and the rotation of scanned pages.

The filters work in *scan-line mode* (docs/semantics.md, "Linear openings and analyses"): for an
angle the image is cut into parallel digital lines, every pixel on exactly one, and each line is
filtered as a 1-D signal by a window of ``length`` samples (origin ``length // 2``). Angles are
in degrees, counter-clockwise as seen on screen (rows grow down), modulo 180. At 0, 45, 90 and
135 degrees the result equals ``granula.opening`` / ``scipy.ndimage.grey_opening`` with the line
footprint.
"""

import numbers
import sys

import numpy as np

from . import _core
from ._operations import _cuda_stream, _framework, _new_output

__all__ = ["line_opening", "line_closing", "line_erosion", "line_dilation", "orientation", "angular_spectrum", "granulometry", "deskew", "rotate"]


def _angle_list(angles):
    if isinstance(angles, numbers.Integral) and not isinstance(angles, bool):
        if angles < 1:
            raise ValueError(f"angles must be a positive number of angles or a sequence of angles, got {angles}")
        if angles > _core.max_line_angles:  # checked before the list is built
            raise ValueError(f"number of angles {angles} is invalid; it must be in 1..{_core.max_line_angles}")
        return [180.0 * i / angles for i in range(int(angles))]
    try:
        values = [float(a) for a in np.asarray(angles, dtype=np.float64).ravel()]
    except (TypeError, ValueError):
        raise ValueError(f"angles must be an int or a sequence of numbers, got {angles!r}") from None
    if not values:
        raise ValueError("the set of angles is empty; give at least one angle")
    return values


def _length(length, name="length"):
    if isinstance(length, bool) or not isinstance(length, numbers.Integral):
        raise ValueError(f"{name} must be a whole number of pixels >= 1, got {length!r}")
    return int(length)


def _filter(image, length, angle, angles, reduce, kind, mode, cval, algorithm, out):
    rows, cols, dtype, on_device = _core.describe_image(image)
    stream = _cuda_stream(image) if on_device else 0
    if (angle is None) == (angles is None):
        raise ValueError("give either angle (one filtered image) or angles= (many), not both or neither")
    if angles is None:
        if reduce is not None:
            raise ValueError("reduce= is for angles=; with one angle there is nothing to reduce")
        if out is None:
            out = _new_output(image, (rows, cols), np.dtype(dtype), on_device)
        _core.line_filter_run(image, out, float(angle), _length(length), kind, str(mode), float(cval), str(algorithm),
                              stream)
        return out
    angle_list = _angle_list(angles)
    if reduce is None:  # the stack, one image per angle
        shape = (len(angle_list), rows, cols)
        if out is None:
            out = _new_output(image, shape, np.dtype(dtype), on_device)
        elif tuple(out.shape) != shape or not _is_c_contiguous(out):
            raise ValueError(f"out must be a C-contiguous array of shape {shape} (one image per angle), "
                             f"got shape {tuple(out.shape)}")
        filtered, extremum, reduction = [out[i] for i in range(len(angle_list))], None, "auto"
    else:
        if reduce not in ("max", "min"):
            raise ValueError(f"unknown reduction over angles {reduce!r}; allowed: 'max', 'min'")
        if out is None:
            out = _new_output(image, (rows, cols), np.dtype(dtype), on_device)
        filtered, extremum, reduction = [], out, reduce
    _core.line_angles_run(image, angle_list, _length(length), kind, str(mode), float(cval), str(algorithm), reduction,
                          extremum, 0, 0, False, filtered, stream)
    return out


def _is_c_contiguous(array):
    flags = getattr(array, "flags", None)
    if flags is not None and hasattr(flags, "c_contiguous"):
        return bool(flags.c_contiguous)
    return bool(array.is_contiguous())  # PyTorch


def line_opening(image, length, angle=None, *, angles=None, reduce=None, mode="ignore", cval=0.0, algorithm="auto",
                 out=None):
    """Opening of a 2-D image by a line of ``length`` pixels at ``angle`` degrees, along scan lines.

    Parameters
    ----------
    image : (M, N) array of uint8, uint16 or float32
        numpy (computed on the CPU) or CuPy (computed on the GPU, on the current stream).
    length : int
        Pixels in the line, >= 1 and at most the image's extent along the angle's dominant axis
        (columns for |angle| <= 45 degrees modulo 180, rows otherwise).
    angle : float
        Degrees counter-clockwise from the +x axis as seen on screen (y down).
    angles : int or sequence of float, optional
        Instead of ``angle``: a count ``n`` (angles ``0, 180/n, ...``) or the angles themselves,
        all filtered in one call. The result is then the stack of filtered images, shape
        ``(len(angles), M, N)``, unless ``reduce`` asks for one image.
    reduce : {'max', 'min'}, optional
        With ``angles``: the supremum ('max') or infimum ('min') over the angles at each pixel,
        computed without storing the stack (Eq. 3 of Karas et al.; a NaN at any angle gives
        NaN). The supremum of openings keeps bright structure at least ``length`` long in some
        direction, the infimum only what is that long in every direction.
    mode : {'ignore', 'constant', 'nearest', 'reflect'}
        How each scan line is extended past the image: 'ignore' lets the outside take no part.
    cval : float
        The value outside for ``mode='constant'``.
    algorithm : {'auto', 'fifo', 'stack'}
        Bartovsky's streaming algorithm or Morard's stack; both give the same result.
    out : array, optional
        Where to write the result (the shape, dtype and memory described above); may be
        ``image`` for one angle.

    Returns
    -------
    array
        ``out``, or a new array of the image's kind.

    Raises
    ------
    ValueError
        A length < 1 or too long for the image, a non-finite angle, both or neither of
        ``angle`` and ``angles``, an unknown mode, algorithm or reduction, a cval the dtype
        cannot hold, a bad ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> image = np.array([[0, 9, 9, 9, 0, 9, 9, 0]], dtype=np.uint8)
    >>> granula.line_opening(image, 3, 0)
    array([[0, 9, 9, 9, 0, 0, 0, 0]], dtype=uint8)
    >>> cross = np.zeros((7, 7), np.uint8); cross[3, :] = 9; cross[:, 3] = 9; cross[2:5, 2:5] = 9
    >>> granula.line_opening(cross, 5, angles=[0, 90]).shape
    (2, 7, 7)
    >>> granula.line_opening(cross, 3, angles=[0, 90], reduce="max")[3].tolist()  # the cross
    [9, 9, 9, 9, 9, 9, 9]
    >>> granula.line_opening(cross, 3, angles=[0, 90], reduce="min")[3].tolist()  # the square alone
    [0, 0, 9, 9, 9, 0, 0]
    """
    return _filter(image, length, angle, angles, reduce, "opening", mode, cval, algorithm, out)


def line_closing(image, length, angle=None, *, angles=None, reduce=None, mode="ignore", cval=0.0, algorithm="auto",
                 out=None):
    """Closing of a 2-D image by a line of ``length`` pixels at ``angle`` degrees, along scan lines.

    The parameters are those of :func:`line_opening`.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> image = np.array([[9, 0, 9, 9, 0, 0, 0, 9]], dtype=np.uint8)
    >>> granula.line_closing(image, 3, 0)
    array([[9, 9, 9, 9, 0, 0, 0, 9]], dtype=uint8)
    """
    return _filter(image, length, angle, angles, reduce, "closing", mode, cval, algorithm, out)


def line_erosion(image, length, angle=None, *, angles=None, reduce=None, mode="ignore", cval=0.0, out=None):
    """Erosion of a 2-D image by a line of ``length`` pixels at ``angle`` degrees, along scan lines.

    The first stage of :func:`line_opening` alone: each pixel takes the minimum of the ``length``
    samples of its scan line around it (window ``[i - length // 2, i + (length - 1) // 2]``).
    The parameters are those of :func:`line_opening`; at 0, 45, 90 and 135 degrees the result
    is ``granula.erosion`` by ``footprints.line(length, angle)``.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> image = np.array([[5, 1, 7, 7, 7, 3]], dtype=np.uint8)
    >>> granula.line_erosion(image, 3, 0)
    array([[1, 1, 1, 7, 3, 3]], dtype=uint8)
    """
    return _filter(image, length, angle, angles, reduce, "erosion", mode, cval, "auto", out)


def line_dilation(image, length, angle=None, *, angles=None, reduce=None, mode="ignore", cval=0.0, out=None):
    """Dilation of a 2-D image by a line of ``length`` pixels at ``angle`` degrees, along scan lines.

    The first stage of :func:`line_closing` alone (the erosion's window reflected). The
    parameters are those of :func:`line_opening`.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> image = np.array([[5, 1, 7, 2, 2, 3]], dtype=np.uint8)
    >>> granula.line_dilation(image, 3, 0)
    array([[5, 7, 7, 7, 3, 3]], dtype=uint8)
    """
    return _filter(image, length, angle, angles, reduce, "dilation", mode, cval, "auto", out)


def _angles_run(image, length, angles, closing, mode, cval, algorithm, extremum, orientation, spectrum):
    on_device = _core.describe_image(image)[3]
    orientation_ptr, orientation_stride = 0, 0
    if orientation is not None:
        orientation_ptr = orientation.data.ptr if on_device else orientation.ctypes.data
        orientation_stride = orientation.strides[0] // 4
    return _core.line_angles_run(image, angles, _length(length), "closing" if closing else "opening", str(mode),
                                 float(cval), str(algorithm), "auto", extremum, orientation_ptr, orientation_stride,
                                 spectrum, [], _cuda_stream(image) if on_device else 0)


def _index_array(image, shape, on_device):
    if not on_device:
        return np.empty(shape, np.int32)
    if _framework(image) != "cupy":
        raise ValueError("granula's analyses over angles take CuPy arrays on the GPU")
    return sys.modules["cupy"].empty(shape, np.int32)


def orientation(image, length, angles=180, *, closing=False, mode="ignore", cval=0.0, algorithm="auto"):
    """Orientation map: the best line opening (closing) over a set of angles, and its angle.

    ``extremum`` is the supremum over the angles of the openings by ``line(length, angle)``
    (the infimum of the closings with ``closing=True``), Eq. 3 of Karas et al.; ``angle`` is the
    angle attaining it at each pixel (ties: the smallest angle). This is the paper's Fig. 1
    orientation field.

    Parameters
    ----------
    image : (M, N) array of uint8, uint16 or float32
        numpy or CuPy.
    length : int
        Pixels in the line, >= 1 and within the image for every angle.
    angles : int or sequence of float
        A count ``n`` (angles ``0, 180/n, ...``) or the angles themselves, in degrees.
    closing : bool
        Closings (dark structure) instead of openings (bright structure).
    mode, cval, algorithm
        As for :func:`line_opening`.

    Returns
    -------
    extremum : array of the image's dtype
    angle : float32 array of degrees
        numpy or CuPy, like ``image``.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> stripes = np.zeros((20, 20), np.uint8); stripes[::4] = 200
    >>> sup, angle = granula.orientation(stripes, 9, angles=4)
    >>> float(angle[0, 10]), int(sup[0, 10]), int(sup[1, 10])
    (0.0, 200, 0)
    """
    rows, cols, dtype, on_device = _core.describe_image(image)
    angle_list = _angle_list(angles)
    extremum = _new_output(image, (rows, cols), np.dtype(dtype), on_device)
    indices = _index_array(image, (rows, cols), on_device)
    _angles_run(image, length, angle_list, closing, mode, cval, algorithm, extremum, indices, False)
    table = np.asarray(angle_list, np.float32)
    if on_device:
        table = sys.modules["cupy"].asarray(table)
    return extremum, table[indices]


def angular_spectrum(image, length, angles=180, *, closing=False, mode="ignore", cval=0.0, algorithm="auto"):
    """Angular spectrum: for each angle, the sum of the opening (closing) by ``line(length, angle)``.

    Eq. 6 of Karas et al.: ``sigma(angle) = sum over x of opening(image)(x)``; it peaks at the
    direction of the image's bright linear structure (dips at its dark structure for closings).

    Parameters
    ----------
    image, length, angles, closing, mode, cval, algorithm
        As for :func:`orientation`.

    Returns
    -------
    angles : float64 numpy array
    spectrum : float64 numpy array
        One sum per angle, in the order of ``angles``.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> stripes = np.zeros((20, 20), np.uint8); stripes[:, ::4] = 1
    >>> angles, sums = granula.angular_spectrum(stripes, 9, angles=4, mode="constant")
    >>> angles.tolist(), sums.tolist()
    ([0.0, 45.0, 90.0, 135.0], [0.0, 0.0, 100.0, 0.0])
    """
    angle_list = _angle_list(angles)
    sums = _angles_run(image, length, angle_list, closing, mode, cval, algorithm, None, None, True)
    return np.asarray(angle_list, np.float64), np.asarray(sums, np.float64)


def granulometry(image, lengths, angles=12, *, closing=False, mode="ignore", cval=0.0, algorithm="auto"):
    """Size distribution by linear openings (closings): one sum per length.

    For each length, the sum over the image of the supremum over ``angles`` of the openings by
    lines of that length (the infimum of closings with ``closing=True``). The sums decrease
    (increase) with the length; the pattern spectrum is ``-numpy.diff(sums)`` (``numpy.diff``
    for closings).

    Parameters
    ----------
    image : (M, N) array of uint8, uint16 or float32
        numpy or CuPy.
    lengths : sequence of int
        Line lengths, each >= 1 and within the image for every angle.
    angles : int or sequence of float
        A count (evenly spaced over [0, 180)) or the angles; default 12 (every 15 degrees).
    closing, mode, cval, algorithm
        As for :func:`orientation`.

    Returns
    -------
    float64 numpy array
        One sum per length.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> image = np.zeros((1, 12), np.uint8); image[0, 1:4] = 1; image[0, 6:11] = 1
    >>> granula.granulometry(image, [1, 3, 5, 7], angles=[0]).tolist()
    [8.0, 8.0, 5.0, 0.0]
    """
    if hasattr(lengths, "__len__") and len(lengths) > _core.max_line_angles:  # before a range is expanded
        raise ValueError(f"{len(lengths)} lengths are too many; a granulometry takes at most {_core.max_line_angles}")
    try:
        length_list = [_length(l, "each length") for l in lengths]
    except TypeError:
        raise ValueError(f"lengths must be a sequence of whole numbers, got {lengths!r}") from None
    on_device = _core.describe_image(image)[3]
    sums = _core.granulometry_run(image, length_list, _angle_list(angles), "closing" if closing else "opening",
                                  str(mode), float(cval), str(algorithm), _cuda_stream(image) if on_device else 0)
    return np.asarray(sums, np.float64)


def _to_host(image):
    if _core.describe_image(image)[3]:
        if _framework(image) != "cupy":
            raise ValueError("for CUDA arrays granula.deskew and granula.rotate take CuPy arrays")
        return image.get(), True
    return image, False


def deskew(image, range=(-10.0, 10.0), step=0.1, method="text", length=None):
    """The rotation of a scanned page, in degrees counter-clockwise: ``rotate(image, -angle)``
    straightens it.

    Every angle in ``range`` (and 3 degrees beyond either end) at ``step`` is scored, and the
    centre of the best peak, to a fraction of the step, is returned, clamped to ``range``.
    Methods (docs/semantics.md gives their measured accuracy):

    'text'
        Joins each text line's characters by a short closing along the angle, then sums the
        opening by a long line along it (the darkness of the print, after removing the page's
        uneven background): largest when the lines follow the text. Text pages, staves.
    'closing'
        Karas et al.'s music-sheet method: the sum of the closings of the page by long lines,
        lowest when the lines follow the page's dark lines (staves, rules).

    Parameters
    ----------
    image : (M, N) array of uint8, uint16 or float32
        Dark print on a light page. Computed on the CPU (a CuPy array is copied to the host).
    range : (float, float)
        First and last angle tried, in degrees.
    step : float
        Step between the angles tried, > 0.
    method : {'text', 'closing'}
    length : int, optional
        Line length in pixels; default 0.6 x the image width (its height for a range around 90
        degrees, vertical text).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A step <= 0, an empty range, a length < 1 or too long for the image, NaN pixels, an
        unknown method.

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> page = np.full((120, 200), 230, np.uint8)
    >>> page[20::12, 20:180] = 30                       # ruled lines
    >>> tilted = granula.rotate(page, 3.0, fill=230)
    >>> round(granula.deskew(tilted), 1)
    3.0
    """
    host, _ = _to_host(image)
    first, last = (float(v) for v in range)
    if length is None:
        length = 0
    elif _length(length) < 1:
        raise ValueError(f"length must be >= 1, got {length}")
    angle, _, _ = _core.detect_rotation_run(host, first, last, float(step), str(method), int(length))
    return angle


def rotate(image, angle, fill=0):
    """Rotate a 2-D image about its centre by ``angle`` degrees, counter-clockwise as seen on screen.

    Bilinear interpolation, the size kept; pixels whose pre-image falls outside the image get
    ``fill``. Equals ``scipy.ndimage.rotate(image, angle, reshape=False, order=1,
    mode='constant', cval=fill)`` to rounding (integer results round half up), exactly at
    multiples of 90 degrees.

    Parameters
    ----------
    image : (M, N) array of uint8, uint16 or float32
        Computed on the CPU (a CuPy array is copied to the host and the result back).
    angle : float
    fill : float
        Representable in the dtype (NaN allowed for float32).

    Returns
    -------
    array of the image's dtype and kind

    Examples
    --------
    >>> import numpy as np
    >>> import granula
    >>> granula.rotate(np.arange(9, dtype=np.uint8).reshape(3, 3), 90)
    array([[2, 5, 8],
           [1, 4, 7],
           [0, 3, 6]], dtype=uint8)
    """
    host, on_device = _to_host(image)
    rows, cols, dtype, _ = _core.describe_image(host)
    out = np.empty((rows, cols), np.dtype(dtype))
    _core.rotate_run(host, out, float(angle), float(fill))
    return sys.modules["cupy"].asarray(out) if on_device else out


for _f in (line_opening, line_closing, line_erosion, line_dilation, orientation, angular_spectrum, granulometry,
           deskew, rotate):
    _f.__module__ = "granula"  # public as granula.<name>
