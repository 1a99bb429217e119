"""granula: fast grey-scale morphology on CPUs and NVIDIA GPUs.

The operations take numpy arrays (computed on the CPU) or CUDA arrays such as CuPy's (computed
on the GPU, on the current stream) and return the same kind of array, without copying or
converting the input. Names and keywords follow scikit-image: ``erosion``, ``dilation``,
``opening``, ``closing``, ``white_tophat``, ``black_tophat``, ``gradient``, each
``f(image, footprint=None, *, mode='default', cval=0.0, convention='granula', out=None)``
(``convention='opencv'``, ``'scipy'`` or ``'matlab'`` reproduces that library's results);
structuring elements are in :mod:`granula.footprints`.

Examples
--------
>>> import numpy as np
>>> import granula
>>> page = np.full((5, 7), 200, dtype=np.uint8)
>>> page[2, 1:6] = 20                                 # a dark horizontal stroke
>>> granula.black_tophat(page, granula.footprints.vline(3))[2]
array([  0, 180, 180, 180, 180, 180,   0], dtype=uint8)
"""

from . import _core, binary, footprints
from ._core import __version__
from ._operations import generate as _generate
from .gaussian import gaussian
from .labeling import label
from .lines import (
    angular_spectrum,
    deskew,
    granulometry,
    line_closing,
    line_dilation,
    line_erosion,
    line_opening,
    orientation,
    rotate,
)

__all__ = [
    "footprints",
    "set_num_threads",
    "num_threads",
    "set_simd_enabled",
    "simd_enabled",
    "build_info",
    "cuda_available",
    "gaussian",
    "label",
    "line_opening",
    "line_closing",
    "line_dilation",
    "line_erosion",
    "orientation",
    "angular_spectrum",
    "granulometry",
    "deskew",
    "rotate",
]
__all__ += _generate(globals())


def set_num_threads(threads):
    """Set how many threads the CPU operations use.

    Parameters
    ----------
    threads : int
        Number of threads, at most 1024; 0 restores the default (the
        environment variable ``GRANULA_NUM_THREADS`` when set, else all
        hardware threads).

    Raises
    ------
    ValueError
        If ``threads`` is negative or over 1024.

    See Also
    --------
    num_threads, cv2.setNumThreads

    Examples
    --------
    >>> import granula
    >>> granula.set_num_threads(1)
    >>> granula.num_threads()
    1
    >>> granula.set_num_threads(0)
    """
    _core.set_num_threads(threads)


def num_threads():
    """Number of threads the CPU operations use.

    Returns
    -------
    int

    Examples
    --------
    >>> import granula
    >>> granula.num_threads() >= 1
    True
    """
    return _core.num_threads()


def set_simd_enabled(enabled):
    """Turn the vectorised CPU kernels on or off.

    With SIMD off the CPU runs plain scalar code, which gives the same results more slowly;
    tests compare the two. The environment variable ``GRANULA_DISABLE_SIMD=1`` sets the
    initial state to off.

    Parameters
    ----------
    enabled : bool

    Examples
    --------
    >>> import granula
    >>> granula.set_simd_enabled(False)
    >>> granula.simd_enabled()
    False
    >>> granula.set_simd_enabled(True)
    """
    _core.set_simd_enabled(enabled)


def simd_enabled():
    """Whether the vectorised CPU kernels are on.

    Returns
    -------
    bool
    """
    return _core.simd_enabled()


def build_info():
    """One line describing this build: version, CUDA backend, threads, SIMD instruction set.

    Returns
    -------
    str

    Examples
    --------
    >>> import granula
    >>> granula.build_info().startswith("granula " + granula.__version__)
    True
    """
    return _core.build_info()


def cuda_available():
    """Whether CUDA arrays can be processed: this build has the CUDA backend and a GPU is present.

    Returns
    -------
    bool

    Examples
    --------
    >>> import granula
    >>> granula.cuda_available() in (True, False)
    True
    """
    return _core.cuda_available()
