"""The image operations, generated from the C++ operation registry (granula/operations.hpp).

Each registered operation becomes a function ``name(image, footprint=None, *, mode=..., cval=...,
out=None)`` (grey morphology adds ``convention=...``) whose defaults and parameter help come from
the registry, so the Python functions,
the command-line tool and the C++ API cannot drift apart. Docstrings add what only Python users
need: array handling, the scipy.ndimage equivalent and a runnable example.
"""

import sys
import textwrap

import numpy as np

from . import _core
from .footprints import as_footprint, parse

# The parameters _core.run takes, and those only some operations list (grey morphology's
# convention); an operation with others is bound once run takes them.
_PARAMETERS = ("footprint", "mode", "cval")
_OPTIONAL_PARAMETERS = ("convention",)

# Per operation: the definition, the scipy.ndimage function computing the same thing in modes
# other than 'ignore', and a doctest. The example image is _EXAMPLE_IMAGE.
_EXAMPLE_IMAGE = """\
>>> import numpy as np
>>> import granula
>>> image = np.array([[0, 0, 0, 0, 0, 0],
...                   [0, 9, 9, 9, 0, 0],
...                   [0, 9, 9, 9, 0, 5],
...                   [0, 0, 0, 0, 0, 0]], dtype=np.uint8)"""

_BOOL_MASKS = "A bool mask is taken too (as its 0/1 bytes, no copy) and gives a bool mask."

_DETAILS = {
    "erosion": (
        "``out(x) = min over b in B of image(x + b)``.",
        "grey_erosion",
        """\
>>> granula.erosion(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [0, 0, 9, 0, 0, 0],
       [0, 0, 9, 0, 0, 0],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "dilation": (
        "``out(x) = max over b in B of image(x - b)``: the footprint is reflected, as in "
        "scipy.ndimage and scikit-image (OpenCV does not reflect; the two differ for even sizes: "
        "``convention='opencv'`` gives OpenCV's).",
        "grey_dilation",
        """\
>>> granula.dilation(image, "vline:3")
array([[0, 9, 9, 9, 0, 0],
       [0, 9, 9, 9, 0, 5],
       [0, 9, 9, 9, 0, 5],
       [0, 9, 9, 9, 0, 5]], dtype=uint8)""",
    ),
    "opening": (
        "Dilation of the erosion by the same footprint: removes bright detail the footprint "
        "does not fit in. Anti-extensive and idempotent in mode 'ignore'.",
        "grey_opening",
        """\
>>> granula.opening(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [0, 9, 9, 9, 0, 0],
       [0, 9, 9, 9, 0, 0],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "closing": (
        "Erosion of the dilation by the same footprint: fills dark detail the footprint does "
        "not fit in. Extensive and idempotent in mode 'ignore'.",
        "grey_closing",
        """\
>>> granula.closing(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [9, 9, 9, 9, 0, 0],
       [9, 9, 9, 9, 5, 5],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "white_tophat": (
        "``image - opening(image)``: the bright detail the opening removes.",
        "white_tophat",
        """\
>>> granula.white_tophat(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [0, 0, 0, 0, 0, 0],
       [0, 0, 0, 0, 0, 5],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "black_tophat": (
        "``closing(image) - image``: the dark detail the closing fills.",
        "black_tophat",
        """\
>>> granula.black_tophat(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [9, 0, 0, 0, 0, 0],
       [9, 0, 0, 0, 5, 0],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "gradient": (
        "``dilation(image) - erosion(image)``.",
        "morphological_gradient",
        """\
>>> granula.gradient(image, "square:3")
array([[9, 9, 9, 9, 9, 0],
       [9, 9, 9, 9, 9, 5],
       [9, 9, 9, 9, 9, 5],
       [9, 9, 9, 9, 9, 5]], dtype=uint8)""",
    ),
    # Binary operations (granula.binary has them on packed images): non-zero is 1, results 0/1.
    "binary_erosion": (
        "Erosion of the 0/1 image (non-zero is 1); equals ``erosion`` of the 0/1 image made 0/1 "
        "again (a window that misses the image, which only a footprint without its origin allows, "
        "gives 1 here and the dtype's maximum there), and scipy.ndimage.binary_erosion with "
        "``border_value=1`` for mode 'ignore'. " + _BOOL_MASKS,
        None,
        """\
>>> granula.binary_erosion(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [0, 0, 1, 0, 0, 0],
       [0, 0, 1, 0, 0, 0],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "binary_dilation": (
        "Dilation of the 0/1 image (non-zero is 1), by the reflected "
        "footprint; equals ``dilation`` of the 0/1 image and scipy.ndimage.binary_dilation. " + _BOOL_MASKS,
        None,
        """\
>>> granula.binary_dilation(image, "vline:3")
array([[0, 1, 1, 1, 0, 0],
       [0, 1, 1, 1, 0, 1],
       [0, 1, 1, 1, 0, 1],
       [0, 1, 1, 1, 0, 1]], dtype=uint8)""",
    ),
    "binary_opening": (
        "Opening of the 0/1 image (non-zero is 1); with mode 'constant' and "
        "cval 0 it equals scipy.ndimage.binary_opening (border_value 0). " + _BOOL_MASKS,
        None,
        """\
>>> granula.binary_opening(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
    "binary_closing": (
        "Closing of the 0/1 image (non-zero is 1); with mode 'constant' and "
        "cval 0 it equals scipy.ndimage.binary_closing (border_value 0). " + _BOOL_MASKS,
        None,
        """\
>>> granula.binary_closing(image, "hline:3")
array([[0, 0, 0, 0, 0, 0],
       [1, 1, 1, 1, 0, 0],
       [1, 1, 1, 1, 1, 1],
       [0, 0, 0, 0, 0, 0]], dtype=uint8)""",
    ),
}

_DOC = """\
{summary}.
{definition}
Parameters
----------
image : (M, N) array of {dtypes}
    A numpy array, processed on the CPU, or a CUDA array (CuPy, or any object with
    ``__cuda_array_interface__`` or ``__dlpack__``), processed on its GPU without leaving it.
    Any row stride that is a multiple of the itemsize is taken as it is; columns must be
    contiguous. Nothing is copied or converted: other dtypes and layouts raise ValueError.
footprint : Footprint, str or array of bool, optional
    The structuring element: a :class:`granula.footprints.Footprint`, a 2-D mask with every
    element set, or the text form: {footprint_help}. Default ``'{footprint_default}'``.
mode : str, optional
    How pixels outside the image are treated; one of {mode_help}.
    ``'ignore'`` lets them take no part; the others pad as scipy.ndimage's modes of the same
    names. Default ``'{mode_default}'``.
cval : float, optional
    The {cval_help}, representable in the image's dtype. Default {cval_default}.
{convention_doc}out : array, optional
    Where to write the result: the image's shape and dtype, in the same kind of memory
    (host or CUDA), writable, laid out as ``image`` may be. It may be ``image`` itself.

Returns
-------
out : array
    The result, of the image's shape and dtype: a new array of the image's kind (numpy,
    CuPy, PyTorch) unless ``out`` was given.

Raises
------
TypeError
    If ``image`` is not an array, or ``footprint`` is of an unknown type.
ValueError
    If the dtype, number of dimensions or strides are not supported, the image is empty, the
    footprint, mode or cval is bad, or ``out`` does not match the image.
RuntimeError
    If a CUDA array is given but this build has no CUDA backend or no GPU is present, or a
    CUDA call fails.
{see_also}
Notes
-----
On the CPU the GIL is released and the work spread over :func:`granula.num_threads` threads.
CUDA arrays are processed on the current stream of their framework: CuPy's
``cupy.cuda.get_current_stream()``, PyTorch's ``torch.cuda.current_stream()``, and the legacy
default stream for others; the call returns without waiting for the GPU. The array must be on
the current CUDA device.

For unsigned dtypes differences saturate at 0. For float32 a NaN anywhere under the footprint
makes the result NaN (numpy's ``minimum``/``maximum`` rule), on the CPU and the GPU alike.
{examples}"""

_CONVENTION_DOC = """\
convention : {{'granula', 'opencv', 'scipy', 'matlab'}}, optional
    Whose results to reproduce, pixel for pixel, with ``footprint``'s mask. Default
    ``'{default}'``: granula's own (erosion ``min image(x + b)``, dilation
    ``max image(x - b)``, origin ``n // 2``).

    - ``'opencv'``: cv2.erode, cv2.dilate and cv2.morphologyEx with the mask as the kernel
      and the footprint's origin as the anchor (the default anchor for the built-in
      footprints). cv2.dilate does not reflect the kernel: dilations here use
      ``footprint.reflected()``, and opening, closing, the top-hats and the gradient
      compose OpenCV's erosion and dilation as it does. Default mode 'ignore'
      (BORDER_CONSTANT with morphologyDefaultBorderValue(); where a window misses the
      image, which only a footprint without its origin allows, OpenCV's float32 result is
      -+FLT_MAX and granula's -+inf).
    - ``'scipy'``: scipy.ndimage's grey_erosion, grey_dilation, grey_opening,
      grey_closing, white_tophat, black_tophat and morphological_gradient with
      ``footprint=mask``: granula's operations, with scipy's default mode 'reflect'.
      scipy's ``origin=(a, b)`` is ``footprint.with_origin(rows // 2 + a, cols // 2 + b)``.
      scipy's top-hats wrap around for unsigned dtypes where the opening exceeds the image
      (or the closing falls below it), which borders other than 'ignore' allow; granula
      gives 0 there.
    - ``'matlab'``: imerode, imdilate, imopen, imclose, imtophat and imbothat with
      ``strel('arbitrary', mask)``: the origin is at ``((rows - 1) // 2, (cols - 1) // 2)``,
      MATLAB's ``floor((size + 1) / 2)``, one pixel up or left of granula's along even
      sizes. Default mode 'ignore' (MATLAB's padding).

    ValueError for any other name.
"""

_SEE_ALSO = """
See Also
--------
scipy.ndimage.{scipy_name} : the same result with ``size=footprint.shape`` (origin
    ``n // 2`` in both) and the same mode; for rectangles and lines granula's 'ignore' equals
    scipy's 'nearest'.
"""

_EXAMPLES = """
Examples
--------
{example_image}
{example}
"""


def _framework(array):
    return type(array).__module__.partition(".")[0]


def _new_output(image, shape, dtype, on_device):
    """A new array for the result of ``image``: numpy, CuPy or PyTorch, like ``image``."""
    framework = _framework(image)
    if isinstance(image, np.ndarray):
        return np.empty(shape, dtype)
    if framework == "cupy":
        cupy = sys.modules["cupy"]
        return cupy.empty(shape, dtype)
    if framework == "torch":
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=image.dtype, device=image.device)
    kind = "CUDA" if on_device else "host"
    raise ValueError(
        f"granula makes new results as numpy, CuPy or PyTorch arrays only; for this {kind} array "
        f"of type {type(image).__module__}.{type(image).__qualname__}, pass out= (an array of "
        f"shape {shape} and dtype {dtype} in the same memory)"
    )


def _cuda_stream(image):
    """The cudaStream_t (as an int) that work on the CUDA array ``image`` is queued on."""
    framework = _framework(image)
    if framework == "cupy":
        cupy = sys.modules["cupy"]
        current = cupy.cuda.runtime.getDevice()
        if image.device.id != current:
            raise ValueError(
                f"image is on CUDA device {image.device.id} but the current device is {current}; "
                f"run granula inside `with cupy.cuda.Device({image.device.id}):`"
            )
        return cupy.cuda.get_current_stream().ptr
    if framework == "torch":
        torch = sys.modules["torch"]
        current = torch.cuda.current_device()
        if image.device.index != current:
            raise ValueError(
                f"image is on CUDA device {image.device.index} but the current device is {current}; "
                f"run granula inside `with torch.cuda.device({image.device.index}):`"
            )
        return torch.cuda.current_stream().cuda_stream
    return 0


def _run(name, image, footprint, mode, cval, convention, out, default_footprint):
    footprint = as_footprint(footprint, default_footprint)
    if name.startswith("binary_") and getattr(image, "dtype", None) == np.bool_:
        # A bool mask (numpy or CuPy) runs as its uint8 bytes, 0 and 1, and gives a bool mask, as
        # scipy.ndimage's binary functions do; no copy either way.
        if out is None:
            out = _new_output(image, image.shape, np.bool_, False)
        target = out.view(np.uint8) if getattr(out, "dtype", None) == np.bool_ else out
        _run(name, image.view(np.uint8), footprint, mode, cval, convention, target, default_footprint)
        return out
    rows, cols, dtype, on_device = _core.describe_image(image)
    if out is None:
        out = _new_output(image, (rows, cols), dtype, on_device)
    stream = _cuda_stream(image) if on_device else 0
    _core.run(name, image, out, footprint, mode, cval, convention, stream)
    return out


def _docstring(name, summary, defaults, helps):
    definition, scipy_name, example = _DETAILS.get(name, ("", None, None))
    return _DOC.format(
        summary=summary[0].upper() + summary[1:],
        definition=f"\n{textwrap.fill(definition, 92)}\n" if definition else "",
        dtypes=", ".join(_core.pixel_types()),
        footprint_help=_core.footprint_syntax(),
        footprint_default=defaults["footprint"],
        mode_help=helps["mode"].partition(": ")[2],
        mode_default=defaults["mode"],
        cval_help=helps["cval"],
        cval_default=float(defaults["cval"]),
        convention_doc=_CONVENTION_DOC.format(default=defaults["convention"]) if "convention" in defaults else "",
        see_also=_SEE_ALSO.format(scipy_name=scipy_name) if scipy_name else "",
        examples=_EXAMPLES.format(example_image=_EXAMPLE_IMAGE, example=example) if example else "",
    )


def _make_operation(name, summary, parameters):
    defaults = {param: default for param, default, _ in parameters}
    helps = {param: help_text for param, _, help_text in parameters}
    default_footprint = parse(defaults["footprint"])

    mode_default, cval_default = defaults["mode"], float(defaults["cval"])
    if "convention" in defaults:

        def operation(
            image, footprint=None, *, mode=mode_default, cval=cval_default, convention=defaults["convention"], out=None
        ):
            return _run(name, image, footprint, mode, cval, convention, out, default_footprint)

    else:

        def operation(image, footprint=None, *, mode=mode_default, cval=cval_default, out=None):
            return _run(name, image, footprint, mode, cval, "granula", out, default_footprint)

    operation.__name__ = operation.__qualname__ = name
    operation.__doc__ = _docstring(name, summary, defaults, helps)
    return operation


def generate(namespace):
    """Defines a function in ``namespace`` for each registered operation; returns their names."""
    names = []
    for name, summary, parameters in _core.operations():
        if {param for param, _, _ in parameters} - set(_OPTIONAL_PARAMETERS) != set(_PARAMETERS):
            continue
        operation = _make_operation(name, summary, parameters)
        operation.__module__ = namespace["__name__"]
        namespace[name] = operation
        names.append(name)
    return names
