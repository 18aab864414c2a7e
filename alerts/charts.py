"""A small trend chart as PNG bytes, written with the standard library only (zlib + struct).

No text is drawn (that would need a font): the email around the picture carries the figures.
Bars are the points in order, the last one (today) in the alert colour; a grey line marks the
baseline. The scale starts at zero so a bar's height is comparable with the baseline's.
"""

from __future__ import annotations

import struct
import zlib

Colour = tuple[int, int, int]

BACKGROUND: Colour = (255, 255, 255)
BAR: Colour = (120, 150, 200)
LATEST: Colour = (214, 69, 65)
BASELINE: Colour = (90, 90, 90)
AXIS: Colour = (200, 200, 200)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def trend_png(
    points: list[tuple[str, float]],
    baseline: float | None,
    width: int = 480,
    height: int = 160,
) -> bytes:
    """A bar chart of ``points`` (label, value), with a dashed line at ``baseline`` when set."""
    if width < 8 or height < 8:
        raise ValueError(f"chart size {width}x{height} is too small (at least 8x8)")
    pixels = [bytearray(BACKGROUND * width) for _ in range(height)]
    margin = 4
    plot_h = height - 2 * margin
    top = max([v for _, v in points] + ([baseline] if baseline is not None else []) + [0.0])
    scale = plot_h / top if top > 0 else 0.0

    def y_of(value: float) -> int:  # pixel row of a value; row 0 is the top
        return height - margin - round(max(value, 0.0) * scale)

    if points:
        slot = (width - 2 * margin) / len(points)
        gap = max(1, round(slot * 0.2))
        for i, (_, value) in enumerate(points):
            x0 = margin + round(i * slot) + gap // 2
            x1 = max(x0 + 1, margin + round((i + 1) * slot) - (gap - gap // 2))
            colour = LATEST if i == len(points) - 1 else BAR
            _fill(pixels, x0, y_of(value), x1, height - margin, colour)
    _fill(pixels, margin, height - margin, width - margin, height - margin + 1, AXIS)
    if baseline is not None:
        y = min(y_of(baseline), height - margin - 1)
        for x in range(margin, width - margin, 8):  # dashed: 5 on, 3 off
            _fill(pixels, x, y, min(x + 5, width - margin), y + 2, BASELINE)
    return encode_png(pixels, width, height)


def _fill(pixels: list[bytearray], x0: int, y0: int, x1: int, y1: int, colour: Colour) -> None:
    """Paint the rectangle [x0, x1) x [y0, y1), clipped to the picture."""
    height, width = len(pixels), len(pixels[0]) // 3
    x0, x1 = max(0, x0), min(width, x1)
    run = bytes(colour) * max(0, x1 - x0)
    for y in range(max(0, y0), min(height, y1)):
        pixels[y][3 * x0 : 3 * x1] = run


def encode_png(rows: list[bytearray], width: int, height: int) -> bytes:
    """8-bit RGB, no interlace, filter type 0 (none) on every row."""
    raw = b"".join(b"\x00" + bytes(row) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)
