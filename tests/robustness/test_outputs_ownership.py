"""Ownership is per file and per kind, and only regular files and folders are outputs.

A user's file added to a run folder survives a rerun; a results file of one kind does not make a
file of another kind "ours"; links, device nodes, FIFOs and sockets are refused and never opened."""
from __future__ import annotations

import json
import os
import socket
import threading

import pytest

from tempo_analysis.outputs import (MANIFEST, OutputExistsError, atomic_output_dir, prepare_output_dir,
                                    prepare_output_file, read_manifest, stamp, text_header, unlisted_files,
                                    write_file_atomic)


def make_run(folder, kind="diffusion-run", files=("run.json", "model/weights.bin")):
    with atomic_output_dir(folder, kind=kind) as tmp:
        for name in files:
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(name)
    return folder


def test_the_manifest_lists_every_file_the_run_wrote(tmp_path):
    run = make_run(tmp_path / "run")
    assert read_manifest(run)["files"] == ["model/weights.bin", "run.json"]
    assert unlisted_files(run) == []


def test_a_rerun_refuses_a_folder_holding_a_users_file_and_names_it(tmp_path):
    run = make_run(tmp_path / "run")
    (run / "NOTES.md").write_text("my notes")
    with pytest.raises(OutputExistsError, match=r"NOTES\.md.*--overwrite"):
        prepare_output_dir(run)
    with pytest.raises(OutputExistsError, match=r"NOTES\.md"):
        make_run(run)
    assert (run / "NOTES.md").read_text() == "my notes"
    with atomic_output_dir(run, overwrite=True, kind="diffusion-run") as tmp:   # the documented way
        (tmp / "run.json").write_text("new")
    assert not (run / "NOTES.md").exists()


def test_an_old_manifest_without_a_file_list_is_replaced_as_before(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / MANIFEST).write_text(json.dumps({"kind": "diffusion-run", "version": 1}))
    (run / "run.json").write_text("{}")
    assert prepare_output_dir(run) == run


def test_a_file_inside_a_run_of_another_kind_is_not_ours(tmp_path):
    run = make_run(tmp_path / "run")
    with pytest.raises(OutputExistsError, match="not written by tempo_analysis"):
        prepare_output_file(run / "run.json", kind="stream-evaluate")
    assert prepare_output_file(run / "run.json", kind="diffusion-run") == run / "run.json"
    (run / "notes.json").write_text("{}")                     # a user's file in a run folder: not listed
    with pytest.raises(OutputExistsError):
        prepare_output_file(run / "notes.json")


def test_stamped_files_are_ours_only_for_their_own_kind(tmp_path):
    res = tmp_path / "res.json"
    res.write_text(json.dumps(stamp({"a": 1}, "stream-evaluate")))
    assert prepare_output_file(res, kind="stream-evaluate") == res
    assert prepare_output_file(res) == res                    # no kind asked: any of ours
    with pytest.raises(OutputExistsError):
        prepare_output_file(res, kind="future-text-results")
    tsv = tmp_path / "rank.tsv"
    tsv.write_text(text_header("semantic-change-ranking") + "word\tscore\n")
    assert prepare_output_file(tsv, kind="semantic-change-ranking") == tsv
    with pytest.raises(OutputExistsError):
        prepare_output_file(tsv, kind="semantic-change-rankingx")


@pytest.mark.parametrize("overwrite", [False, True])
def test_links_are_refused_and_never_replaced(tmp_path, overwrite):
    dangling = tmp_path / "out.json"
    dangling.symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(OutputExistsError, match="symbolic link .dangling"):
        prepare_output_file(dangling, overwrite=overwrite)
    with pytest.raises(OutputExistsError, match="symbolic link"):
        write_file_atomic(dangling, "{}")
    assert dangling.is_symlink() and not (tmp_path / "nowhere.json").exists()
    target = tmp_path / "real.json"
    target.write_text("mine")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with pytest.raises(OutputExistsError, match="symbolic link"):
        prepare_output_file(link, overwrite=overwrite)
    assert target.read_text() == "mine"


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_fifo_is_refused_at_once_without_being_opened(tmp_path, overwrite):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    result = {}

    def call():
        try:
            prepare_output_file(fifo, overwrite=overwrite)
        except OutputExistsError as e:
            result["error"] = str(e)
    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "the check opened the FIFO and hangs"
    assert "FIFO" in result["error"]
    with pytest.raises(OutputExistsError, match="FIFO"):
        write_file_atomic(fifo, "{}")
    assert fifo.exists() and not fifo.is_file()


@pytest.mark.parametrize("overwrite", [False, True])
def test_device_nodes_and_sockets_are_refused(tmp_path, overwrite):
    with pytest.raises(OutputExistsError, match="device node"):
        prepare_output_file("/dev/null", overwrite=overwrite)
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
        with pytest.raises(OutputExistsError, match="socket"):
            prepare_output_file(path, overwrite=overwrite)


def test_the_cli_refuses_to_write_its_results_into_another_runs_file(tmp_path, capsys):
    """``stream evaluate --out RUN/run.json`` with RUN a diffusion run: run.json is the run's, not ours."""
    from tempo_analysis.cli import main

    run = make_run(tmp_path / "run")
    before = (run / "run.json").read_text()
    assert main(["stream", "evaluate", "--baseline", "random", "--out", str(run / "run.json")]) == 2
    err = capsys.readouterr().err
    assert "run.json" in err and "not written by tempo_analysis" in err
    assert (run / "run.json").read_text() == before
