import pytest

from binder_py.datasets.common import candidate_data_dirs


def _find_data():
    for path in candidate_data_dirs():
        if (path / "wikitq").is_dir() and (path / "tabfact").is_dir():
            return path
    return None


DATA_DIR = _find_data()


@pytest.fixture(scope="session")
def data_dir():
    if DATA_DIR is None:
        pytest.skip("shared benchmark data not found (../shared/data with wikitq/ and tabfact/); "
                    "run 'binder-py data' to see where to get it")
    return DATA_DIR
