"""The output policy: one set of rules for every folder and file the library or the CLI writes.

1. **Never clobber what we did not create.** A folder the project wrote holds a manifest,
   ``.tempo_analysis.json`` ({"kind", "version", "created", ...}). An existing non-empty folder
   without it is refused (:class:`OutputExistsError`, a :class:`~tempo_analysis.data.DataError`)
   unless the caller passes ``overwrite=True`` (the CLI's ``--overwrite``). An empty folder is fine.
2. **Replace, never merge.** A folder of ours is replaced as a whole: files of an older run
   cannot survive next to the new ones.
3. **Atomic.** Everything is written into a temporary sibling (``.NAME.tmp-<pid>-<token>``) and
   renamed into place; readers see the old output or the complete new one, never a half.
4. **No orphans.** Temporary siblings carry the writer's pid. :func:`clean_stale_temps` removes
   those whose process is gone; every save calls it first, so a hard kill (SIGKILL, power loss)
   leaves nothing behind after the next run.

    from tempo_analysis.outputs import atomic_output_dir, prepare_output_dir, write_file_atomic

    prepare_output_dir(args.out, overwrite=args.overwrite)     # before any work: fails in ms
    ...                                                        # train, evaluate
    with atomic_output_dir(args.out, overwrite=args.overwrite, kind="diffusion-run") as tmp:
        model.save_pretrained(tmp / "model")                   # write into tmp, not args.out
        write_file_atomic(tmp / "results.json", json.dumps(results))

Single files (a results JSON, a ranking TSV) follow the same rules with :func:`prepare_output_file` /
:func:`write_file_atomic`: a file is ours when its folder carries our manifest, when it is a
JSON object stamped by :func:`stamp` (key ``"tempo_analysis"``), or when it is a text file that
starts with :func:`text_header` (a ``# tempo_analysis KIND`` comment line).

Replacing a folder takes two renames (old folder aside to ``.NAME.old-<pid>-<token>``, new one
in). A kill between the two leaves the old folder aside; the next :func:`clean_stale_temps`
moves it back when nothing took its place, so a crash never loses the previous output.

Pids are those of this machine: on a shared filesystem, do not let two machines write into one
folder at the same time (one machine's live writer looks dead from the other).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import secrets
import shutil
from pathlib import Path
from typing import Iterator

from tempo_analysis.data.errors import DataError

MANIFEST = ".tempo_analysis.json"   # marks a folder the project created
STAMP_KEY = "tempo_analysis"        # marks a JSON results file the project created
TEXT_MARK = "# tempo_analysis"      # first line of a text results file (TSV) the project created
MANIFEST_VERSION = 1
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<what>tmp|old)-(?P<pid>\d+)(?:-[0-9a-f]+)?$")


class OutputExistsError(DataError):
    """An output path holds something the project did not create (or cannot be used as an output)."""


# --------------------------------------------------------------------------------------------------
# Manifests
# --------------------------------------------------------------------------------------------------
def manifest(kind: str, **extra) -> dict:
    """The manifest of a folder we write: kind, version, created (UTC ISO 8601), anything else given."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
    return {"kind": str(kind), "version": MANIFEST_VERSION, "created": now, **extra}


def read_manifest(folder) -> dict | None:
    """The folder's manifest, or None when it has none (or an unreadable one: then it is not ours)."""
    try:
        data = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "kind" in data and "version" in data else None


def is_ours(folder) -> bool:
    """True when ``folder`` was created by the project (it holds a valid manifest)."""
    return read_manifest(folder) is not None


def stamp(obj: dict, kind: str, **extra) -> dict:
    """A copy of the JSON object ``obj`` marked as ours (key ``"tempo_analysis"``), for results files."""
    if not isinstance(obj, dict):
        raise TypeError(f"stamp() takes a dict (a JSON object), got {type(obj).__name__}")
    return {**obj, STAMP_KEY: manifest(kind, **extra)}


def text_header(kind: str) -> str:
    """The first line of a text results file we write: a ``#`` comment (``pandas.read_csv(..., skiprows=1)``)."""
    return f"{TEXT_MARK} {kind}\n"


def _file_is_ours(path: Path) -> bool:
    if is_ours(path.parent):
        return True
    if path.suffix.lower() != ".json":
        try:
            with open(path, "rb") as fh:
                return fh.read(len(TEXT_MARK)) == TEXT_MARK.encode()
        except OSError:
            return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get(STAMP_KEY), dict) and "kind" in data[STAMP_KEY]


# --------------------------------------------------------------------------------------------------
# Stale temporaries
# --------------------------------------------------------------------------------------------------
def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (another user's process counts as alive)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:            # e.g. Windows: unknown pid -> OSError
        return False
    return True


def temp_name(path, what: str = "tmp") -> Path:
    """A hidden sibling of ``path`` that names this process: ``.NAME.tmp-<pid>-<token>``."""
    path = Path(path)
    return path.with_name(f".{path.name}.{what}-{os.getpid()}-{secrets.token_hex(4)}")


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def clean_stale_temps(folder) -> list[Path]:
    """Remove temporary siblings (``.NAME.tmp-<pid>[-token]``) whose writer process is dead.

    A folder set aside while being replaced (``.NAME.old-<pid>-token``) is moved back to ``NAME``
    when nothing took its place (the writer died between the two renames), else removed.
    Returns the paths removed or restored. A missing folder is fine (nothing to clean).
    """
    folder = Path(folder)
    done: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return done
    for p in sorted(entries):
        m = _TEMP.match(p.name)
        if not m or pid_alive(int(m.group("pid"))):
            continue
        target = folder / m.group("name")
        if m.group("what") == "old" and not target.exists() and not target.is_symlink():
            try:
                os.replace(p, target)          # the kill came between the renames: restore the old output
            except OSError:
                continue                       # keep the only copy rather than delete it
            done.append(p)
            continue
        _remove(p)
        done.append(p)
    return done


def _fsync_dir(folder: Path) -> None:
    """Persist renames in ``folder`` (best effort; not possible on every OS)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------------
# Folders
# --------------------------------------------------------------------------------------------------
def prepare_output_dir(path, *, overwrite: bool = False) -> Path:
    """Check an output folder before any work is done; return it as a Path (nothing is created).

    Allowed: a path that does not exist yet (its nearest existing parent must be a writable
    folder), an empty folder, a folder of ours (it will be replaced as a whole), or any folder
    with ``overwrite=True`` (it will be replaced as a whole too). Refused with
    :class:`OutputExistsError`: a non-empty folder without our manifest, a file, a symbolic link.
    Also removes stale temporaries of dead processes next to the folder.
    """
    if path is None or not str(path).strip():
        raise OutputExistsError("no output folder given. Fix: pass a folder path (e.g. --out runs/my_run).")
    path = Path(path).expanduser()
    if path.is_symlink():
        raise OutputExistsError(f"output folder {str(path)!r} is a symbolic link; it is not replaced through a link. "
                                "Fix: pass the real folder, or a new path.")
    if path.exists() and not path.is_dir():
        raise OutputExistsError(f"output path {str(path)!r} is a file, not a folder. "
                                "Fix: pass a folder path, or move the file away.")
    parent = path.absolute().parent
    clean_stale_temps(parent)
    if path.is_dir():
        try:
            has_files = any(path.iterdir())
        except PermissionError as e:
            raise OutputExistsError(f"output folder {str(path)!r} cannot be read ({e}). Fix: pass another folder.") \
                from None
        if has_files and not overwrite and not is_ours(path):
            raise OutputExistsError(
                f"output folder {str(path)!r} already exists, is not empty and was not created by tempo_analysis "
                f"(no {MANIFEST} in it), so it is not replaced. Fix: pass a new or empty folder, or --overwrite "
                "(overwrite=True) to replace it as a whole.")
    _check_parent(path, "output folder")
    return path


def _check_parent(path: Path, what: str) -> None:
    """Refuse a path whose nearest existing ancestor is a file or a folder we cannot write to."""
    parent = path.absolute().parent
    base = parent
    while not base.exists():
        base = base.parent
    if not base.is_dir():
        raise OutputExistsError(f"cannot create {what} {str(path)!r}: {str(base)!r} is a file. "
                                "Fix: choose another path.")
    if not os.access(base, os.W_OK | os.X_OK):
        raise OutputExistsError(f"cannot write {what} {str(path)!r}: {str(base)!r} is not writable. "
                                "Fix: choose a folder you can write to.")


@contextlib.contextmanager
def atomic_output_dir(path, overwrite: bool = False, *, kind: str = "output", **meta) -> Iterator[Path]:
    """Yield a temporary sibling folder to write into; on success it replaces ``path`` as a whole.

    The manifest (``kind``, version, created and ``meta``) is added last, then the folder is
    renamed into place. On any exception (and on a kill) ``path`` is left as it was. See the
    module docstring for the rules and the crash recovery.
    """
    target = prepare_output_dir(path, overwrite=overwrite)
    parent = target.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(target.absolute())
    tmp.mkdir()
    try:
        yield tmp
        (tmp / MANIFEST).write_text(json.dumps(manifest(kind, **meta), indent=2) + "\n", encoding="utf-8")
        # The target may have appeared while we worked: check it again right before replacing it.
        prepare_output_dir(target, overwrite=overwrite)
        old = None
        if target.exists():
            old = temp_name(target.absolute(), "old")
            os.replace(target, old)
        os.replace(tmp, target)
        _fsync_dir(parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------
def prepare_output_file(path, *, overwrite: bool = False) -> Path:
    """Check a single output file before any work: refuse an existing file that is not ours.

    Ours: its folder holds our manifest, it is a JSON object written with :func:`stamp`, or a text
    file whose first line is :func:`text_header`.
    """
    if path is None or not str(path).strip():
        raise OutputExistsError("no output file given. Fix: pass a file path.")
    path = Path(path).expanduser()
    clean_stale_temps(path.absolute().parent)
    if path.is_dir():
        raise OutputExistsError(f"output file {str(path)!r} is a folder. Fix: pass a file path.")
    if path.exists() and not overwrite and not _file_is_ours(path):
        raise OutputExistsError(
            f"output file {str(path)!r} already exists and was not written by tempo_analysis, so it is not "
            "replaced. Fix: pass a new file name, or --overwrite (overwrite=True) to replace it.")
    _check_parent(path, "output file")       # under a file, or in a read-only folder: refused now, not after the work
    return path


def write_file_atomic(path, data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` to ``path`` through a temporary sibling + fsync + rename: never a partial file.

    This is the mechanism only; call :func:`prepare_output_file` first where the policy applies
    (inside a folder from :func:`atomic_output_dir` it is not needed).
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode(encoding)
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"write_file_atomic writes bytes or str, got {type(data).__name__}")
    path.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temps(path.parent)
    tmp = temp_name(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)
    return path


__all__ = ["MANIFEST", "OutputExistsError", "atomic_output_dir", "clean_stale_temps", "is_ours", "manifest",
           "pid_alive", "prepare_output_dir", "prepare_output_file", "read_manifest", "stamp", "temp_name", "text_header",
           "write_file_atomic"]
