import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # cases.py and original_evaluators.py sit beside the tests


@pytest.fixture(scope="session")
def dev_golds():
    """(id, question, gold) of every WikiTQ dev question; skips without the shared data."""
    from binder_py.datasets.common import candidate_data_dirs

    data_dir = next((d for d in candidate_data_dirs() if (d / "wikitq").is_dir()), None)
    if data_dir is None:
        pytest.skip("shared benchmark data not found (../shared/data with wikitq/); set BINDER_DATA")
    import wikitq_cases as cases

    return cases.dev_golds(data_dir)


@pytest.fixture(scope="session")
def generated(dev_golds):
    """``generated(rule, per_rule)``: the generated cases of one rule (cached for the session)."""
    import wikitq_cases as cases

    cache: dict[int, dict[str, list]] = {}

    def of_rule(rule: str, per_rule: int) -> list:
        if per_rule not in cache:
            grouped: dict[str, list] = {}
            for case in cases.generate(dev_golds, per_rule=per_rule):
                grouped.setdefault(case.rule, []).append(case)
            cache[per_rule] = grouped
        found = cache[per_rule].get(rule, [])
        assert found, f"no dev gold answer fits rule {rule!r}"
        return found

    return of_rule
