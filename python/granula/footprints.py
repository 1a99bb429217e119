"""Flat structuring elements (footprints).

Every operation's ``footprint=`` argument takes a :class:`Footprint` made here, its text form
(``"hline:15"``, ``"rect:WxH"``, ``"line:31:30"``, ``"disk:5"``, ... as the command-line tool
spells it), or a scikit-image style 2-D mask array (origin at its centre).

Sizes follow scikit-image and numpy: :func:`rectangle` takes ``(nrows, ncols)``. The text
form ``"rect:WxH"`` is width (columns) by height (rows), as on the command line, so
``rectangle(3, 15)`` and ``"rect:15x3"`` are the same footprint.

The origin of an extent of ``n`` pixels is at index ``n // 2``, as in scipy.ndimage, OpenCV and
scikit-image. ``Footprint.with_origin(row, col)`` moves it (scipy's ``origin=``) and
``Footprint.reflected()`` turns the footprint about it; the operations' ``convention=``
applies what OpenCV and MATLAB do.

Examples
--------
>>> from granula import footprints
>>> footprints.rectangle(3, 15) == footprints.parse("rect:15x3")
True
>>> footprints.hline(15).shape
(1, 15)
"""

import numpy as np

from ._core import DecompositionTerm, Footprint, LineSegment
from . import _core

# Documented as members of this module, where users find them.
Footprint.__module__ = LineSegment.__module__ = DecompositionTerm.__module__ = __name__

__all__ = [
    "Footprint",
    "LineSegment",
    "DecompositionTerm",
    "hline",
    "vline",
    "rectangle",
    "square",
    "line",
    "disk",
    "diamond",
    "octagon",
    "ellipse",
    "mask",
    "parse",
    "as_footprint",
]


def hline(length):
    """Horizontal line of ``length`` pixels (one row).

    Parameters
    ----------
    length : int
        Number of pixels, at least 1.

    Returns
    -------
    Footprint
        The line; its origin is pixel ``length // 2``.

    Raises
    ------
    ValueError
        If ``length`` is less than 1.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.hline(5).footprint()
    (array([[ True,  True,  True,  True,  True]]), (0, 2))
    """
    return _core.hline(length)


def vline(length):
    """Vertical line of ``length`` pixels (one column).

    Parameters
    ----------
    length : int
        Number of pixels, at least 1.

    Returns
    -------
    Footprint
        The line; its origin is pixel ``length // 2``.

    Raises
    ------
    ValueError
        If ``length`` is less than 1.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.vline(4).shape
    (4, 1)
    >>> footprints.vline(4).footprint()[1]
    (2, 0)
    """
    return _core.vline(length)


def rectangle(nrows, ncols):
    """Rectangle of ``nrows`` rows and ``ncols`` columns.

    The argument order is scikit-image's and numpy's (rows first); the text form of the result
    is ``"rect:{ncols}x{nrows}"`` (width first, as on the command line).

    Parameters
    ----------
    nrows : int
        Height in pixels, at least 1.
    ncols : int
        Width in pixels, at least 1.

    Returns
    -------
    Footprint
        The rectangle; its origin is ``(nrows // 2, ncols // 2)``.

    Raises
    ------
    ValueError
        If a size is less than 1.

    Examples
    --------
    >>> from granula import footprints
    >>> fp = footprints.rectangle(2, 3)
    >>> fp.spec
    'rect:3x2'
    >>> mask, origin = fp.footprint()
    >>> mask.shape, origin
    ((2, 3), (1, 1))
    """
    return _core.rectangle(ncols, nrows)


def square(width):
    """Square of ``width`` by ``width`` pixels.

    Parameters
    ----------
    width : int
        Side in pixels, at least 1.

    Returns
    -------
    Footprint
        The square; its origin is ``(width // 2, width // 2)``.

    Raises
    ------
    ValueError
        If ``width`` is less than 1.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.square(3)
    Footprint('rect:3x3')
    """
    return _core.rectangle(width, width)


def line(length, angle):
    """Digital line of ``length`` pixels at ``angle`` degrees.

    One pixel per step along the dominant axis; angles are counter-clockwise from +x as seen on
    screen (a 45 degree line rises to the right) and taken modulo 180. The slope is snapped to
    a fraction p/q with q <= 64: the simplest that keeps the line's ends within a quarter pixel
    of the exact slope's, so every pixel lies within 3/4 of a pixel of the exact line, or the
    nearest where none does (long lines; at most 1/128 off); exact at 0, 45, 90 and 135
    degrees. That makes the line periodic: erosion costs O(1) per pixel for the periodic part
    plus one period's runs, whatever the length.

    Parameters
    ----------
    length : int
        Number of pixels, at least 1.
    angle : float
        Degrees, finite.

    Returns
    -------
    Footprint
        The line; its origin is pixel ``length // 2`` along the dominant axis.

    Raises
    ------
    ValueError
        If ``length`` is less than 1 or ``angle`` is not finite.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.line(3, 45).footprint()[0].astype(int)
    array([[0, 0, 1],
           [0, 1, 0],
           [1, 0, 0]])
    """
    return _core.line(length, float(angle))


def disk(radius, periodic_lines=0):
    """Euclidean disk ``x**2 + y**2 <= radius**2``, as scikit-image's ``disk``, or MATLAB's
    ``strel('disk', radius, periodic_lines)`` approximation of it.

    With ``periodic_lines`` 4, 6 or 8 the disk is Adams' radial decomposition into that many
    periodic lines (plus a horizontal and a vertical line where they fall short of the radius),
    as MATLAB builds it: a symmetric polygon of up to 2 ``periodic_lines`` sides that reaches
    ``radius - 1`` along the axes and up to 10% past ``radius`` between them, and whose erosion
    costs the same for every radius. Below radius 3 it is the exact disk, as in MATLAB.
    ``footprint()`` gives its exact pixels.

    Parameters
    ----------
    radius : int
        At least 0 (0: a single pixel).
    periodic_lines : int
        0 (the exact disk, the default), 4, 6 or 8.

    Returns
    -------
    Footprint
        A square footprint with its origin at the centre, ``2 radius + 1`` wide when exact.

    Raises
    ------
    ValueError
        If ``radius`` is negative or ``periodic_lines`` is not 0, 4, 6 or 8.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.disk(1).footprint()[0].astype(int)
    array([[0, 1, 0],
           [1, 1, 1],
           [0, 1, 0]])
    >>> footprints.disk(4, periodic_lines=4).footprint()[0].astype(int)
    array([[0, 0, 1, 1, 1, 0, 0],
           [0, 1, 1, 1, 1, 1, 0],
           [1, 1, 1, 1, 1, 1, 1],
           [1, 1, 1, 1, 1, 1, 1],
           [1, 1, 1, 1, 1, 1, 1],
           [0, 1, 1, 1, 1, 1, 0],
           [0, 0, 1, 1, 1, 0, 0]])
    """
    return _core.disk(radius, periodic_lines)



def diamond(radius):
    """Diamond ``|x| + |y| <= radius``, as scikit-image's ``diamond``.

    Parameters
    ----------
    radius : int
        At least 0 (0: a single pixel).

    Returns
    -------
    Footprint

    Raises
    ------
    ValueError
        If ``radius`` is negative.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.diamond(2).shape
    (5, 5)
    """
    return _core.diamond(radius)


def octagon(m, n):
    """Octagon as scikit-image's ``octagon(m, n)``.

    Parameters
    ----------
    m : int
        Length of the horizontal and vertical sides, at least 1.
    n : int
        Height (and width) of the slanted sides, at least 1.

    Returns
    -------
    Footprint
        A ``(m + 2 n)``-square footprint.

    Raises
    ------
    ValueError
        If ``m`` or ``n`` is less than 1.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.octagon(1, 1).footprint()[0].astype(int)
    array([[0, 1, 0],
           [1, 1, 1],
           [0, 1, 0]])
    """
    return _core.octagon(m, n)


def ellipse(width, height):
    """Ellipse as scikit-image's ``ellipse(width, height)``.

    The pixels with ``(x / (width + 1))**2 + (y / (height + 1))**2 < 1`` in a box of
    ``2 height + 1`` rows and ``2 width + 1`` columns.

    Parameters
    ----------
    width, height : int
        Half-extents, at least 1.

    Returns
    -------
    Footprint

    Raises
    ------
    ValueError
        If a size is less than 1.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.ellipse(3, 1).shape
    (3, 7)
    """
    return _core.ellipse(width, height)


def mask(array, origin=None):
    """Footprint from any 2-D mask.

    Parameters
    ----------
    array : array_like of bool or of 0 and 1
        The mask; at least one element set.
    origin : tuple of int, optional
        (row, col) of the origin inside the mask; default the centre, ``n // 2`` along each axis.

    Returns
    -------
    Footprint
        Costs follow the mask's row (or column) runs, not its area.

    Raises
    ------
    ValueError
        If the mask is not 2-D, empty, has no set element, has values other than 0 and 1, or
        the origin is outside it.

    Examples
    --------
    >>> import numpy as np
    >>> from granula import footprints
    >>> fp = footprints.mask(np.array([[1, 0, 1]]), origin=(0, 0))
    >>> fp.footprint()
    (array([[ True, False,  True]]), (0, 0))
    """
    values = np.asarray(array)
    if values.ndim != 2 or values.size == 0:
        raise ValueError(f"a footprint mask must be a non-empty 2-D array; got shape {values.shape}")
    if values.dtype != np.bool_:
        if not (np.issubdtype(values.dtype, np.number) and np.isin(values, (0, 1)).all()):
            raise ValueError("a footprint mask must be boolean or hold only 0 and 1")
    rows, cols = values.shape
    if origin is None:
        origin = (rows // 2, cols // 2)
    data = np.ascontiguousarray(values.astype(np.uint8)).tobytes()
    return _core.mask_footprint(data, rows, cols, int(origin[0]), int(origin[1]))


def parse(spec):
    """Footprint from its text form.

    Parameters
    ----------
    spec : str
        ``"hline:L"``, ``"vline:L"``, ``"rect:WxH"`` (W columns, H rows), ``"square:N"``,
        ``"line:L:ANGLE"``, ``"disk:R"``, ``"disk:R:N"`` (N = 4, 6 or 8 periodic lines),
        ``"diamond:R"``, ``"octagon:M:N"`` or ``"ellipse:WxH"``, with integers of at least 1 and
        ANGLE in degrees.

    Returns
    -------
    Footprint

    Raises
    ------
    ValueError
        If ``spec`` is not one of those forms; the message lists them.

    Examples
    --------
    >>> from granula import footprints
    >>> footprints.parse("vline:7") == footprints.vline(7)
    True
    """
    return Footprint.parse(spec)


def as_footprint(footprint, default):
    """The :class:`Footprint` an operation's ``footprint=`` argument names.

    Parameters
    ----------
    footprint : Footprint, str, array_like of bool or None
        A footprint, its text form, or a 2-D mask of bool or 0/1 values (scikit-image style;
        its origin is at the centre, ``n // 2`` along each axis). None gives ``default``.
    default : Footprint
        What None stands for.

    Returns
    -------
    Footprint

    Raises
    ------
    TypeError
        If ``footprint`` is of another type.
    ValueError
        If the text form is bad, or the mask is empty, not 2-D, has no set element or values
        other than 0 and 1.

    Examples
    --------
    >>> import numpy as np
    >>> from granula import footprints
    >>> footprints.as_footprint(np.ones((3, 5), dtype=bool), footprints.square(3))
    Footprint('rect:5x3')
    """
    if footprint is None:
        return default
    if isinstance(footprint, Footprint):
        return footprint
    if isinstance(footprint, str):
        return Footprint.parse(footprint)
    if not hasattr(footprint, "shape"):
        raise TypeError(
            "footprint must be a granula.footprints.Footprint, a text form such as 'hline:15' "
            f"or a 2-D mask array; got {type(footprint).__name__}"
        )
    values = np.asarray(footprint)
    if values.ndim == 2 and values.size and values.all():
        return rectangle(*values.shape)  # the separable fast path
    return mask(values)
