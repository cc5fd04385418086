"""The seeds a request's samples are drawn with, when a model draws them one seed each.

A request with ``seed`` and ``n`` samples is drawn, on runtimes that seed each sample (the
embedded llama.cpp server seeds the i-th of ``n`` samples with its seed + i; a server that ignores
``n`` is asked once per sample), with the seeds ``sample_seed(seed, i)``. Taken as ``seed + i``,
consecutive seeds shared all but one sample: ``--seed 3`` drew ``--seed 2``'s samples 2–5 and one
more, so "five runs with seeds 1–5" were not five independent draws. The request's seed is
spread over 32 bits first (splitmix64's finaliser), so different seeds draw unrelated samples.
A server that ignores ``n`` is first sent the request as it is (the seed as given, so a server
that honours ``n`` sees the user's seed), and its answer is sample 0 (:func:`fan_out_seed`).
"""

from __future__ import annotations

__all__ = ["spread_seed", "sample_seed", "fan_out_seed"]

#: spread seeds stay below this, so that adding a sample's position never reaches 2**32 - 1
#: (llama.cpp's "pick a random seed") nor wraps past 32 bits
_SEED_RANGE = 2**32 - 2**20
_MASK = 2**64 - 1


def spread_seed(seed: int) -> int:
    """A 32-bit seed far from the spread seeds of ``seed - 1`` and ``seed + 1``."""
    x = (seed + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return (x ^ (x >> 31)) % _SEED_RANGE


def sample_seed(seed: int, position: int) -> int:
    """The seed of a request's sample at ``position`` (0-based) when each sample has its own."""
    return spread_seed(seed) + position


def fan_out_seed(seed: int, position: int) -> int:
    """The seed of sample ``position`` asked of a server that ignores ``n`` one request per sample:
    the request's own seed for sample 0 (the request as first sent), :func:`sample_seed` after."""
    return seed if position == 0 else sample_seed(seed, position)
