"""Flat structuring elements (footprints).

Every operation's ``footprint=`` argument takes a :class:`Footprint` made here, its text form
(``"hline:15"``, ``"vline:15"``, ``"rect:WxH"``, ``"square:N"``, as the command-line tool
spells it), or a scikit-image style array whose elements are all set.

Sizes follow scikit-image and numpy: :func:`rectangle` takes ``(nrows, ncols)``. The text
form ``"rect:WxH"`` is width (columns) by height (rows), as on the command line, so
``rectangle(3, 15)`` and ``"rect:15x3"`` are the same footprint.

The origin of an extent of ``n`` pixels is at index ``n // 2``, as in scipy.ndimage, OpenCV and
scikit-image.

Examples
--------
>>> from granula import footprints
>>> footprints.rectangle(3, 15) == footprints.parse("rect:15x3")
True
>>> footprints.hline(15).shape
(1, 15)
"""

from ._core import Footprint, LineSegment
from . import _core

# Documented as members of this module, where users find them.
Footprint.__module__ = LineSegment.__module__ = __name__

__all__ = ["Footprint", "LineSegment", "hline", "vline", "rectangle", "square", "parse", "as_footprint"]


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


def parse(spec):
    """Footprint from its text form.

    Parameters
    ----------
    spec : str
        ``"hline:L"``, ``"vline:L"``, ``"rect:WxH"`` (W columns, H rows) or ``"square:N"``, with
        integers of at least 1.

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
        A footprint, its text form, or a 2-D mask whose elements are all set (scikit-image
        style; its origin is at the centre, ``n // 2`` along each axis). None gives ``default``.
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
        If the text form is bad, or the mask is empty, not 2-D or has unset elements (only
        rectangles are supported so far).

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
    shape = getattr(footprint, "shape", None)
    if shape is None or not hasattr(footprint, "all"):
        raise TypeError(
            "footprint must be a granula.footprints.Footprint, a text form such as 'hline:15' "
            f"or a 2-D mask array; got {type(footprint).__name__}"
        )
    if len(shape) != 2 or 0 in shape:
        raise ValueError(f"a footprint mask must be a non-empty 2-D array; got shape {tuple(shape)}")
    if not bool(footprint.all()):
        raise ValueError(
            "only rectangular footprint masks (every element set) are supported so far; "
            "use a Footprint or a text form: " + _core.footprint_syntax()
        )
    return rectangle(int(shape[0]), int(shape[1]))
