"""Fixtures of the language tests.

``runner`` runs each semantic test twice: with the real sandbox (``sandbox.Sandbox``,
skipped only while the sandbox package is not importable) and with the in-process
stand-in of ``language_fakes.py`` (fast; checks the callback payloads are plain data).
"""

from __future__ import annotations

import os
import sys

import pandas as pd
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from language_fakes import InProcessSandbox, real_sandbox_available  # noqa: E402


@pytest.fixture(scope="session")
def real_sandbox():
    if not real_sandbox_available():
        pytest.skip("the sandbox package is not built yet")
    import sandbox

    box = sandbox.Sandbox(pool_size=2, preload=("pandas", "binder_py.language.worker.bridge"))
    yield box
    box.close()


@pytest.fixture(params=["sandbox", "inprocess"])
def runner(request):
    if request.param == "sandbox":
        return request.getfixturevalue("real_sandbox")
    return InProcessSandbox()


@pytest.fixture
def shirts() -> pd.DataFrame:
    return pd.DataFrame({
        "shirt": ["Tuxedo shirt", "T-shirt", "Polo", "Flannel", "Tuxedo shirt"],
        "made in": ["USA", "China", "Mexico", "Canada", "USA"],
        "price": [80, 10, 25, 30, 85],
        "material": ["cotton", "polyester", "cotton blend", "wool", "cotton"],
    })


@pytest.fixture
def shirt_oracle_data() -> dict:
    return {
        "f_col": {
            "Made in North America?": {"usa": "yes", "china": "no", "mexico": "Yes", "canada": "yes"},
            "No chemicals?": {"tuxedo shirt": "yes", "t-shirt": "no", "polo": "unknown"},
            "Is it pure cotton?": {"tuxedo shirt | cotton": "yes", "t-shirt | polyester": "no",
                                   "polo | cotton blend": "no", "flannel | wool": "no"},
            "Country code?": {"usa": "US", "china": "CN", "mexico": "MX", "canada": "CA"},
            "Price in cents?": {"80": "8,000", "10": "$1,000", "25": "2500", "30": "3000", "85": "8500"},
            "Weight in kg?": {"usa": "0.5", "china": "1", "mexico": "n/a", "canada": "2.25"},
        },
        "f_val": {
            "Which is the most formal?": "Tuxedo shirt",
            "How many countries?": "4",
            "Which are from Asia?": "China | none",
            "Is any made in Europe?": "no",
        },
    }
