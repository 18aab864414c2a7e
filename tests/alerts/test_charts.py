from __future__ import annotations

import struct
import zlib

import pytest

from alerts.charts import BACKGROUND, BAR, BASELINE, LATEST, PNG_SIGNATURE, trend_png


def decode(png: bytes) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """A strict little PNG reader for 8-bit RGB, filter 0: checks every chunk's CRC."""
    assert png.startswith(PNG_SIGNATURE)
    pos, chunks = len(PNG_SIGNATURE), []
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + data)
        chunks.append((kind, data))
        pos += 12 + length
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour_type, *_ = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour_type) == (8, 2)
    raw = zlib.decompress(chunks[1][1])
    stride = 1 + 3 * width
    assert len(raw) == stride * height
    rows = []
    for y in range(height):
        row = raw[y * stride : (y + 1) * stride]
        assert row[0] == 0
        rows.append([tuple(row[1 + 3 * x : 4 + 3 * x]) for x in range(width)])
    return width, height, rows  # type: ignore[return-value]


def test_bars_scale_from_zero_and_the_baseline_is_drawn() -> None:
    png = trend_png([("d1", 1.0), ("d2", 2.0), ("today", 4.0)], baseline=2.0, width=120, height=60)
    width, height, rows = decode(png)
    assert (width, height) == (120, 60)
    colours = {c for row in rows for c in row}
    assert {BACKGROUND, BAR, LATEST, BASELINE} <= colours
    # today's bar (the highest value) reaches the top margin; the first bar is a quarter of it
    column_today = [rows[y][100] for y in range(height)]
    assert column_today[4] == LATEST and column_today[3] == BACKGROUND
    first_bar = [y for y in range(height) if rows[y][20] == BAR]
    assert 12 <= len(first_bar) <= 14  # 1/4 of the 52-pixel plot
    # the baseline (half the top) sits in the middle of the plot
    assert BASELINE in rows[30] or BASELINE in rows[31]


def test_empty_and_all_zero_series_still_make_a_valid_picture() -> None:
    assert decode(trend_png([], baseline=None))[:2] == (480, 160)
    _, _, rows = decode(trend_png([("a", 0.0)], baseline=0.0, width=40, height=20))
    assert any(BASELINE in row for row in rows)


def test_too_small_a_picture_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        trend_png([("a", 1.0)], None, width=4, height=4)
