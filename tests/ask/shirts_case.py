"""The paper's motivating example (examples/shirts.csv) as test data."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUESTION = "which is the best-selling shirt made in North America and with no chemicals?"
NEURAL_PROGRAM = (EXAMPLES / "shirts_program.py").read_text().strip()
PLAIN_PROGRAM = 'df.sort_values("sales", ascending=False)["shirt"].iloc[0]'
BROKEN_PROGRAM = "df.no_such_column.max()"
