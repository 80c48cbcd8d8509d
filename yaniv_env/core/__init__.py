"""yaniv_env.core: the compiled, batched game core (numba).

``layout`` (the state: one int64 row per game), ``engine`` (deal, legal discards, mask, apply,
scoring). The Python engine ``yaniv.game`` stays the reference; the differential tests tie the two.
"""
