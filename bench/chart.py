"""A bar chart of tide's time ratios, written as a PNG with the standard library only
(zlib + struct, a built-in 5x7 pixel font), so the benchmark needs no plotting package.

Each row is a horizontal bar on a log scale centred on 1.0: to the left (green) where tide
takes less time than the best peer, to the right (red) where it takes more."""
import math
import struct
import zlib

# 5x7 glyphs: 7 rows of 5 pixels, '#' = ink (letters are drawn in lower case).
_FONT = {
    "a": ".....|.....|.###.|....#|.####|#...#|.####", "b": "#....|#....|#.##.|##..#|#...#|#...#|####.",
    "c": ".....|.....|.###.|#....|#....|#...#|.###.", "d": "....#|....#|.##.#|#..##|#...#|#...#|.####",
    "e": ".....|.....|.###.|#...#|#####|#....|.###.", "f": "..##.|.#..#|.#...|###..|.#...|.#...|.#...",
    "g": ".....|.####|#...#|#...#|.####|....#|.###.", "h": "#....|#....|#.##.|##..#|#...#|#...#|#...#",
    "i": "..#..|.....|.##..|..#..|..#..|..#..|.###.", "j": "...#.|.....|..##.|...#.|...#.|#..#.|.##..",
    "k": "#....|#....|#..#.|#.#..|##...|#.#..|#..#.", "l": ".##..|..#..|..#..|..#..|..#..|..#..|.###.",
    "m": ".....|.....|##.#.|#.#.#|#.#.#|#...#|#...#", "n": ".....|.....|#.##.|##..#|#...#|#...#|#...#",
    "o": ".....|.....|.###.|#...#|#...#|#...#|.###.", "p": ".....|.....|####.|#...#|####.|#....|#....",
    "q": ".....|.....|.##.#|#..##|.####|....#|....#", "r": ".....|.....|#.##.|##..#|#....|#....|#....",
    "s": ".....|.....|.###.|#....|.###.|....#|####.", "t": ".#...|.#...|###..|.#...|.#...|.#..#|..##.",
    "u": ".....|.....|#...#|#...#|#...#|#..##|.##.#", "v": ".....|.....|#...#|#...#|#...#|.#.#.|..#..",
    "w": ".....|.....|#...#|#...#|#.#.#|#.#.#|.#.#.", "x": ".....|.....|#...#|.#.#.|..#..|.#.#.|#...#",
    "y": ".....|.....|#...#|#...#|.####|....#|.###.", "z": ".....|.....|#####|...#.|..#..|.#...|#####",
    "0": ".###.|#...#|#..##|#.#.#|##..#|#...#|.###.", "1": "..#..|.##..|..#..|..#..|..#..|..#..|.###.",
    "2": ".###.|#...#|....#|...#.|..#..|.#...|#####", "3": "#####|...#.|..#..|...#.|....#|#...#|.###.",
    "4": "...#.|..##.|.#.#.|#..#.|#####|...#.|...#.", "5": "#####|#....|####.|....#|....#|#...#|.###.",
    "6": "..##.|.#...|#....|####.|#...#|#...#|.###.", "7": "#####|....#|...#.|..#..|.#...|.#...|.#...",
    "8": ".###.|#...#|#...#|.###.|#...#|#...#|.###.", "9": ".###.|#...#|#...#|.####|....#|...#.|.##..",
    "_": ".....|.....|.....|.....|.....|.....|#####", ".": ".....|.....|.....|.....|.....|.##..|.##..",
    "-": ".....|.....|.....|#####|.....|.....|.....", "/": ".....|....#|...#.|..#..|.#...|#....|.....",
    "(": "...#.|..#..|.#...|.#...|.#...|..#..|...#.", ")": ".#...|..#..|...#.|...#.|...#.|..#..|.#...",
    ":": ".....|.##..|.##..|.....|.##..|.##..|.....", ",": ".....|.....|.....|.....|.##..|..#..|.#...",
    "=": ".....|.....|#####|.....|#####|.....|.....", "<": "...#.|..#..|.#...|#....|.#...|..#..|...#.",
    ">": ".#...|..#..|...#.|....#|...#.|..#..|.#...", " ": ".....|.....|.....|.....|.....|.....|.....",
}


def _glyph(ch):
    """The 7 rows of a character as lists of booleans (unknown characters are blank)."""
    rows = _FONT.get(ch, _FONT[" "]).split("|")
    return [[c == "#" for c in row] for row in rows]


class Canvas:
    """An RGB image with rectangles and text, saved as a PNG."""

    def __init__(self, width, height, background=(255, 255, 255)):
        self.w, self.h = width, height
        self.px = [bytearray(bytes(background) * width) for _ in range(height)]

    def rect(self, x0, y0, x1, y1, color):
        x0, x1 = max(0, min(x0, x1)), min(self.w, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.h, max(y0, y1))
        for y in range(y0, y1):
            self.px[y][x0 * 3:x1 * 3] = bytes(color) * (x1 - x0)

    def text(self, x, y, s, color=(0, 0, 0), scale=2):
        """Draws s with its top-left corner at (x, y); returns the width drawn."""
        for i, ch in enumerate(s.lower()):
            for r, row in enumerate(_glyph(ch)):
                for c, ink in enumerate(row):
                    if ink:
                        gx = x + (i * 6 + c) * scale
                        self.rect(gx, y + r * scale, gx + scale, y + (r + 1) * scale, color)
        return len(s) * 6 * scale

    def save(self, path):
        raw = b"".join(b"\x00" + bytes(row) for row in self.px)

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0))
        png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
        with open(path, "wb") as f:
            f.write(png)


def ratio_chart(path, title, rows, lo=0.01, hi=10.0):
    """rows: (label, ratio) pairs; ratio None rows are listed without a bar."""
    scale, row_h, bar_w = 2, 22, 560
    label_w = max(len(label) for label, _ in rows) * 12 + 20
    width, top = label_w + bar_w + 90, 70
    c = Canvas(width, top + row_h * len(rows) + 40)
    c.text(10, 10, title, scale=scale)
    span = math.log10(hi) - math.log10(lo)
    x_of = lambda r: label_w + int((math.log10(min(max(r, lo), hi)) - math.log10(lo)) / span * bar_w)
    for tick in (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10):
        if lo <= tick <= hi:
            x = x_of(tick)
            c.rect(x, top - 8, x + 1, top + row_h * len(rows), (210, 210, 210) if tick != 1 else (0, 0, 0))
            c.text(x - 8, top - 26, "%g" % tick, (90, 90, 90), scale=1)
    for i, (label, ratio) in enumerate(rows):
        y = top + i * row_h
        c.text(10, y + 4, label, scale=scale)
        if ratio is None:
            c.text(label_w + 10, y + 4, "-", (120, 120, 120), scale=scale)
            continue
        one, x = x_of(1), x_of(ratio)
        c.rect(min(one, x), y + 3, max(one, x) + 1, y + row_h - 3, (60, 160, 80) if ratio <= 1 else (200, 70, 60))
        c.text(max(one, x) + 6, y + 4, "%.2f" % ratio, (60, 60, 60), scale=scale)
    c.text(10, top + row_h * len(rows) + 14, "left of 1: tide faster. right: tide slower (log scale)", (90, 90, 90), scale=scale)
    c.save(path)
