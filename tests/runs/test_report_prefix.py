"""The report's accuracy with the first k sampled programs counts a repair or rescope sibling with the
sample it comes from: at k = n it is the run's own vote (repairs sit at positions n, n+1, ... and
were left out, so a binder run's curve ended below its accuracy: 11 against 13 on a recorded run)."""

from __future__ import annotations

from binder_py.runs.report import record_vote

QUESTION = "which city is the largest?"
RECORD = {"dataset": "wikitq", "question": QUESTION, "candidates": [
    {"program": "p0", "ok": False, "value": None, "count": 2, "sample_orders": [0, 2], "origin": "sample"},
    {"program": "p1", "ok": True, "value": "lima", "count": 1, "sample_orders": [1], "origin": "sample"},
    {"program": "p0 fixed", "ok": True, "value": "oslo", "count": 1, "sample_orders": [3], "origin": "repair",
     "repaired_from": 0},
    {"program": "p0 fixed again", "ok": True, "value": "oslo", "count": 1, "sample_orders": [4],
     "origin": "repair", "repaired_from": 2},
    {"program": "p1 asked once", "ok": True, "value": "lima", "count": 1, "sample_orders": [5],
     "origin": "rescope", "repaired_from": 1},
]}
CONFIG = {"task": "wikitq", "mode": "binder", "n": 3}


def counts(k: int) -> dict[str, int]:
    return {share.key[0]: share.count for share in record_vote(RECORD, k, CONFIG).distribution}


def test_repairs_and_siblings_vote_with_the_sample_they_come_from() -> None:
    assert counts(3) == counts(10**6) == {"oslo": 2, "lima": 2}  # k = n: the run's own vote
    assert counts(1) == {"oslo": 2}  # p0 (position 0) and its repairs; p1 and its sibling not yet sampled
    assert counts(2) == {"oslo": 2, "lima": 2}


def test_a_repair_whose_source_the_record_does_not_name_keeps_its_own_position() -> None:
    broken = {**RECORD, "candidates": [dict(c) for c in RECORD["candidates"]]}
    broken["candidates"][2]["repaired_from"] = None
    broken["candidates"][3]["repaired_from"] = 3  # a loop
    result = record_vote(broken, 3, CONFIG)
    assert {s.key[0]: s.count for s in result.distribution} == {"lima": 2}
    assert {s.key[0]: s.count for s in record_vote(broken, 10**6, CONFIG).distribution} == {"oslo": 2, "lima": 2}


def test_a_linked_version_of_a_repair_votes_with_the_sample_the_repair_comes_from() -> None:
    """A repair that selected nothing and its linked version (which answered, so it stands for the repair)
    sit at the repair's position, after the n samples: the re-vote at k = n is still the run's own."""
    linked = {**RECORD, "candidates": [dict(c) for c in RECORD["candidates"][:2]] + [
        {"program": "p0 fixed", "ok": True, "value": [], "count": 1, "sample_orders": [3], "origin": "repair",
         "repaired_from": 0},
        {"program": "p0 fixed, linked", "ok": True, "value": "oslo", "count": 1, "sample_orders": [3],
         "origin": "link", "repaired_from": 2},
    ]}
    assert {s.key[0]: s.count for s in record_vote(linked, 3, CONFIG).distribution} == {"oslo": 1, "lima": 1}
    assert {s.key[0]: s.count for s in record_vote(linked, 1, CONFIG).distribution} == {"oslo": 1}
