"""Two small tables (orders, customers), a scripted program-writing model and a neural backend."""

from __future__ import annotations

import pandas as pd
import pytest



@pytest.fixture()
def orders() -> pd.DataFrame:
    return pd.DataFrame({"order_id": [1, 2, 3, 4, 5, 6],
                         "customer_id": [10, 20, 10, 30, 20, 30],
                         "amount": [250, 120, 80, 400, 60, 15]})


@pytest.fixture()
def customers() -> pd.DataFrame:
    return pd.DataFrame({"customer_id": [10, 20, 30],
                         "name": ["Acme GmbH", "Blue Sky Ltd", "Nordic Foods"],
                         "country": ["Germany", "United Kingdom", "Sweden"]})
