"""The output policy: one set of rules for every folder and file the library or the CLI writes.

1. **Never clobber what we did not create.** A folder the project wrote holds a manifest,
   ``.tempo_analysis.json`` ({"kind", "version", "created", ...}). An existing non-empty folder
   without it is refused (:class:`OutputExistsError`, a :class:`~tempo_analysis.data.DataError`)
   unless the caller passes ``overwrite=True`` (the CLI's ``--overwrite``). An empty folder is fine.
2. **Replace, never merge.** A folder of ours is replaced as a whole: files of an older run
   cannot survive next to the new ones.
3. **Atomic.** Everything is written into a temporary sibling folder
   (``.NAME.tempo_analysis-tmp-<pid>-<token>``) and renamed into place; readers see the old output
   or the complete new one, never a half.
4. **No orphans, and nothing of a user's touched.** A temporary sibling carries the writer's pid and
   a random token in its name, and the same token in a marker file inside it (``.tempo_analysis-temp``).
   :func:`clean_stale_temps` removes only such marked folders whose process is gone; every save calls
   it first, so a hard kill (SIGKILL, power loss) leaves nothing behind after the next run, while a
   user's ``.draft.tmp-123`` (or any name without our marker) is never touched.
5. **Ownership is per file and per kind.** The manifest lists the files a run wrote. A folder of ours
   holding a file the manifest does not list (a user's ``NOTES.md``) is refused unless ``overwrite``;
   a single output file counts as ours only when its own stamp, or its folder's manifest, names it
   with the writer's kind.
6. **Only regular files and folders.** A symbolic link (dangling or not), a device node, a FIFO or
   a socket given as an output is refused, with or without ``overwrite``, and never opened.

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

Replacing a folder takes two renames (old folder aside to ``.NAME.tempo_analysis-old-<pid>-<token>``,
marked like a temporary, new one in). A kill between the two leaves the old folder aside; the next
:func:`clean_stale_temps` moves it back when nothing took its place, so a crash never loses the
previous output. Nothing without our marker is ever renamed.

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
import stat
from pathlib import Path
from typing import Iterator

from tempo_analysis.data.errors import DataError

MANIFEST = ".tempo_analysis.json"   # marks a folder the project created
STAMP_KEY = "tempo_analysis"        # marks a JSON results file the project created
TEXT_MARK = "# tempo_analysis"      # first line of a text results file (TSV) the project created
MANIFEST_VERSION = 1
TEMP_MARK = ".tempo_analysis-temp"  # inside a temporary sibling: its token, written by this library only
_TEMP = re.compile(r"^\.(?P<name>.+)\.tempo_analysis-(?P<what>tmp|old)-(?P<pid>\d+)-(?P<token>[0-9a-f]{16})$")


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


def listed_files(folder) -> list[str]:
    """The files under ``folder`` as the manifest lists them (POSIX paths relative to it), ours excepted."""
    folder = Path(folder)
    out = []
    for p in sorted(folder.rglob("*")):
        if p.is_dir() and not p.is_symlink():
            continue
        rel = p.relative_to(folder).as_posix()
        if rel not in (MANIFEST, TEMP_MARK):
            out.append(rel)
    return out


def unlisted_files(folder) -> list[str]:
    """Files in a folder of ours that its manifest does not list (a user added them); [] for an old
    manifest without a file list."""
    info = read_manifest(folder)
    if info is None or not isinstance(info.get("files"), list):
        return []
    listed = set(info["files"])
    return [f for f in listed_files(folder) if f not in listed]


def _file_is_ours(path: Path, kind: str | None = None) -> bool:
    """Ours: a stamped JSON object or a text file with our header, of ``kind`` when given; or a file that
    its folder's manifest lists (of ``kind`` when given). Only called on regular files."""
    info = read_manifest(path.parent)
    if info is not None and (kind is None or info.get("kind") == kind):
        files = info.get("files")
        if isinstance(files, list) and path.name in files:
            return True
    if path.suffix.lower() != ".json":
        try:
            with open(path, "rb") as fh:
                first = fh.readline(4096).decode("utf-8", "replace").rstrip("\r\n")
        except OSError:
            return False
        if not first.startswith(TEXT_MARK + " ") and first != TEXT_MARK:
            return False
        return kind is None or first[len(TEXT_MARK):].strip() == kind
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    mark = data.get(STAMP_KEY) if isinstance(data, dict) else None
    return isinstance(mark, dict) and "kind" in mark and (kind is None or mark["kind"] == kind)


def _special(path: Path) -> str | None:
    """What ``path`` is when it is not a regular file or folder (a link, a device, a FIFO, a socket)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link" + ("" if path.exists() else " (dangling)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


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
    """A hidden sibling name of ``path`` for this process: ``.NAME.tempo_analysis-<what>-<pid>-<token>``."""
    path = Path(path)
    return path.with_name(f".{path.name}.tempo_analysis-{what}-{os.getpid()}-{secrets.token_hex(8)}")


def mark_temp(folder: Path, as_name: Path | None = None) -> Path:
    """Record a temporary folder's token inside it: only a marked folder is ever cleaned or restored.

    ``as_name``: the temp name ``folder`` is about to be renamed to (a folder set aside is marked
    before the rename, so a kill right after it still leaves a marked, restorable folder).
    """
    m = _TEMP.match(Path(as_name if as_name is not None else folder).name)
    if m is None:
        raise ValueError(f"{as_name or folder} is not named by temp_name()")
    (Path(folder) / TEMP_MARK).write_text(m.group("token"), encoding="utf-8")
    return Path(folder)


def make_temp_dir(path, what: str = "tmp") -> Path:
    """Create and mark a temporary sibling folder of ``path``."""
    tmp = temp_name(Path(path).absolute(), what)
    tmp.mkdir()
    return mark_temp(tmp)


def unmark_temp(folder: Path) -> None:
    """Drop the marker of a temporary folder that is about to become a real output."""
    with contextlib.suppress(FileNotFoundError):
        (Path(folder) / TEMP_MARK).unlink()


@contextlib.contextmanager
def temp_file_for(path) -> Iterator[Path]:
    """A path to write the new bytes of ``path`` to, inside a marked temporary sibling folder; the caller
    ``os.replace``-s it onto ``path``. The folder goes on exit, whatever happened."""
    tmp = make_temp_dir(path)
    try:
        yield tmp / "data"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _our_temp(p: Path, token: str) -> bool:
    if p.is_symlink() or not p.is_dir():
        return False
    try:
        return (p / TEMP_MARK).read_text(encoding="utf-8").strip() == token
    except (OSError, UnicodeDecodeError):
        return False


def clean_stale_temps(folder) -> list[Path]:
    """Remove our temporary siblings whose writer process is dead.

    Only folders named by :func:`temp_name` that hold the matching marker (:func:`mark_temp`) are
    touched; anything else, whatever its name, is left alone. A folder set aside while being replaced
    (``.NAME.tempo_analysis-old-...``) is moved back to ``NAME`` when nothing took its place (the
    writer died between the two renames), else removed. Returns the paths removed or restored. A
    missing folder is fine (nothing to clean).
    """
    folder = Path(folder)
    done: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return done
    for p in sorted(entries):
        m = _TEMP.match(p.name)
        if not m or pid_alive(int(m.group("pid"))) or not _our_temp(p, m.group("token")):
            continue
        target = folder / m.group("name")
        if m.group("what") == "old" and not target.exists() and not target.is_symlink():
            try:
                unmark_temp(p)
                os.replace(p, target)          # the kill came between the renames: restore the old output
            except OSError:
                continue                       # keep the only copy rather than delete it
            done.append(p)
            continue
        shutil.rmtree(p, ignore_errors=True)
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
        extra = unlisted_files(path) if has_files and not overwrite else []
        if extra:
            shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
            raise OutputExistsError(
                f"output folder {str(path)!r} was written by tempo_analysis but also holds files it did not write "
                f"({shown}); replacing the folder would delete them. Fix: move them out, pass a new folder, or "
                "--overwrite (overwrite=True) to replace it as a whole.")
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
    tmp = make_temp_dir(target.absolute())
    try:
        yield tmp
        info = manifest(kind, **meta, files=listed_files(tmp))
        (tmp / MANIFEST).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        # The target may have appeared while we worked: check it again right before replacing it.
        prepare_output_dir(target, overwrite=overwrite)
        old = None
        if target.exists():
            old = temp_name(target.absolute(), "old")
            mark_temp(target, as_name=old)     # marked first: a kill after the rename leaves it restorable
            try:
                os.replace(target, old)
            except BaseException:
                unmark_temp(target)
                raise
        unmark_temp(tmp)
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
def prepare_output_file(path, *, overwrite: bool = False, kind: str | None = None) -> Path:
    """Check a single output file before any work: refuse an existing file that is not ours.

    Ours (of ``kind`` when given): a JSON object written with :func:`stamp`, a text file whose first
    line is :func:`text_header`, or a file its folder's manifest lists. A link, a device node, a
    FIFO or a socket is refused always, and never opened.
    """
    if path is None or not str(path).strip():
        raise OutputExistsError("no output file given. Fix: pass a file path.")
    path = Path(path).expanduser()
    special = _special(path)
    if special:
        raise OutputExistsError(f"output file {str(path)!r} is {special}; tempo_analysis writes only regular "
                                "files and never replaces or writes through this. Fix: pass a regular file path.")
    clean_stale_temps(path.absolute().parent)
    if path.is_dir():
        raise OutputExistsError(f"output file {str(path)!r} is a folder. Fix: pass a file path.")
    if path.exists() and not overwrite and not _file_is_ours(path, kind):
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
    special = _special(path)
    if special:
        raise OutputExistsError(f"output file {str(path)!r} is {special}; it is not replaced. "
                                "Fix: pass a regular file path.")
    with temp_file_for(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    _fsync_dir(path.parent)
    return path


__all__ = ["MANIFEST", "OutputExistsError", "TEMP_MARK", "atomic_output_dir", "clean_stale_temps", "is_ours",
           "listed_files", "make_temp_dir", "manifest", "mark_temp", "pid_alive", "prepare_output_dir",
           "prepare_output_file", "read_manifest", "stamp", "temp_file_for", "temp_name", "text_header",
           "unlisted_files", "unmark_temp", "write_file_atomic"]
