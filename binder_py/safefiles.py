"""Files inside a directory someone else may have made (a received run directory, a data folder).

Every file a run directory holds is opened here, and only here:

* the last path component is opened with ``O_NOFOLLOW`` (a symlink is refused, never followed);
* what was opened must be a regular file (a FIFO, device or directory is refused; FIFOs are
  opened non-blocking so that refusing one cannot hang);
* replacing a file writes a temporary file created with ``O_EXCL`` in the same directory and
  renames it over the old one, and only when the old one is a regular file;
* nothing that is not a regular file is ever truncated, appended to or replaced.

Errors are :class:`~binder_py.errors.BinderError` with one line naming the file.
:func:`redact_spec` removes credentials from an ``--lm`` spec before it is recorded.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterable

from binder_py.errors import BinderError

__all__ = ["contained_path", "file_kind", "open_regular", "output_directory", "output_file", "read_regular_bytes", "redact_spec",
           "replace_regular", "require_regular_or_absent", "truncate_regular", "write_output_text"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _refuse(path: Path, what: str) -> BinderError:
    return BinderError(f"{path}: {what}; binder-py only reads and writes regular files here (replace it with a "
                       "regular file, or use another directory)")


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is a device or special file"


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a message (``is a FIFO``, ...)."""
    return _kind(mode)


def _open_fd(path: Path, flags: int, mode: int = 0o644, *, follow_symlinks: bool = False) -> int:
    nofollow = 0 if follow_symlinks else _NOFOLLOW
    try:
        fd = os.open(path, flags | nofollow | _CLOEXEC | _NONBLOCK, mode)
    except FileNotFoundError:
        raise
    except OSError as error:
        if not follow_symlinks and os.path.islink(path):
            raise _refuse(path, "is a symbolic link") from None
        if os.path.isdir(path):
            raise _refuse(path, "is a directory") from None
        raise BinderError(f"{path}: cannot open ({error.strerror})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _refuse(path, _kind(info.st_mode))
    if _NONBLOCK:  # a regular file: back to ordinary blocking I/O
        os.set_blocking(fd, True)
    return fd


def open_regular(path: str | os.PathLike[str], mode: str = "rb", *, follow_symlinks: bool = False) -> BinaryIO:
    """Open a regular file without following a symlink: ``"rb"``, ``"ab"`` (created if missing) or
    ``"r+b"`` (created if missing, for a lock file). :class:`FileNotFoundError` for ``"rb"`` when absent.

    ``follow_symlinks=True`` is for a file the user named themselves (an oracle, a predictions
    file): it must still be a regular file."""
    flags = {"rb": os.O_RDONLY, "ab": os.O_WRONLY | os.O_APPEND | os.O_CREAT,
             "r+b": os.O_RDWR | os.O_CREAT}[mode]
    fd = _open_fd(Path(path), flags, follow_symlinks=follow_symlinks and mode == "rb")
    return os.fdopen(fd, mode, buffering=0 if mode == "r+b" else -1)  # type: ignore[return-value]


def read_regular_bytes(path: str | os.PathLike[str], max_bytes: int, *, what: str = "file",
                       follow_symlinks: bool = False, hint: str = "") -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (else a one-line error, ending with
    ``hint`` when given)."""
    path = Path(path)
    hint = f"; {hint}" if hint else ""
    with open_regular(path, follow_symlinks=follow_symlinks) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > max_bytes:
            raise BinderError(f"{path}: {what} of {size:,} bytes is larger than the limit of {max_bytes:,} bytes{hint}")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # grew while being read
        raise BinderError(f"{path}: {what} is larger than the limit of {max_bytes:,} bytes{hint}")
    return data


def truncate_regular(path: str | os.PathLike[str], length: int) -> None:
    """Cut a regular file to ``length`` bytes and fsync it (never through a symlink)."""
    fd = _open_fd(Path(path), os.O_WRONLY)
    try:
        os.ftruncate(fd, length)
        os.fsync(fd)
    finally:
        os.close(fd)


def require_regular_or_absent(path: str | os.PathLike[str]) -> None:
    """Refuse ``path`` unless it is absent or a regular file (a symlink is refused, not followed);
    for a file another library opens by name (the SQLite recording)."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise _refuse(path, "is a symbolic link")
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(path, _kind(info.st_mode))


def _creation_mode() -> int:
    """The mode ``open()`` gives a new file here: 0o666 less the process's umask, read from
    ``/proc/self/status`` (setting the umask to read it back is not thread-safe); where that cannot
    be read (no ``/proc``: macOS), 0o600, as ``mkstemp`` makes it: never more open than the user's
    umask may want."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o600


def replace_regular(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a new ``O_EXCL`` temporary file in the same directory,
    fsynced, renamed over ``path``. ``path`` must be absent or a regular file (a symlink is refused).
    The file keeps the mode it had, and a new one gets the mode ``open()`` would give it (``mkstemp``
    makes its file 0600, which left a run's ``config.json`` unreadable to the colleagues who could
    read its ``results.jsonl``)."""
    path = Path(path)
    require_regular_or_absent(path)
    try:
        mode = stat.S_IMODE(os.lstat(path).st_mode)
    except FileNotFoundError:
        mode = _creation_mode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # O_CREAT|O_EXCL
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def output_directory(path: str | os.PathLike[str], *, what: str) -> Path:
    """``path`` as a directory to write into, created with its parents; a one-line
    :class:`BinderError` when it is a file or cannot be created (``what``: the option, ``--out``)."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        raise BinderError(f"{what} {path} is a file, not a directory; give a directory (new or existing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BinderError(f"{what} {path}: cannot create the directory ({error.strerror or error})") from None
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)  # a hard link or another spelling of the same file too
    except OSError:  # either is absent
        return a.resolve() == b.resolve()


def output_file(path: str | os.PathLike[str], *, what: str, example: str = "out",
                reads: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """``path`` as a file the user named to write (``--out FILE``), its folder created; a one-line
    :class:`BinderError` when it is a directory (``example``: a file name to suggest in it) or one
    of the files the command ``reads`` (a run's results.jsonl given as ``--out`` was overwritten)."""
    path = Path(path).expanduser()
    if path.is_dir():
        raise BinderError(f"{what} {path} is a directory; give a file name in it, e.g. {path / example}")
    read = next((Path(r).expanduser() for r in reads if _same_file(path, Path(r).expanduser())), None)
    if read is not None:
        raise BinderError(f"{what} {path} is {read}, which this command reads; writing there would destroy it: "
                          f"give another file name, e.g. {path.parent / example}")
    output_directory(path.parent, what=f"the folder of {what}")
    return path


def write_output_text(path: str | os.PathLike[str], text: str, *, what: str, example: str = "out",
                      reads: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Write an output file the user named (``--out FILE``), its folder created; a one-line
    :class:`BinderError` when it is a directory, one of the files the command ``reads``, or cannot
    be written."""
    path = output_file(path, what=what, example=example, reads=reads)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise BinderError(f"{what} {path}: cannot write the file ({error.strerror or error})") from None


def contained_path(root: str | os.PathLike[str], relative: str, *, what: str) -> Path:
    """``root / relative`` resolved (symlinks followed), refused unless it stays inside ``root`` resolved.

    ``what`` names the data that gave the path (``"question nt-12: context"``) for the error."""
    base = Path(root).resolve()
    candidate = (base / relative).resolve()
    if candidate != base and base not in candidate.parents:
        raise BinderError(f"{what}: the path {relative!r} leads outside the data directory {base}; "
                          "the data file is damaged or crafted (fix or remove that entry)")
    return candidate


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s?#]+@")
_SECRET_PARAM = re.compile(r"(?i)([?&;](?:api[-_]?key|key|token|access[-_]?token|auth|secret|password|passwd|pwd|"
                           r"sig|signature|code)=)[^&#;\s]*")


def redact_spec(spec: str | None) -> str | None:
    """``spec`` with credentials removed: the ``user:password@`` of a URL and the values of key-,
    token-, secret- or password-like query parameters become ``***``."""
    if spec is None:
        return None
    return _SECRET_PARAM.sub(r"\1***", _URL_USERINFO.sub(r"\1***@", spec))
