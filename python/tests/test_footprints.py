"""granula.footprints: construction, the exact mask and origin, decomposition, equality."""

import numpy as np
import pytest

import granula
from granula import footprints


# Footprints are made inside the tests: pytest keeps parameters alive until the interpreter
# exits, past nanobind's leak check, which would then report them.
@pytest.mark.parametrize(
    "make, shape, origin",
    [
        (lambda: footprints.hline(1), (1, 1), (0, 0)),
        (lambda: footprints.hline(6), (1, 6), (0, 3)),
        (lambda: footprints.vline(7), (7, 1), (3, 0)),
        (lambda: footprints.rectangle(4, 9), (4, 9), (2, 4)),
        (lambda: footprints.square(2), (2, 2), (1, 1)),
        (lambda: footprints.parse("rect:15x3"), (3, 15), (1, 7)),
    ],
)
def test_mask_and_origin(make, shape, origin):
    footprint = make()
    mask, got_origin = footprint.footprint()
    assert mask.dtype == np.bool_ and mask.shape == shape and mask.all()
    assert got_origin == origin and footprint.shape == shape


def test_rectangle_takes_rows_then_columns():
    fp = footprints.rectangle(3, 15)
    assert fp.shape == (3, 15) and fp.spec == "rect:15x3" and str(fp) == "rect:15x3"
    assert fp == footprints.parse("rect:15x3") and fp != footprints.rectangle(15, 3)
    assert repr(fp) == "Footprint('rect:15x3')"
    assert hash(fp) == hash(footprints.parse("rect:15x3"))


@pytest.mark.parametrize(
    "spec, expected",
    [("hline:9", "hline:9"), ("vline:2", "vline:2"), ("square:4", "rect:4x4"), ("rect:1x5", "vline:5")],
)
def test_text_form_round_trip(spec, expected):
    assert footprints.parse(spec).spec == expected


def test_decomposition():
    (term,) = footprints.rectangle(4, 5).decomposition()
    assert term.offset == (0, 0)
    assert [(p.length, p.dx, p.dy, p.origin) for p in term.segments] == [(5, 1, 0, 2), (4, 0, 1, 2)]
    assert footprints.hline(1).decomposition()[0].segments == []
    assert repr(footprints.vline(3).decomposition()[0].segments[0]) == "LineSegment(length=3, dx=0, dy=1, origin=1)"


def test_decomposition_union_is_the_footprint():
    for fp in (footprints.line(40, 33.0), footprints.disk(5), footprints.octagon(3, 2), footprints.parse("line:9:100")):
        mask, (oy, ox) = fp.footprint()
        drawn = np.zeros_like(mask)
        for term in fp.decomposition():
            points = [(term.offset[0], term.offset[1])]
            for s in term.segments:
                points = [(y + (k - s.origin) * s.dy, x + (k - s.origin) * s.dx) for y, x in points for k in range(s.length)]
            for y, x in points:
                drawn[y + oy, x + ox] = True
        np.testing.assert_array_equal(drawn, mask)


def test_every_way_to_name_a_footprint_gives_the_same_result(rng):
    image = rng.integers(0, 256, (30, 40), dtype=np.uint8)
    expected = granula.erosion(image, footprints.rectangle(3, 7))
    for same in ("rect:7x3", np.ones((3, 7), dtype=bool), np.ones((3, 7), dtype=np.uint8), footprints.parse("rect:7x3")):
        np.testing.assert_array_equal(granula.erosion(image, same), expected)
