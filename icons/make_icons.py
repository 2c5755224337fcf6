#!/usr/bin/env python3
"""Draw swapsight's icons: a memory chip with an arrow climbing out of it.

Plain Python (zlib + struct, no imaging library), so anyone can re-run it:

    python3 icons/make_icons.py          # writes the PNGs beside this file

Shapes are signed distance functions; a pixel's coverage is taken from the
distance at its centre (one pixel of soft edge), which anti-aliases without
supersampling. Outputs (all RGBA, 8 bit):

- icon.png (512), 128x128.png, 32x32.png — the app icon, in colour, for
  the Linux bundles (hicolor 512, 128 and 32) and the window;
- icon.icns — the same icon for the macOS bundle, every size Finder and the
  Dock ask for: 16, 32, 128, 256 and 512 pt at 1x and 2x (16–1024 px), each
  entry a PNG (ICNS types icp4/icp5/ic07–ic14, as `iconutil` writes them);
- tray.png (18) and tray@2x.png (36) — the menu-bar template: black and
  alpha only, so macOS tints it for light and dark menu bars. macOS draws a
  status item's image 18 pt high (tray-icon sets the NSImage to 18 pt), so
  36 px is drawn pixel for pixel on a Retina menu bar instead of being
  scaled down from a larger picture;
- tray-alert.png / tray-alert@2x.png — the same chip with a filled badge,
  shown while a false fit or overflow is flagged (a template can't use
  colour, so the alert must differ in shape).
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------ shapes
def box(px, py, cx, cy, hx, hy, r):
    """Rounded box centred at (cx, cy), half sizes hx, hy, corner radius r."""
    qx = abs(px - cx) - hx + r
    qy = abs(py - cy) - hy + r
    out = math.hypot(max(qx, 0.0), max(qy, 0.0))
    return out + min(max(qx, qy), 0.0) - r


def circle(px, py, cx, cy, r):
    return math.hypot(px - cx, py - cy) - r


def capsule(px, py, ax, ay, bx, by, r):
    pax, pay = px - ax, py - ay
    bax, bay = bx - ax, by - ay
    h = max(0.0, min(1.0, (pax * bax + pay * bay) / (bax * bax + bay * bay)))
    return math.hypot(pax - bax * h, pay - bay * h) - r


def triangle(px, py, a, b, c):
    """Signed distance to a triangle (negative inside)."""
    pts = (a, b, c)
    d = float("inf")
    s = 1.0
    inside = True
    for i in range(3):
        (x0, y0), (x1, y1) = pts[i], pts[(i + 1) % 3]
        ex, ey = x1 - x0, y1 - y0
        wx, wy = px - x0, py - y0
        h = max(0.0, min(1.0, (wx * ex + wy * ey) / (ex * ex + ey * ey)))
        d = min(d, math.hypot(wx - ex * h, wy - ey * h))
        cross = ex * wy - ey * wx
        if i == 0:
            s = 1.0 if cross > 0 else -1.0
        elif (cross > 0) != (s > 0):
            inside = False
    return -d if inside else d


def ring(d, width):
    return abs(d) - width / 2


# ------------------------------------------------------------- the drawing
PIN_YS = (0.36, 0.5, 0.64)


def chip_outline(x, y):
    body = box(x, y, 0.5, 0.5, 0.27, 0.30, 0.07)
    d = ring(body, 0.075)
    for py in PIN_YS:
        d = min(d, capsule(x, y, 0.07, py, 0.2, py, 0.032))
        d = min(d, capsule(x, y, 0.8, py, 0.93, py, 0.032))
    return d


def arrow(x, y):
    shaft = capsule(x, y, 0.5, 0.66, 0.5, 0.44, 0.045)
    head = triangle(x, y, (0.5, 0.27), (0.635, 0.45), (0.365, 0.45)) - 0.012
    return min(shaft, head)


def tray_shape(alert):
    def f(x, y):
        d = min(chip_outline(x, y), arrow(x, y))
        if alert:
            # Badge at the top right, with a gap cut around it.
            d = max(d, -circle(x, y, 0.83, 0.17, 0.215))
            d = min(d, circle(x, y, 0.83, 0.17, 0.16))
        return d

    return f


def mix(a, b, t):
    return tuple(a[i] + (b[i] - a[i]) * t for i in range(len(a)))


def hexc(s):
    return tuple(int(s[i:i + 2], 16) / 255 for i in (1, 3, 5))


BG_TOP, BG_BOTTOM = hexc("#334155"), hexc("#0f172a")
CHIP, CHIP_EDGE, PIN = hexc("#1e293b"), hexc("#94a3b8"), hexc("#cbd5e1")
ARROW_TOP, ARROW_BOTTOM = hexc("#fb923c"), hexc("#f43f5e")
SWAP = hexc("#38bdf8")


def app_layers():
    """(sdf, colour(x, y)) layers, bottom first."""
    s = 0.80  # the artwork fills 80 % of the canvas, macOS-style margins

    def t(f):
        return lambda x, y: f((x - 0.5) / s + 0.5, (y - 0.5) / s + 0.5) * s

    bg = t(lambda x, y: box(x, y, 0.5, 0.5, 0.5, 0.5, 0.225))
    pins = t(lambda x, y: min(
        min(capsule(x, y, 0.08, py, 0.25, py, 0.03) for py in PIN_YS),
        min(capsule(x, y, 0.75, py, 0.92, py, 0.03) for py in PIN_YS)))
    body = t(lambda x, y: box(x, y, 0.5, 0.5, 0.27, 0.30, 0.06))
    edge = t(lambda x, y: ring(box(x, y, 0.5, 0.5, 0.27, 0.30, 0.06), 0.03))
    swap = t(lambda x, y: max(box(x, y, 0.5, 0.5, 0.255, 0.285, 0.045),
                              -(y - (0.70 + 0.025 * math.sin((x - 0.2) * 24)))))
    arr = t(arrow)
    return [
        (bg, lambda x, y: mix(BG_TOP, BG_BOTTOM, y)),
        (pins, lambda x, y: PIN),
        (body, lambda x, y: CHIP),
        (swap, lambda x, y: SWAP),
        (edge, lambda x, y: CHIP_EDGE),
        (arr, lambda x, y: mix(ARROW_TOP, ARROW_BOTTOM, (y - 0.25) * 2.2)),
    ]


# -------------------------------------------------------------- rendering
def coverage(d, size):
    return max(0.0, min(1.0, 0.5 - d * size))


def render(size, layers):
    rows = []
    for j in range(size):
        row = bytearray([0])  # PNG filter byte: none
        y = (j + 0.5) / size
        for i in range(size):
            x = (i + 0.5) / size
            r = g = b = a = 0.0
            for sdf, colour in layers:
                c = coverage(sdf(x, y), size)
                if c <= 0:
                    continue
                cr, cg, cb = colour(x, y)[:3]
                # "over", premultiplied
                r = cr * c + r * (1 - c)
                g = cg * c + g * (1 - c)
                b = cb * c + b * (1 - c)
                a = c + a * (1 - c)
            if a > 0:
                r, g, b = r / a, g / a, b / a
            row += bytes(round(v * 255) for v in (r, g, b, a))
        rows.append(bytes(row))
    return rows


def png_bytes(size, rows):
    def chunk(kind, data):
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(rows)
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    return png


def write_png(path, size, png):
    with open(path, "wb") as f:
        f.write(png)
    print(f"wrote {os.path.relpath(path)} ({size}x{size})")


# ICNS element types holding PNG data, by pixel size (Apple's
# IconFamily.h; `iconutil` writes the same set for an .iconset of
# 16–512 pt at 1x and 2x). A size used twice (32 = 16@2x = 32@1x) is one
# picture stored under both types.
ICNS_TYPES = [
    (b"icp4", 16), (b"icp5", 32), (b"ic11", 32), (b"ic12", 64),
    (b"ic07", 128), (b"ic13", 256), (b"ic08", 256), (b"ic14", 512),
    (b"ic09", 512), (b"ic10", 1024),
]


def icns_bytes(pngs):
    """An ICNS file: 'icns', total length, then (type, length, PNG) each,
    lengths big-endian and counting their own 8-byte header."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size]
        for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main():
    black = lambda x, y: (0.0, 0.0, 0.0)  # noqa: E731
    app = {}
    for size in sorted({size for _, size in ICNS_TYPES} | {512}):
        app[size] = png_bytes(size, render(size, app_layers()))
    for name, size in [
        ("icon.png", 512),
        ("128x128.png", 128),
        ("32x32.png", 32),
    ]:
        write_png(os.path.join(HERE, name), size, app[size])
    icns = icns_bytes(app)
    with open(os.path.join(HERE, "icon.icns"), "wb") as f:
        f.write(icns)
    print(f"wrote icons/icon.icns ({len(ICNS_TYPES)} entries, 16-1024 px)")
    for name, size, alert in [
        ("tray.png", 18, False),
        ("tray@2x.png", 36, False),
        ("tray-alert.png", 18, True),
        ("tray-alert@2x.png", 36, True),
    ]:
        rows = render(size, [(tray_shape(alert), black)])
        write_png(os.path.join(HERE, name), size, png_bytes(size, rows))


if __name__ == "__main__":
    main()
