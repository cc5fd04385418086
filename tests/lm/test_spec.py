"""--lm spec parsing and model selection from the environment."""

from __future__ import annotations

import pytest

from binder_py.lm import LMConfigError, LMRequest, default_spec, is_local_spec, lm_from_spec, parse_spec


@pytest.mark.parametrize("text, provider, model, url, options", [
    ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", None, {}),
    ("openai:MODEL@http://127.0.0.1:8000/v1", "openai", "MODEL", "http://127.0.0.1:8000/v1", {}),
    ("openai:org/model-7b@http://h:1/v1/?rpm=60&concurrency=4", "openai", "org/model-7b", "http://h:1/v1",
     {"rpm": 60.0, "concurrency": 4}),
    ("openai-completions:davinci", "openai-completions", "davinci", None, {}),
    ("azure:my-deploy@https://x.openai.azure.com", "azure", "my-deploy", "https://x.openai.azure.com", {}),
    ("local", "local", None, None, {}),
    ("local?ctx=4096", "local", None, None, {"ctx": 4096}),
    ("local:/models/a.gguf", "local", "/models/a.gguf", None, {}),
    ("replay:runs/r1", "replay", "runs/r1", None, {}),
    ("openai:", "openai", None, None, {}),
])
def test_parse(text, provider, model, url, options):
    spec = parse_spec(text)
    assert (spec.provider, spec.model, spec.base_url, spec.options) == (provider, model, url, options)


@pytest.mark.parametrize("text, message", [
    ("gpt-4o", "accepted forms"), ("anthropic:claude", "accepted forms"), ("", "accepted forms"),
    ("openai:m?bogus=1", "unknown option"), ("openai:m?rpm=fast", "needs a number"),
    ("openai:m@ftp://x", "http"), ("replay:", "directory"), ("azure:", "deployment"),
    ("openai:@http://127.0.0.1:9/v1", "names a server but no model"),
    ("openai-completions:@http://h:1/v1", "names a server but no model"),
    ("openai:m?retries=0&retries=2", "given twice"),
])
def test_bad_specs_say_what_is_accepted(text, message):
    with pytest.raises(LMConfigError, match=message):
        parse_spec(text)


def test_default_spec(monkeypatch):
    assert default_spec() == "local"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert default_spec() == "openai:gpt-4o-mini"
    monkeypatch.setenv("BINDER_LM", "openai:m@http://127.0.0.1:9/v1")
    assert default_spec() == "openai:m@http://127.0.0.1:9/v1"
    assert not is_local_spec(None)
    assert is_local_spec("local:/x.gguf") and is_local_spec("local") and not is_local_spec("replay:d")


def test_local_without_the_extra_explains_what_to_do(monkeypatch):
    import binder_py.lm.local as local

    monkeypatch.setattr(local, "local_extra_installed", lambda: False)
    with pytest.raises(LMConfigError, match=r'pip install -e "\.\[local\]".*OPENAI_API_KEY'):
        lm_from_spec(None)


def test_local_with_a_missing_file(monkeypatch):
    import binder_py.lm.local as local

    monkeypatch.setattr(local, "local_extra_installed", lambda: True)
    with pytest.raises(LMConfigError, match="no such GGUF"):
        lm_from_spec("local:/nonexistent/model.gguf")
    with pytest.raises(LMConfigError, match="local:0.7b: no such GGUF file; give local:0.5b or local:1.5b"):
        lm_from_spec("local:0.7b")  # a size that does not exist named only a missing file


def test_openai_without_a_key_fails_clearly():
    with pytest.raises(LMConfigError, match="OPENAI_API_KEY"):
        lm_from_spec("openai:gpt-4o-mini")


def test_base_url_and_key_from_the_environment(server, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    server.api_key = "sk-env"
    lm = lm_from_spec("openai:test-model", cache_path=tmp_path / "c.sqlite")
    assert lm.complete(LMRequest(prompt="hi")).text == "answer"
    assert server.requests[0].headers["authorization"] == "Bearer sk-env"


def test_program_and_neural_models_can_differ(server, tmp_path):
    parse_lm = lm_from_spec(f"openai:big@{server.base_url}", cache_path=tmp_path / "c.sqlite")
    neural_lm = lm_from_spec(f"openai:small@{server.base_url}", cache_path=tmp_path / "c.sqlite")
    parse_lm.complete(LMRequest(prompt="x"), purpose="parse")
    neural_lm.complete(LMRequest(prompt="x"), purpose="neural")
    assert [r.body["model"] for r in server.requests] == ["big", "small"]


def test_known_context_windows():
    from binder_py.lm.openai_backend import known_context_window

    assert known_context_window("gpt-4o-mini-2024-07-18") == 128_000
    assert known_context_window("my-local-model") == 0


@pytest.mark.parametrize("option", ["concurrency=0", "slots=0", "threads=0", "ctx=-5", "rpm=-1", "tpm=0",
                                    "timeout=0", "timeout=nan", "tpm=inf", "retries=-1"])
def test_spec_options_out_of_range_are_refused(option):
    """openai:M@URL?concurrency=0 waited forever for a free slot; ?rpm=-1 raised an IndexError;
    ?timeout=0 / nan were reported as 'cannot reach' / 'malformed response'."""
    with pytest.raises(LMConfigError, match=f"option {option.split('=')[0]} in --lm .* must be"):
        parse_spec(f"openai:m@http://127.0.0.1:8000/v1?{option}")


def test_spec_options_in_range_are_kept():
    assert parse_spec("openai:m@http://h/v1?retries=0&rpm=0.5&timeout=2.5").options == {
        "retries": 0, "rpm": 0.5, "timeout": 2.5}


@pytest.mark.parametrize("text, message", [
    ("openai:m@http://h/v1?threads=4", r"option threads in .* sets the embedded model's runtime \(local\)"),
    ("azure:d@https://x.openai.azure.com?slots=2", "option slots in .* embedded model's runtime"),
    ("local?timeout=300", r"option timeout in .* paces requests to a model server"),
    ("local:1.5b?rpm=5&concurrency=2", "option rpm, concurrency in .* takes ctx, threads, slots"),
])
def test_an_option_the_provider_never_reads_is_refused(text, message):
    """local?timeout=300 and openai:M?threads=4 were accepted and did nothing (docs/LM.md: threads
    and slots are the embedded model's, the pacing options a server's)."""
    with pytest.raises(LMConfigError, match=message):
        parse_spec(text)


def test_a_count_that_is_not_whole_says_so():
    with pytest.raises(LMConfigError, match="concurrency .* needs a whole number, not '1.5'"):
        parse_spec("openai:m@http://h/v1?concurrency=1.5")
    assert parse_spec("local?ctx=4096&threads=2&slots=4").options == {"ctx": 4096, "threads": 2, "slots": 4}


def test_replay_takes_no_options():
    """replay:runs/r1?rpm=5 (pacing options may change on resume) looked for runs/r1?rpm=5/lm.sqlite
    and said no answers were recorded there."""
    with pytest.raises(LMConfigError, match=r"replay answers from its recording and takes no options \(\?rpm=5\); "
                                            r"give replay:runs/r1"):
        parse_spec("replay:runs/r1?rpm=5")
    assert parse_spec("replay:runs/what?").model == "runs/what?"  # a directory name may hold a '?'
