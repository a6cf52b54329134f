"""How Android names the records it prints: short activity names, record ids, APK paths.

``am start``, ``pm`` and ``dumpsys`` print the same records, so they name them alike::

    short_activity("org.x", "org.x.Main")   # ".Main", as in ``org.x/.Main``
    hex_id("rec", "org.x")                  # a stable 7-digit hex id, as in ``ActivityRecord{1a2b3c4 ...}``
"""

from __future__ import annotations

import zlib


def short_activity(package: str, activity: str) -> str:
    """``pkg/pkg.Main`` is printed as ``pkg/.Main`` in ActivityRecords."""
    return activity[len(package):] if activity.startswith(package + ".") else activity


def hex_id(*parts: object) -> str:
    """A hex object id that stays the same for the same parts (dumps compare run to run)."""
    return format(zlib.crc32("/".join(map(str, parts)).encode()), "07x")[:7]


def apk_path(package: str) -> str:
    """Where the package's APK lies, in Android 11+'s randomised ``/data/app`` layout."""
    return f"/data/app/~~{hex_id('apk', package)}==/{package}-{hex_id('dir', package)}==/base.apk"
