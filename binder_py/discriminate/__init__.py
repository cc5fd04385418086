"""Discrimination (Pangu, "Don't Generate, Discriminate"): the LM scores valid candidates.

- :mod:`~binder_py.discriminate.scoring` — score given options (multiple choice over labels, or
  forced-decoding likelihood) under any :class:`~binder_py.lm.types.LanguageModel`.
- :mod:`~binder_py.discriminate.rescore` — the ``"likelihood"`` vote over sampled programs.
- :mod:`~binder_py.discriminate.proposer` — a symbolic proposer that grows valid Binder-Python
  programs over a table step by step, keeping the LM's best ``k`` at each step.
"""
