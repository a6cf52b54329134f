"""A wireframe screenshot: boxes and texts of the laid-out nodes, drawn with Pillow.

Good enough for a person (or a vision model) to recognise the screen; not a pixel-faithful phone.

    png = render_png([(screen_root, False), (dialog_root, True)], (1080, 2400), status_text="10:08")

Drawing and PNG-encoding a 1080x2400 frame costs about 50 ms, and a test run asks for the same
screens again and again (every script of an app starts on its launch screen; ``tapir test --html``
takes a screenshot after each step). The picture is a pure function of what is drawn (the nodes'
bounds, texts, styles and flags, in drawing order), so frames are kept by that, process-wide
(every simulator of a run shares them), the most recently used ``CACHE_SIZE`` of them.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

from tapir.sim.toolkit.tree import Node

INK = (33, 33, 33)
MUTED = (117, 117, 117)
LINE = (189, 189, 189)
ACCENT = (25, 118, 210)
BAR = (224, 224, 224)

FONT_PX = {"display": 150, "headline": 76, "title": 50, "caption": 34}


@lru_cache(maxsize=16)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    # DejaVu (most Linux systems) covers accented names; Pillow's own font is the fallback.
    try:
        return ImageFont.truetype("DejaVuSansCondensed.ttf", size)
    except OSError:
        pass
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font still works
        return ImageFont.load_default()


def _fit(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.FreeTypeFont | ImageFont.ImageFont,
         width: int) -> str:
    text = text.replace("\n", " ")
    if width <= 0:
        return ""
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…" if text else ""


def _draw(draw: ImageDraw.ImageDraw, node: Node) -> None:
    b = node.bounds
    box = (b.left, b.top, max(b.left, b.right - 1), max(b.top, b.bottom - 1))
    style = node.style
    if style == "statusbar" or style == "navbar":
        draw.rectangle(box, fill=BAR)
        if style == "navbar":
            cx, cy = b.center
            draw.rounded_rectangle((cx - 120, cy - 6, cx + 120, cy + 6), radius=6, fill=MUTED)
    elif style in ("dialog", "menu"):
        draw.rectangle(box, fill=(255, 255, 255), outline=INK, width=3)
    elif style == "button":
        draw.rounded_rectangle(box, radius=20, outline=ACCENT if node.enabled else LINE, width=3)
    elif style in ("icon", "image") and b.width > 60 and b.height > 60:
        draw.ellipse((b.left + 24, b.top + 24, b.right - 24, b.bottom - 24), outline=MUTED, width=3)
    elif style in ("input", "hint"):
        draw.line((b.left, b.bottom - 4, b.right, b.bottom - 4), fill=ACCENT if node.focused else MUTED, width=4)
    elif node.clickable and not node.children:
        draw.rectangle(box, outline=LINE, width=1)
    elif node.clickable:
        draw.line((b.left, b.bottom - 1, b.right, b.bottom - 1), fill=LINE, width=2)
    if node.checkable:
        cy = b.top + b.height // 2
        mark = (b.right - 110, cy - 30, b.right - 50, cy + 30)
        if style == "radio":
            draw.ellipse(mark, outline=ACCENT, width=4, fill=ACCENT if node.checked else None)
        elif style == "switch":
            draw.rounded_rectangle((b.right - 150, cy - 25, b.right - 30, cy + 25), radius=25,
                                   fill=ACCENT if node.checked else LINE)
        else:
            draw.rectangle(mark, outline=ACCENT, width=4, fill=ACCENT if node.checked else None)
    label = node.text or (node.desc if style in ("icon", "image") else "")
    if label:
        size = FONT_PX.get(style, 38)
        font = _font(size if style not in ("icon", "image") else 26)
        pad = 30 if style == "button" else 12 if node.clickable or style in ("input", "hint") else 0
        colour = MUTED if style in ("hint", "icon", "image") or not node.enabled else INK
        if node.selected and style == "tab":
            colour = ACCENT
        right = b.right - (170 if node.checkable else pad)
        text = _fit(draw, label, font, right - b.left - pad)
        y = b.top + max(0, (b.height - size) // 2)
        draw.text((b.left + pad, y), text, fill=colour, font=font)
    for child in node.children:
        _draw(draw, child)


#: Frames kept (about 0.2 MB each).
CACHE_SIZE = 128
_frames: OrderedDict[tuple[object, ...], bytes] = OrderedDict()
_frames_lock = threading.Lock()
#: Frames drawn and frames served from the cache, since the process started.
stats = {"drawn": 0, "cached": 0}


def _drawn(node: Node, out: list[object]) -> None:
    """What ``_draw`` reads of ``node`` and its subtree, in drawing order."""
    out.append((node.bounds, node.style, node.text, node.desc, node.enabled, node.focused, node.clickable,
                bool(node.children), node.checkable, node.checked, node.selected))
    for child in node.children:
        _drawn(child, out)


def _key(windows: list[tuple[Node, bool]], size: tuple[int, int], status_text: str) -> tuple[object, ...]:
    drawn: list[object] = [size, status_text]
    for window, dim in windows:
        drawn.append(("window", dim))
        _drawn(window, drawn)
    return tuple(drawn)


def render_png(windows: list[tuple[Node, bool]], size: tuple[int, int], status_text: str = "") -> bytes:
    """Draw the windows bottom to top; a window marked ``dim`` (a dialog) shades what lies below it.
    The same frame drawn before comes from the cache (see the module docstring)."""
    key = _key(windows, size, status_text)
    with _frames_lock:
        png = _frames.get(key)
        if png is not None:
            _frames.move_to_end(key)
            stats["cached"] += 1
            return png
    png = _render(windows, size, status_text)
    with _frames_lock:
        _frames[key] = png
        stats["drawn"] += 1
        while len(_frames) > CACHE_SIZE:
            _frames.popitem(last=False)
    return png


#: Every colour ``_draw`` uses; drawn on a palette image, each is an index (Pillow maps the RGB
#: value to it), text included (not anti-aliased there: a wireframe's text reads as well).
_COLOURS = ((255, 255, 255), INK, MUTED, LINE, ACCENT, BAR)
#: Shades: a dialog dims what lies below it to 65%, a dialog above a dialog twice.
_SHADES = 3
_PALETTE = [round(v * 0.65 ** shade) for shade in range(_SHADES) for colour in _COLOURS for v in colour]
#: Index -> the same colour one shade darker (the darkest stays).
_DIM = [i + len(_COLOURS) if i < len(_COLOURS) * (_SHADES - 1) else i for i in range(256)]


def _render(windows: list[tuple[Node, bool]], size: tuple[int, int], status_text: str) -> bytes:
    # A palette image: a third of the bytes of RGB to draw, and PNG-encoded unfiltered, about 6x
    # faster than an RGB frame (17 ms against 100 on a loaded machine) and half the size.
    image = Image.new("P", size, 0)
    image.putpalette(_PALETTE)
    for i, (window, dim) in enumerate(windows):
        if dim and i > 0:
            image = image.point(_DIM)
        draw = ImageDraw.Draw(image)
        _draw(draw, window)
        if i == 0 and status_text:
            draw.text((42, 18), status_text, fill=INK, font=_font(40))
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=False, compress_level=1)
    return buf.getvalue()
