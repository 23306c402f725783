"""Atomic writes: a write that fails leaves the old file as it was and no temporary file behind."""

import json
import math
import os
from pathlib import Path

import pandas as pd
import pytest

from rnnbench import io


def files(folder):
    return sorted(p.name for p in folder.iterdir())


WRITERS = {
    "bytes": (io.write_bytes, b"new"),
    "json": (io.write_json, {"a": 1}),
    "csv": (io.write_csv, pd.DataFrame({"a": [1, 2]})),
}


@pytest.mark.parametrize("kind", WRITERS)
def test_a_write_replaces_the_file_whole_with_the_mode_open_would_give(tmp_path, kind):
    write, data = WRITERS[kind]
    target = tmp_path / "sub" / f"out.{kind}"  # the folder is made
    write(target, data)
    write(target, data)  # over an existing file
    assert files(target.parent) == [target.name]
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize("kind", WRITERS)
def test_a_failed_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, kind):
    write, data = WRITERS[kind]
    target = tmp_path / f"out.{kind}"
    target.write_bytes(b"old")

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(OSError, match="No space left"):
        write(target, data)
    assert target.read_bytes() == b"old" and files(tmp_path) == [target.name]


def test_a_write_that_fails_halfway_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "table.csv"
    target.write_text("a\n1\n")

    def half_then_fail(self, path, **kwargs):
        Path(path).write_text("a\n")  # part of the new table reached the disk
        raise KeyboardInterrupt  # e.g. Ctrl-C while writing

    monkeypatch.setattr(pd.DataFrame, "to_csv", half_then_fail)
    with pytest.raises(KeyboardInterrupt):
        io.write_csv(target, pd.DataFrame({"a": [1, 2]}))
    assert target.read_text() == "a\n1\n" and files(tmp_path) == ["table.csv"]


def test_json_that_cannot_be_encoded_leaves_the_old_file(tmp_path):
    target = tmp_path / "m.json"
    io.write_json(target, {"ok": 1})
    with pytest.raises(TypeError):
        io.write_json(target, {"bad": object()})
    assert json.loads(target.read_text()) == {"ok": 1} and files(tmp_path) == ["m.json"]


def test_json_has_no_nan_or_infinity_so_they_are_written_as_null(tmp_path):
    target = tmp_path / "m.json"
    io.write_json(target, {"ppl": math.inf, "loss": [1.5, math.nan], "nested": {"x": -math.inf}, "n": 3})
    assert json.loads(target.read_text()) == {"ppl": None, "loss": [1.5, None], "nested": {"x": None}, "n": 3}
