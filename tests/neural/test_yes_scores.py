"""Yes/no answers scored by the model are read against a threshold centred on the rows of the call
that reads them (binder_py/neural/yes_scores.py), whatever order programs asked the rows in."""

import math
import pickle

import pandas as pd
import pytest

from binder_py.language.execute import execute
from binder_py.lm import ScriptedLM
from binder_py.lm.types import Capabilities, Choice
from binder_py.neural.cache import NeuralCache
from binder_py.neural.rowwise import RowwiseNeuralBackend
from binder_py.neural.yes_scores import ScoredYesNo, centred_threshold, decide_call

EMBEDDED = Capabilities(api="chat", logprobs=True, grammar=True, embedded=True)
#: a model that leans to yes for every country, ranking the North American ones highest
P_YES = {"china": 0.60, "portugal": 0.55, "vietnam": 0.62, "mexico": 0.85, "united states": 0.88, "canada": 0.82}
TABLE = pd.DataFrame({"shirt": list("abcdef"), "made in": list(P_YES)})


def leaning_model() -> ScriptedLM:
    def answer(request, purpose):
        country = request.messages[-1][1].splitlines()[-1].removeprefix("made in: ")
        p = P_YES[country]
        return Choice(text="Yes", top_logprobs=((("Yes", math.log(p)), ("No", math.log(1 - p))),))
    return ScriptedLM(answer, capabilities=EMBEDDED)


def test_a_scored_answer_is_the_plain_text_at_one_half_and_keeps_its_probability():
    assert ScoredYesNo(0.61) == "yes" and ScoredYesNo(0.5) == "no" and ScoredYesNo(0.2) == "no"
    assert isinstance(ScoredYesNo(0.61), str) and ScoredYesNo(0.61).p_yes == 0.61
    again = pickle.loads(pickle.dumps(ScoredYesNo(0.61)))
    assert again == "yes" and again.p_yes == 0.61 and type(again) is ScoredYesNo


def test_the_threshold_is_halfway_between_one_half_and_the_calls_mean():
    assert centred_threshold([0.9, 0.7]) == pytest.approx(0.65)
    assert centred_threshold([0.2]) == pytest.approx(0.35)
    assert centred_threshold([]) == 0.5
    decided, note = decide_call({k: ScoredYesNo(p) for k, p in P_YES.items()} | {"atlantis": "unknown"})
    # mean 0.72, threshold 0.61: half of the lean removed, vietnam (0.62) still over it
    assert decided == {"mexico": "yes", "united states": "yes", "canada": "yes", "china": "no", "portugal": "no",
                       "vietnam": "yes", "atlantis": "unknown"}
    assert all(type(v) is str for v in decided.values())
    assert note.startswith("yes/no read at P(yes) > 0.610") and note.endswith("6 row(s) (0.55 to 0.88): 4 yes, 2 no")


def test_one_row_and_one_sided_calls():
    assert decide_call({"a": ScoredYesNo(0.51)})[0] == {"a": "yes"}  # one row: read at 0.5 as before
    assert decide_call({"a": ScoredYesNo(0.49)})[0] == {"a": "no"}
    everything_yes = decide_call({k: ScoredYesNo(p) for k, p in zip("abcd", (0.97, 0.95, 0.96, 0.98))})[0]
    assert list(everything_yes.values()) == ["yes"] * 4  # a call whose rows are all clearly yes stays so
    assert decide_call({"a": "yes", "b": "no"}) == ({"a": "yes", "b": "no"}, None)  # nothing scored: unchanged


def test_plain_threshold_on_request(monkeypatch):
    monkeypatch.setenv("BINDER_YES_THRESHOLD", "0.5")
    decided, _ = decide_call({k: ScoredYesNo(p) for k, p in P_YES.items()})
    assert set(decided.values()) == {"yes"}


FULL = 'df[f_col("Is it in North America?", ["made in"])]["made in"].tolist()'
PART = 'df.tail(4)[f_col("Is it in North America?", df.tail(4)[["made in"]])]["made in"].tolist()'


@pytest.mark.parametrize("order", [(FULL, PART), (PART, FULL)])
def test_a_calls_answers_do_not_depend_on_which_program_asked_first(order):
    """The neural cache hands the backend only the rows no program asked yet: with the threshold
    computed by the backend, the sub-table's call got the full table's reading when it came second."""
    lm = leaning_model()
    cache = NeuralCache()
    backend = RowwiseNeuralBackend(lm)
    runs = {program: execute(program, TABLE, neural=backend, cache=cache, sandbox=None) for program in order}
    # the whole table: threshold 0.61, vietnam (0.62) over it
    assert runs[FULL].ok and runs[FULL].value == ["vietnam", "mexico", "united states", "canada"], runs[FULL].error
    # its own four rows (vietnam and the three): mean 0.7925, threshold 0.646, vietnam under it
    assert runs[PART].ok and runs[PART].value == ["mexico", "united states", "canada"], runs[PART].error
    assert len(lm.calls) == 6  # each row asked once, whichever program asked it
    assert runs[PART].calls[0].threshold.startswith("yes/no read at P(yes) > 0.646")
    assert runs[PART].calls[0].to_json()["threshold"] == runs[PART].calls[0].threshold


def test_a_non_finite_reading_is_no_probability():
    from binder_py.neural.rowwise import yes_probability
    assert yes_probability(Choice(text="Yes", top_logprobs=((("Yes", math.inf), ("No", math.log(0.1))),))) is None
    assert yes_probability(Choice(text="Yes", top_logprobs=((("Yes", math.nan),),))) is None


def test_a_fixed_threshold_must_be_a_probability(monkeypatch):
    from binder_py.errors import BinderError
    monkeypatch.setenv("BINDER_YES_THRESHOLD", "0.50")
    decided, note = decide_call({k: ScoredYesNo(p) for k, p in P_YES.items()})
    assert set(decided.values()) == {"yes"} and "(BINDER_YES_THRESHOLD)" in note
    monkeypatch.setenv("BINDER_YES_THRESHOLD", "off")
    with pytest.raises(BinderError, match="not a probability between 0 and 1"):
        decide_call({"a": ScoredYesNo(0.7)})
