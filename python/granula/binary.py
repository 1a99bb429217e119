"""Binary morphology on bit-packed images: 64 pixels per ``uint64`` word.

A :class:`PackedImage` holds a 2-D ``uint64`` array of shape ``(rows, words)`` (numpy, or CuPy
for images on the GPU) and the width in pixels. Bit ``k`` of word ``j`` in a row is the pixel at
column ``64 * j + k`` (bit 0 is the leftmost pixel); the bits past the width are zero. Operations
on packed images never unpack them; the results equal granula's grey operations on 0/1 images
made 0/1 again, bit for bit (an erosion's window that misses the image, which only a footprint
without its origin allows, gives the grey operation the type's maximum and the binary one 1).
For 0/1 pixel arrays, :func:`granula.binary_erosion` and its siblings pack, operate and unpack
in one call (uint8 and uint16 arrays: the grey operation, made 0/1).

Examples
--------
>>> import numpy as np
>>> from granula import binary
>>> image = np.zeros((5, 7), dtype=bool)
>>> image[1:4, 1:6] = True
>>> packed = binary.pack(image)
>>> packed
PackedImage(shape=(5, 7), host)
>>> binary.unpack(binary.erosion(packed, "square:3"), dtype=bool).astype(int)
array([[0, 0, 0, 0, 0, 0, 0],
       [0, 0, 0, 0, 0, 0, 0],
       [0, 0, 1, 1, 1, 0, 0],
       [0, 0, 0, 0, 0, 0, 0],
       [0, 0, 0, 0, 0, 0, 0]])
"""

import sys

import numpy as np

from . import _core
from ._operations import _cuda_stream, _framework
from .footprints import as_footprint, parse

__all__ = ["PackedImage", "pack", "unpack", "erosion", "dilation", "opening", "closing", "hit_or_miss"]

_DEFAULT_FOOTPRINT = parse("square:3")


def _words_for(width):
    return (width + 63) // 64


def _address(words):
    if isinstance(words, np.ndarray):
        return words.ctypes.data
    return words.data.ptr  # CuPy


def _new_words(rows, width, like):
    # Unset but for each row's last word: every packing and operation writes all pixels and
    # leaves the padding bits, zero by the layout, as it finds them (zeroing 2 MB cost 10% of a
    # 4096x4096 erosion).
    xp = sys.modules["cupy"] if _framework(like) == "cupy" else np
    words = xp.empty((rows, _words_for(width)), dtype=np.uint64)
    if width % 64:
        words[:, -1] = 0
    return words


class PackedImage:
    """A bit-packed binary image.

    Parameters
    ----------
    words : (rows, W) array of uint64
        The packed rows, ``W >= ceil(width / 64)``; a numpy array (host) or a CuPy array (GPU).
        Columns must be contiguous. The array is used as it is, not copied.
    width : int
        Width of the image in pixels.

    Raises
    ------
    ValueError
        If ``words`` is not a 2-D uint64 array with contiguous columns, or ``width`` does not fit.

    Examples
    --------
    >>> import numpy as np
    >>> from granula.binary import PackedImage
    >>> words = np.array([[0b1011]], dtype=np.uint64)
    >>> PackedImage(words, 4).unpack().tolist()
    [[1, 1, 0, 1]]
    """

    def __init__(self, words, width):
        framework = _framework(words)
        if not isinstance(words, np.ndarray) and framework != "cupy":
            raise ValueError(f"words must be a numpy or CuPy uint64 array, got {type(words).__name__}")
        if words.dtype != np.uint64 or words.ndim != 2:
            raise ValueError(f"words must be a 2-D uint64 array, got a {words.ndim}-D {words.dtype} array")
        if words.shape[1] > 1 and words.strides[1] != 8 or words.strides[0] % 8 or words.strides[0] <= 0 and words.shape[0] > 1:
            raise ValueError(f"words must have contiguous columns and a positive row stride, got strides {words.strides}")
        width = int(width)
        if width < 1 or _words_for(width) > words.shape[1]:
            raise ValueError(
                f"width {width} does not fit: {words.shape[1]} words per row hold 1 to {64 * words.shape[1]} pixels"
            )
        if words.shape[0] < 1:
            raise ValueError("words has no rows; a packed image needs at least 1x1 pixels")
        self.words = words
        self.width = width

    @property
    def shape(self):
        """(rows, cols) in pixels."""
        return (self.words.shape[0], self.width)

    @property
    def on_device(self):
        """Whether the words are in GPU memory (a CuPy array)."""
        return not isinstance(self.words, np.ndarray)

    def _raw(self):
        stride = self.words.strides[0] // 8 if self.words.shape[0] > 1 else self.words.shape[1]
        return _address(self.words), self.width, self.words.shape[0], stride

    def _stream(self):
        return _cuda_stream(self.words) if self.on_device else 0

    def unpack(self, dtype=np.uint8, out=None):
        """The pixels as 0/1; see :func:`unpack`."""
        return unpack(self, dtype=dtype, out=out)

    def __repr__(self):
        return f"PackedImage(shape={self.shape}, {'cuda' if self.on_device else 'host'})"


def pack(image, threshold=0):
    """Pack an image into bits: 1 where ``image > threshold``.

    Parameters
    ----------
    image : (M, N) array of bool, uint8, uint16 or float32
        A numpy array (packed on the CPU) or a CuPy array (packed on its GPU). Bool arrays are
        read as uint8 without a copy.
    threshold : float, optional
        Pixels above it become 1. It must lie in the dtype's range (0 to 255 for uint8 and bool)
        and not be NaN; NaN pixels become 0. Default 0: every non-zero pixel is 1.

    Returns
    -------
    PackedImage
        In the image's kind of memory.

    Raises
    ------
    ValueError
        If the dtype or layout is not supported, the image is empty, or the threshold is out of
        range.

    Examples
    --------
    >>> import numpy as np
    >>> from granula import binary
    >>> p = binary.pack(np.array([[0, 5, 200, 9]], dtype=np.uint8), threshold=8)
    >>> p.words
    array([[12]], dtype=uint64)
    """
    if image is not None and getattr(image, "dtype", None) == np.bool_:
        image = image.view(np.uint8)
    rows, cols, _, on_device = _core.describe_image(image)
    words = _new_words(rows, cols, image)
    packed = PackedImage(words, cols)
    address, width, height, stride = packed._raw()
    _core.pack_into(image, address, width, height, stride, on_device, float(threshold),
                    _cuda_stream(image) if on_device else 0)
    return packed


def unpack(packed, dtype=np.uint8, out=None):
    """Unpack bits to a 0/1 array.

    Parameters
    ----------
    packed : PackedImage
    dtype : dtype, optional
        bool, uint8 (default), uint16 or float32.
    out : array, optional
        Where to write: the packed image's shape and ``dtype``, in the same kind of memory.

    Returns
    -------
    array
        numpy for host images, CuPy for GPU ones.

    Raises
    ------
    ValueError
        If ``out`` or ``dtype`` does not fit.

    Examples
    --------
    >>> import numpy as np
    >>> from granula import binary
    >>> binary.unpack(binary.pack(np.eye(3, dtype=np.uint8)), dtype=np.float32)
    array([[1., 0., 0.],
           [0., 1., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    if not isinstance(packed, PackedImage):
        raise TypeError(f"packed must be a PackedImage, got {type(packed).__name__}")
    dtype = np.dtype(dtype)
    if out is None:
        xp = sys.modules["cupy"] if packed.on_device else np
        out = xp.empty(packed.shape, dtype=dtype)
    target = out.view(np.uint8) if out.dtype == np.bool_ else out
    address, width, height, stride = packed._raw()
    _core.unpack_into(address, width, height, stride, packed.on_device, target, packed._stream())
    return out


def _check_packed(packed, role="packed"):
    if not isinstance(packed, PackedImage):
        raise TypeError(f"{role} must be a PackedImage (granula.binary.pack), got {type(packed).__name__}")


def _run(name, packed, footprint, mode, cval):
    _check_packed(packed)
    footprint = as_footprint(footprint, _DEFAULT_FOOTPRINT)
    result = PackedImage(_new_words(packed.shape[0], packed.width, packed.words), packed.width)
    address, width, height, stride = packed._raw()
    out_address, _, _, out_stride = result._raw()
    _core.binary_packed(name, address, out_address, width, height, stride, out_stride, packed.on_device, footprint,
                        mode, float(cval), packed._stream())
    return result


_OP_DOC = """Binary {op} of a packed image: {definition}

Equals granula's grey ``{op}`` on the 0/1 image bit for bit.

Parameters
----------
packed : PackedImage
footprint : Footprint, str or array of bool, optional
    The structuring element (see :mod:`granula.footprints`). Default ``'square:3'``.
mode : str, optional
    Border: 'ignore' (default), 'constant', 'nearest', 'reflect', 'mirror' or 'wrap'.
cval : float, optional
    The value outside the image with mode 'constant': 0 or 1.

Returns
-------
PackedImage
    A new packed image in the same kind of memory.

Raises
------
ValueError
    If the footprint, mode or cval is bad.

Examples
--------
>>> import numpy as np
>>> from granula import binary
>>> row = binary.pack(np.array([[0, 1, 1, 1, 0, 0, 1, 0]], dtype=np.uint8))
>>> binary.{op}(row, "hline:3").unpack()
{example}
"""

_OPS = {
    "erosion": ("1 where the footprint, placed at the pixel, covers only 1s.",
                "array([[0, 0, 1, 0, 0, 0, 0, 0]], dtype=uint8)"),
    "dilation": ("1 where the reflected footprint, placed at the pixel, covers a 1.",
                 "array([[1, 1, 1, 1, 1, 1, 1, 1]], dtype=uint8)"),
    "opening": ("the dilation of the erosion; removes what the footprint does not fit in.",
                "array([[0, 1, 1, 1, 0, 0, 0, 0]], dtype=uint8)"),
    "closing": ("the erosion of the dilation; fills gaps the footprint does not fit in.",
                "array([[1, 1, 1, 1, 1, 1, 1, 1]], dtype=uint8)"),
}


def _make(op):
    def operation(packed, footprint=None, *, mode="ignore", cval=0.0):
        return _run("binary_" + op, packed, footprint, mode, cval)

    operation.__name__ = operation.__qualname__ = op
    operation.__doc__ = _OP_DOC.format(op=op, definition=_OPS[op][0], example=_OPS[op][1])
    return operation


erosion = _make("erosion")
dilation = _make("dilation")
opening = _make("opening")
closing = _make("closing")


def hit_or_miss(image, foreground, background, *, mode="ignore", cval=0.0):
    """Hit-or-miss transform: 1 where ``foreground`` fits in the 1s and ``background`` in the 0s.

    ``erosion(f, foreground) AND erosion(NOT f, background)``. The border extends ``f``; its
    complement sees the complement of that extension (constant ``cval`` becomes ``1 - cval``),
    so with mode 'ignore' offsets outside the image take no part. scipy's
    ``binary_hit_or_miss`` instead counts outside pixels as neither 1 nor 0 (it erodes both with
    border 0): the two agree wherever neither footprint reaches outside the image.

    Parameters
    ----------
    image : PackedImage or (M, N) array
        A packed image, or a 0/1 array (bool, uint8, uint16 or float32; non-zero is 1) on the
        host or a GPU.
    foreground, background : Footprint, str or array of bool
        The offsets that must be 1 and those that must be 0. An offset in both can never match,
        so the result is then empty: today's footprints (lines, rectangles) all contain their
        origin, and a useful pair needs a background without it (masks, when they come).
    mode : str, optional
        Border, as for :func:`erosion`.
    cval : float, optional
        0 or 1, with mode 'constant'.

    Returns
    -------
    PackedImage or array
        A packed image for packed input; otherwise a 0/1 array of the image's dtype and kind.

    Raises
    ------
    ValueError
        If the image, a footprint, the mode or cval is bad.

    Examples
    --------
    >>> import numpy as np
    >>> from granula import binary
    >>> image = np.array([[0, 0, 0, 0, 0],
    ...                   [0, 1, 1, 1, 0],
    ...                   [0, 0, 0, 0, 0]], dtype=np.uint8)
    >>> bool(binary.hit_or_miss(image, "hline:3", "vline:3").any())   # both contain the origin
    False
    """
    packed_input = isinstance(image, PackedImage)
    packed = image if packed_input else pack(image)
    fg = as_footprint(foreground, None)
    bg = as_footprint(background, None)
    result = PackedImage(_new_words(packed.shape[0], packed.width, packed.words), packed.width)
    address, width, height, stride = packed._raw()
    out_address, _, _, out_stride = result._raw()
    _core.hit_or_miss_packed(address, out_address, width, height, stride, out_stride, packed.on_device, fg, bg, mode,
                             float(cval), packed._stream())
    if packed_input:
        return result
    return unpack(result, dtype=image.dtype)
