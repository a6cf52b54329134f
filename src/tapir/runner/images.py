"""Screenshots made small enough to embed in one HTML file.

A phone screenshot is a 1080x2400 PNG of 0.2 to 3 MB; a report of a hundred scripts embeds
hundreds of them. ``thumbnail`` reduces one by an integer factor (``Image.reduce``: a box filter,
several times faster than a resampling filter and as legible at these sizes) and encodes it as
WebP (JPEG where Pillow lacks WebP): about 15 KB at 360 pixels wide.

Decoding the PNG is most of the cost (about 30 ms for a phone's screen), and a run shows the same
screens many times over (each script of an app starts on its launch screen): thumbnails are kept
by the digest of the PNG they were made from, process-wide, the most recent ``CACHE_SIZE``.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections import OrderedDict
from functools import lru_cache

from PIL import Image, UnidentifiedImageError, features

__all__ = ["image_mime", "thumbnail"]


@lru_cache(maxsize=1)
def _format() -> str:
    return "WEBP" if features.check("webp") else "JPEG"


def image_mime() -> str:
    """The MIME type ``thumbnail`` produces."""
    return "image/webp" if _format() == "WEBP" else "image/jpeg"


#: Thumbnails kept (about 15 KB each).
CACHE_SIZE = 1024
_made: OrderedDict[tuple[bytes, int, int], bytes | None] = OrderedDict()
_made_lock = threading.Lock()


def thumbnail(png: bytes, width: int = 360, quality: int = 75) -> bytes | None:
    """``png`` reduced to about ``width`` pixels wide (never enlarged); None when it is not an image.
    The same image made small before comes from the cache (see the module docstring)."""
    key = (hashlib.blake2b(png, digest_size=16).digest(), width, quality)
    with _made_lock:
        if key in _made:
            _made.move_to_end(key)
            return _made[key]
    small = _thumbnail(png, width, quality)
    with _made_lock:
        _made[key] = small
        while len(_made) > CACHE_SIZE:
            _made.popitem(last=False)
    return small


def _thumbnail(png: bytes, width: int, quality: int) -> bytes | None:
    try:
        with Image.open(io.BytesIO(png)) as opened:
            image = opened.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError):
        return None
    factor = max(1, round(image.width / width))
    if factor > 1:
        image = image.reduce(factor)
    out = io.BytesIO()
    if _format() == "WEBP":
        image.save(out, "WEBP", quality=quality, method=2)
    else:
        image.save(out, "JPEG", quality=quality, optimize=True)
    return out.getvalue()
