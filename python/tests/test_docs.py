"""The examples in the docstrings run and give what they show."""

import doctest

import pytest

import granula
from granula import footprints


def _doctests():
    finder = doctest.DocTestFinder()
    tests = finder.find(granula) + finder.find(footprints)
    # Generated operations and the compiled Footprint class live outside their module's globals.
    for name in granula.__all__:
        obj = getattr(granula, name)
        if callable(obj) and obj.__module__ == "granula":
            tests += finder.find(obj, f"granula.{name}", module=False, globs={})
    tests += finder.find(footprints.Footprint, "granula.footprints.Footprint", module=False, globs={})
    unique = {test.name: test for test in tests if test.examples}
    return [unique[name] for name in sorted(unique)]


DOCTESTS = _doctests()


def test_every_public_function_has_an_example():
    documented = {test.name.rpartition(".")[2] for test in DOCTESTS}
    public = [n for n in granula.__all__ if n not in ("footprints", "simd_enabled")] + footprints.__all__
    assert not [name for name in public if name not in documented and name != "LineSegment"]


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda t: t.name)
def test_docstring_examples(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of {test.name} failed (output above)"
