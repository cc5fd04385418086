import os
import sys

import pandas as pd
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # escape_helpers, sandbox_testutil

from sandbox import Sandbox  # noqa: E402
from sandbox_testutil import SMALL  # noqa: E402


@pytest.fixture(scope="session")
def sb():
    with Sandbox(SMALL, pool_size=2) as box:
        yield box


@pytest.fixture
def df():
    return pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"]})
