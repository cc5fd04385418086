"""Fixtures for the pipeline tests: the shirts table and its oracle."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.ask.shirts_case import EXAMPLES


@pytest.fixture(scope="session")
def shirts_path() -> Path:
    return EXAMPLES / "shirts.csv"


@pytest.fixture(scope="session")
def oracle_spec() -> str:
    return f"oracle:{EXAMPLES / 'shirts.oracle.json'}"


@pytest.fixture()
def shirts() -> pd.DataFrame:
    return pd.read_csv(EXAMPLES / "shirts.csv")
