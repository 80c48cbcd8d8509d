"""yaniv_env.core: the compiled, batched game core (numba).

``layout`` (the state: one int64 row per game), ``engine`` (deal, legal discards, mask, apply,
scoring), ``observe`` (the observation), ``bots`` and ``search`` (the baselines), ``batch`` (a
batch of tables for the vector environment), ``mirror`` (a row with a ``yaniv.Game`` beside it).
The Python engine ``yaniv.game`` stays the reference; the differential tests tie the two.

**The JIT's cache.** Every kernel is compiled with ``cache=True``, so only the first process on a
machine compiles (a minute or two) and later ones load the machine code in about a second. Numba
keys a cached kernel on its own source file only: a kernel in ``batch.py`` that calls (and so
inlines) ``engine.py`` would be loaded stale after ``engine.py`` changed, and the constants of
``yaniv`` and ``yaniv_env.encoding`` are frozen into the machine code as well. So, unless the user
chose a directory with ``NUMBA_CACHE_DIR``, importing this package points numba's cache at a folder
named by a hash of every source a kernel can depend on (this package, ``yaniv``,
``yaniv_env.encoding``): ``$XDG_CACHE_HOME/yaniv-rl/numba/<hash>`` (``~/.cache`` by default). A
change to any of them gives a fresh folder, so nothing stale is ever loaded; delete
``~/.cache/yaniv-rl/numba`` to reclaim old ones. Where that folder cannot be written, numba falls
back to its usual places. Every module that defines kernels imports this package first.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def _sources() -> list[Path]:
    """The files whose text a compiled kernel can depend on."""
    here = Path(__file__).resolve().parent
    env = here.parent
    return sorted(here.glob("*.py")) + sorted((env.parent / "yaniv").glob("*.py")) + [env / "encoding.py"]


def _point_the_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    digest = hashlib.sha256()
    for path in _sources():
        try:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        except OSError:  # an install without the sources: numba's own invalidation is all there is
            return
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    from numba import config

    config.CACHE_DIR = str(base / "yaniv-rl" / "numba" / digest.hexdigest()[:16])


_point_the_cache()
