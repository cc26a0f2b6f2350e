"""The output policy (tempo_analysis.outputs): never clobber what we did not create, replace a folder
of ours as a whole, write atomically, and leave no orphans after a hard kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tempo_analysis import outputs
from tempo_analysis.data.errors import DataError
from tempo_analysis.outputs import (MANIFEST, OutputExistsError, atomic_output_dir, clean_stale_temps, is_ours,
                                    prepare_output_dir, prepare_output_file, stamp, write_file_atomic)

ROOT = Path(__file__).resolve().parents[2]


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


TOKEN = "0a1b2c3d4e5f6071"


def our_temp(parent: Path, name: str, what: str, pid: int, *, marked: bool = True, token: str = TOKEN) -> Path:
    """A temporary sibling as the library names it (and marks it, unless ``marked=False``)."""
    p = parent / f".{name}.tempo_analysis-{what}-{pid}-{token}"
    p.mkdir()
    if marked:
        (p / outputs.TEMP_MARK).write_text(token)
    return p


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def make_ours(folder: Path, files=("model.bin",)) -> Path:
    with atomic_output_dir(folder, kind="test") as tmp:
        for name in files:
            (tmp / name).write_text(name)
    return folder


# ------------------------------------------------------------------------------------ prepare_output_dir
def test_new_and_empty_folders_are_accepted_and_nothing_is_created(tmp_path):
    assert prepare_output_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert listing(tmp_path) == []
    (tmp_path / "empty").mkdir()
    assert prepare_output_dir(tmp_path / "empty") == tmp_path / "empty"


def test_a_users_folder_is_refused_naming_the_path_and_overwrite(tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "config.json").write_text("{\"mine\": 1}")
    with pytest.raises(OutputExistsError, match=r"'.*mine'.*not created by tempo_analysis.*--overwrite") as e:
        prepare_output_dir(user)
    assert isinstance(e.value, DataError)
    assert prepare_output_dir(user, overwrite=True) == user
    assert (user / "config.json").read_text() == "{\"mine\": 1}"       # checking never touches it


def test_files_links_and_unwritable_parents_are_refused(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(OutputExistsError, match="is a file, not a folder"):
        prepare_output_dir(tmp_path / "f.txt", overwrite=True)
    with pytest.raises(OutputExistsError, match="is a file"):
        prepare_output_dir(tmp_path / "f.txt" / "sub")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(OutputExistsError, match="symbolic link"):
        prepare_output_dir(tmp_path / "link")
    with pytest.raises(OutputExistsError, match="no output folder"):
        prepare_output_dir("")
    with pytest.raises(OutputExistsError, match="output file .* is a file"):     # a results file under a file
        prepare_output_file(tmp_path / "f.txt" / "sub" / "results.json")
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(OutputExistsError, match="not writable"):
            prepare_output_dir(ro / "out")
        with pytest.raises(OutputExistsError, match="not writable"):
            prepare_output_file(ro / "results.json")


# ------------------------------------------------------------------------------------ atomic_output_dir
def test_a_folder_of_ours_is_replaced_as_a_whole_never_merged(tmp_path):
    out = make_ours(tmp_path / "run", files=("old_variant.bin", "results.json"))
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["kind"] == "test" and manifest["version"] == 1 and "created" in manifest
    with atomic_output_dir(out, kind="test", seed=3) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".run.tempo_analysis-tmp-")
        (tmp / "results.json").write_text("new")
    assert listing(out) == [MANIFEST, "results.json"]                   # old_variant.bin is gone
    assert json.loads((out / MANIFEST).read_text())["seed"] == 3
    assert listing(tmp_path) == ["run"]                                  # no temp, no old copy


def test_a_users_folder_is_refused_before_the_body_runs(tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "notes.txt").write_text("precious")
    ran = []
    with pytest.raises(OutputExistsError):
        with atomic_output_dir(user) as tmp:
            ran.append(tmp)
    assert ran == [] and listing(user) == ["notes.txt"] and listing(tmp_path) == ["mine"]
    with atomic_output_dir(user, overwrite=True) as tmp:                 # explicit consent: replaced whole
        (tmp / "a").write_text("a")
    assert listing(user) == [MANIFEST, "a"] and is_ours(user)


def test_a_failure_inside_leaves_the_old_output_and_no_temp(tmp_path):
    out = make_ours(tmp_path / "run")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_output_dir(out) as tmp:
            (tmp / "half.bin").write_text("half")
            raise RuntimeError("boom")
    assert listing(out) == [MANIFEST, "model.bin"] and listing(tmp_path) == ["run"]


def test_a_users_folder_that_appears_during_the_work_is_not_replaced(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(OutputExistsError):
        with atomic_output_dir(out) as tmp:
            (tmp / "a").write_text("a")
            out.mkdir()
            (out / "theirs.txt").write_text("theirs")
    assert listing(out) == ["theirs.txt"] and listing(tmp_path) == ["run"]


# ------------------------------------------------------------------------------------ files
def test_write_file_atomic_writes_bytes_and_text_and_leaves_no_temp(tmp_path):
    write_file_atomic(tmp_path / "sub" / "a.json", '{"a": 1}')
    write_file_atomic(tmp_path / "sub" / "b.bin", b"\x00\x01")
    assert (tmp_path / "sub" / "a.json").read_text() == '{"a": 1}'
    assert (tmp_path / "sub" / "b.bin").read_bytes() == b"\x00\x01"
    assert listing(tmp_path / "sub") == ["a.json", "b.bin"]
    with pytest.raises(TypeError, match="bytes or str"):
        write_file_atomic(tmp_path / "c", {"a": 1})


def test_write_file_atomic_failure_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    write_file_atomic(path, "old")

    def crash(*a, **k):
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="simulated"):
        write_file_atomic(path, "new" * 1000)
    monkeypatch.undo()
    assert path.read_text() == "old" and listing(tmp_path) == ["results.json"]


def test_prepare_output_file_refuses_a_users_file_but_not_ours(tmp_path):
    theirs = tmp_path / "results.json"
    theirs.write_text('{"mine": true}')
    with pytest.raises(OutputExistsError, match=r"results.json.*not written by tempo_analysis.*--overwrite"):
        prepare_output_file(theirs)
    assert prepare_output_file(theirs, overwrite=True) == theirs
    write_file_atomic(theirs, json.dumps(stamp({"f1": 0.5}, "stream-results")))
    assert prepare_output_file(theirs) == theirs                         # stamped: ours now
    inside = make_ours(tmp_path / "run") / "model.bin"
    assert prepare_output_file(inside) == inside                         # in a folder of ours
    assert prepare_output_file(tmp_path / "new.json") == tmp_path / "new.json"
    with pytest.raises(OutputExistsError, match="is a folder"):
        prepare_output_file(tmp_path / "run")


def test_a_users_broken_json_and_plain_text_files_are_refused_but_our_text_files_are_not(tmp_path):
    broken = tmp_path / "scores.json"
    broken.write_text("{not json")
    with pytest.raises(OutputExistsError, match="not written by tempo_analysis"):
        prepare_output_file(broken)
    plain = tmp_path / "scores.tsv"
    plain.write_text("word\tscore\n")
    with pytest.raises(OutputExistsError, match="not written by tempo_analysis"):
        prepare_output_file(plain)
    plain.write_text(outputs.text_header("ranking") + "word\tscore\n")
    assert prepare_output_file(plain) == plain


@pytest.mark.parametrize("content", ['{"version": 1}', '{"kind": "run"}', '["kind", "version"]', "{"])
def test_a_folder_whose_manifest_lacks_kind_or_version_is_not_ours(tmp_path, content):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / MANIFEST).write_text(content)
    assert not is_ours(folder)
    with pytest.raises(OutputExistsError):
        prepare_output_dir(folder)
    (folder / MANIFEST).write_text('{"kind": "run", "version": 1}')
    assert is_ours(folder)


def test_a_manifest_is_dated_in_utc_to_the_second():
    created = outputs.manifest("run")["created"]
    assert created.endswith("+00:00") and "." not in created


# ------------------------------------------------------------------------------------ stale temporaries
def test_clean_stale_temps_removes_only_dead_writers_and_restores_a_set_aside_folder(tmp_path):
    dead, alive = dead_pid(), os.getppid()
    (our_temp(tmp_path, "run", "tmp", dead) / "big.bin").write_bytes(b"x" * 100)
    our_temp(tmp_path, "keep", "tmp", alive)                                  # a live writer's
    (our_temp(tmp_path, "gone", "old", dead) / "model.bin").write_text("previous")   # killed between renames
    (tmp_path / "there").mkdir()
    our_temp(tmp_path, "there", "old", dead)                                  # the new one is in place
    (tmp_path / "user.tmp-123").write_text("not ours: no leading dot")
    removed = clean_stale_temps(tmp_path)
    assert len(removed) == 3
    assert listing(tmp_path) == [f".keep.tempo_analysis-tmp-{alive}-{TOKEN}", "gone", "there", "user.tmp-123"]
    assert listing(tmp_path / "gone") == ["model.bin"]                        # restored, marker dropped
    assert (tmp_path / "gone" / "model.bin").read_text() == "previous"
    assert clean_stale_temps(tmp_path / "missing") == []


def test_a_users_files_named_like_temps_are_never_touched(tmp_path):
    """Names alone prove nothing: only a folder holding our marker with its own token is ours."""
    dead = dead_pid()
    (tmp_path / f".draft.tmp-{dead}").write_text("draft")                    # the old naming, a user's file
    (tmp_path / f".thesis.tex.old-{dead}").write_text("old thesis")          # would have been renamed into place
    photos = tmp_path / f".photos.tmp-{dead}"
    photos.mkdir()
    (photos / "cat.jpg").write_bytes(b"jpg")
    our_temp(tmp_path, "unmarked", "tmp", dead, marked=False)                 # our name, no marker
    wrong = our_temp(tmp_path, "wrong", "old", dead)
    (wrong / outputs.TEMP_MARK).write_text("ffffffffffffffff")               # a marker with another token
    (tmp_path / f".file.tempo_analysis-tmp-{dead}-{TOKEN}").write_text("a file, not a folder")
    before = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*"))
    assert clean_stale_temps(tmp_path) == []
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == before
    assert not (tmp_path / "thesis.tex").exists() and not (tmp_path / "wrong").exists()
    prepare_output_dir(tmp_path / "run")                                      # a save's own cleaning, too
    write_file_atomic(tmp_path / "results.json", "{}")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == sorted(before + ["results.json"])


CHILD = textwrap.dedent("""
    import os, sys, time
    from tempo_analysis.outputs import atomic_output_dir
    out, stage = sys.argv[1], sys.argv[2]
    if stage == "between-renames":                 # stop after the old folder was set aside
        real, calls = os.replace, []
        def replace(a, b):
            real(a, b)
            calls.append(1)
            if len(calls) == 1:
                print("SET-ASIDE", flush=True)
                time.sleep(120)
        os.replace = replace
    with atomic_output_dir(out, kind="test") as tmp:
        (tmp / "model.bin").write_bytes(b"n" * 5_000_000)
        if stage == "writing":
            print("WRITING", flush=True)
            time.sleep(120)
""")


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["writing", "between-renames"])
def test_sigkill_during_a_save_keeps_the_old_output_and_leaves_no_orphan_after_the_next_run(tmp_path, stage):
    out = make_ours(tmp_path / "run")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out), stage], stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        assert child.stdout.readline().strip() in ("WRITING", "SET-ASIDE")
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    orphans = [n for n in listing(tmp_path) if n.startswith(".run.")]
    assert orphans and all(str(child.pid) in n for n in orphans)         # the kill left a temp behind
    if stage == "writing":
        assert listing(out) == [MANIFEST, "model.bin"] and (out / "model.bin").read_text() == "model.bin"
    else:
        assert not out.exists()                                           # old set aside, new not in yet
    with atomic_output_dir(out, kind="test") as tmp:                    # the next run
        (tmp / "model.bin").write_text("next")
    assert listing(tmp_path) == ["run"]                                  # no orphan
    assert (out / "model.bin").read_text() == "next"


def test_the_previous_output_survives_a_kill_between_the_renames(tmp_path):
    """After a kill between the renames, the check before the next run puts the old folder back."""
    out = make_ours(tmp_path / "run")
    aside = tmp_path / f".run.tempo_analysis-old-{dead_pid()}-{TOKEN}"
    os.replace(out, aside)
    (aside / outputs.TEMP_MARK).write_text(TOKEN)
    prepare_output_dir(out)
    assert listing(tmp_path) == ["run"] and (out / "model.bin").read_text() == "model.bin"


def test_pid_alive():
    assert outputs.pid_alive(os.getpid()) and outputs.pid_alive(os.getppid())
    assert not outputs.pid_alive(dead_pid()) and not outputs.pid_alive(0)
    assert outputs.pid_alive(1)             # init (or the container's first process) always runs


def test_pid_alive_only_asks_and_reads_the_answers_of_the_os(monkeypatch):
    # the child takes every signal's default action (under nohup SIGHUP would be ignored) and says when it is ready
    code = ("import signal, sys, time\n"
            "for s in signal.valid_signals():\n"
            "    try: signal.signal(s, signal.SIG_DFL)\n"
            "    except (OSError, ValueError): pass\n"
            "print('ready', flush=True); time.sleep(30)")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert outputs.pid_alive(child.pid)
        with pytest.raises(subprocess.TimeoutExpired):   # asking sent no signal that ends it
            child.wait(timeout=0.5)
    finally:
        child.kill()
        child.wait()

    def refuse(pid, sig):
        raise PermissionError(pid)                       # another user's process

    monkeypatch.setattr(outputs.os, "kill", refuse)
    assert outputs.pid_alive(424242)

    def unknown(pid, sig):
        raise OSError(22, "invalid argument")            # Windows' answer for an unknown pid

    monkeypatch.setattr(outputs.os, "kill", unknown)
    assert not outputs.pid_alive(424242)


def test_outputs_are_written_under_parents_that_do_not_exist_yet(tmp_path):
    target = tmp_path / "runs" / "2026" / "model"
    with atomic_output_dir(target, kind="test") as tmp:
        (tmp / "a.txt").write_text("a")
    assert is_ours(target) and (target / "a.txt").read_text() == "a"
    out = tmp_path / "results" / "stream" / "scores.json"
    write_file_atomic(out, "{}")
    assert out.read_text() == "{}"


@pytest.mark.parametrize("path", [None, "", "   "])
def test_no_output_file_or_folder_name_is_refused_by_name(path):
    with pytest.raises(OutputExistsError, match="no output file given"):
        prepare_output_file(path)
    with pytest.raises(OutputExistsError, match="no output folder given"):
        prepare_output_dir(path)


def test_a_file_that_cannot_be_read_is_not_taken_for_ours(tmp_path, monkeypatch):
    """When in doubt, do not clobber: a text file whose first bytes cannot be read is refused."""
    out = tmp_path / "ranks.tsv"
    out.write_text("word\tscore\n")

    def unreadable(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(outputs, "open", unreadable, raising=False)
    with pytest.raises(OutputExistsError, match="not written by tempo_analysis"):
        prepare_output_file(out)
