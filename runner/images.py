"""Screenshots made small enough to embed in one HTML file.

A phone screenshot is a 1080x2400 PNG of 0.2 to 3 MB; a report of a hundred scripts embeds
hundreds of them. ``thumbnail`` reduces one by an integer factor (``Image.reduce``: a box filter,
several times faster than a resampling filter and as legible at these sizes) and encodes it as
WebP (JPEG where Pillow lacks WebP): about 15 KB at 360 pixels wide.
"""

from __future__ import annotations

import io
from functools import lru_cache

from PIL import Image, UnidentifiedImageError, features

__all__ = ["image_mime", "thumbnail"]


@lru_cache(maxsize=1)
def _format() -> str:
    return "WEBP" if features.check("webp") else "JPEG"


def image_mime() -> str:
    """The MIME type ``thumbnail`` produces."""
    return "image/webp" if _format() == "WEBP" else "image/jpeg"


def thumbnail(png: bytes, width: int = 360, quality: int = 75) -> bytes | None:
    """``png`` reduced to about ``width`` pixels wide (never enlarged); None when it is not an image."""
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
