#!/usr/bin/env python3
"""Draws the example app's images as real, opaque RGB PNGs at the sizes Apple requires.

FULL_SIZE images are 3840 px wide and 160-2160 px high; BULLET_POINT images are 1024 x 1024 px.
Only the standard library is used (zlib for compression), and the shapes are flat so the files stay small.

    python3 manifests/images/make-images.py [OUTPUT_DIR]
    python3 manifests/images/make-images.py --fixtures DIR   # tiny images for fixtures/manifests
"""
import math
import os
import struct
import sys
import zlib


def png(width, height, row, channels=3, extra_chunks=()):
    """Encodes an 8-bit RGB (or RGBA) PNG; row(y) returns the bytes of one row."""
    raw = bytearray()
    previous = None
    for y in range(height):
        line = row(y)
        if previous == line:
            raw += b"\x02" + bytes(len(line))  # filter Up: an unchanged row is all zeros
        else:
            raw += b"\x00" + line
        previous = line

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 6 if channels == 4 else 2, 0, 0, 0)
    extras = b"".join(chunk(kind, data) for kind, data in extra_chunks)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extras
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


def mix(a, b, t):
    return tuple(round(a[i] + (b[i] - a[i]) * t) for i in range(3))


def hero(width=3840, height=1440):
    """A sunrise over layered hills: a vertical sky gradient, a sun disc and two hill lines."""
    sky_top, sky_bottom = (38, 52, 92), (246, 190, 150)
    sun = (255, 236, 200)
    far_hill, near_hill = (92, 104, 140), (52, 66, 98)
    cx, cy, radius = width * 0.62, height * 0.58, height * 0.16
    far = [height * 0.66 + math.sin(x / 520.0) * 60 + math.sin(x / 170.0) * 12 for x in range(width)]
    near = [height * 0.78 + math.sin(x / 700.0 + 1.7) * 80 for x in range(width)]

    def row(y):
        sky = mix(sky_top, sky_bottom, y / height)
        line = bytearray(bytes(sky) * width)
        dy = y - cy
        if abs(dy) < radius:
            half = math.sqrt(radius * radius - dy * dy)
            start, end = int(cx - half), int(cx + half)
            line[start * 3:end * 3] = bytes(sun) * (end - start)
        for x in range(width):
            if y >= near[x]:
                line[x * 3:x * 3 + 3] = bytes(near_hill)
            elif y >= far[x]:
                line[x * 3:x * 3 + 3] = bytes(far_hill)
        return bytes(line)

    return png(width, height, row)


def bullet(draw, background=(244, 241, 236), side=1024):
    """A flat icon on a warm light background; draw(x, y) returns a colour or None."""
    def row(y):
        line = bytearray(bytes(background) * side)
        for x in range(side):
            colour = draw(x - side / 2, y - side / 2)
            if colour is not None:
                line[x * 3:x * 3 + 3] = bytes(colour)
        return bytes(line)

    return png(side, side, row)


def breathe(x, y):
    """Three concentric rings: a breath in and out."""
    r = math.hypot(x, y)
    for ring, colour in ((150, (96, 140, 180)), (270, (132, 170, 204)), (390, (176, 202, 226))):
        if abs(r - ring) < 34:
            return colour
    return (72, 112, 156) if r < 70 else None


def moon(x, y):
    """A crescent moon with a small star."""
    if math.hypot(x, y) < 330 and math.hypot(x - 150, y - 110) > 300:
        return (70, 84, 140)
    if abs(x - 330) + abs(y + 320) < 46:
        return (232, 186, 96)
    return None


def streak(x, y):
    """Five rising bars: a streak of days kept."""
    for index in range(5):
        left = -380 + index * 160
        top = 260 - (index + 1) * 110
        if left <= x < left + 110 and top <= y < 290:
            return (214, 132, 84) if index == 4 else (226, 170, 132)
    return None


def flat(width, height, colour, channels=3, extra_chunks=()):
    """A single-colour picture: the smallest real PNG of a given size."""
    line = bytes(colour) * width
    return png(width, height, lambda y: line, channels, extra_chunks)


def fixtures():
    """Tiny images for the invalid-manifest corpus: the valid sizes and one broken variant each."""
    return {
        "full.png": flat(3840, 160, (40, 60, 90)),
        "full-other.png": flat(3840, 160, (90, 60, 40)),
        "bullet.png": flat(1024, 1024, (200, 120, 80)),
        "narrow.png": flat(3839, 160, (40, 60, 90)),
        "alpha.png": flat(3840, 160, (40, 60, 90, 255), channels=4),
        "transparent.png": flat(3840, 160, (40, 60, 90), extra_chunks=[(b"tRNS", bytes(6))]),
    }


def main():
    arguments = sys.argv[1:]
    if arguments[:1] == ["--fixtures"]:
        images = fixtures()
        arguments = arguments[1:]
    else:
        images = {
            "hero.png": hero(),
            "bullet-breathe.png": bullet(breathe),
            "bullet-moon.png": bullet(moon),
            "bullet-streak.png": bullet(streak),
        }
    directory = arguments[0] if arguments else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(directory, exist_ok=True)
    for name, data in images.items():
        with open(os.path.join(directory, name), "wb") as file:
            file.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
