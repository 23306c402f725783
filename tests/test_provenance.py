"""Provenance records: the config hash, the commit of the code's own checkout, the record's fields."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime

import pytest

from rnnbench.provenance import (
    CONFIG_FILES_VARIABLE,
    config_hash,
    git_commit,
    job_fields,
    package_versions,
    record,
    share_config_files,
    write_provenance,
)


def git(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    """A git repository with one committed file."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "Snakefile").write_text("rule all:\n")
    git(repo, "add", "Snakefile")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "first")
    return repo


def test_config_hash_ignores_key_order_and_sees_every_value():
    a = {"studies": {"s": {"hidden": 8}}, "threads": 1}
    b = {"threads": 1, "studies": {"s": {"hidden": 8}}}
    assert config_hash(a) == config_hash(b)
    assert config_hash(a) != config_hash({"threads": 1, "studies": {"s": {"hidden": 9}}})
    assert len(config_hash(a)) == 16 and int(config_hash(a), 16) >= 0  # 16 hex digits


def test_git_commit_is_the_checkouts_not_the_working_directorys(checkout, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"  # like `snakemake --directory elsewhere`: not a git checkout
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    head = git(checkout, "rev-parse", "HEAD")
    assert git_commit(checkout) == head
    assert git_commit(elsewhere) == "unknown (not a git checkout)"
    assert git_commit(tmp_path / "no-such-folder") == "unknown (not a git checkout)"


def test_git_commit_says_dirty_for_changed_tracked_files_only(checkout):
    head = git(checkout, "rev-parse", "HEAD")
    (checkout / "results.csv").write_text("untracked output\n")  # outputs inside the checkout are not code
    assert git_commit(checkout) == head
    (checkout / "Snakefile").write_text("rule all:\n    input: []\n")
    assert git_commit(checkout) == head + "+dirty"


def test_record_fields(checkout):
    fields = record(
        config={"threads": 1},
        config_files=["config/config.yaml", "config/smoke.yaml"],
        command="snakemake --configfile config/smoke.yaml (rule worked_table)",
        checkout=checkout,
        producer="rnnbench.worked.TABLES['unroll']",
        inputs=("a.json",),
    )
    assert list(fields) == [
        "config_hash",
        "config_files",
        "git_commit",
        "packages",
        "command",
        "producer",
        "inputs",
        "created",
    ]
    assert fields["config_hash"] == config_hash({"threads": 1})
    assert fields["config_files"] == ["config/config.yaml", "config/smoke.yaml"]  # in merge order, as given
    assert fields["git_commit"] == git(checkout, "rev-parse", "HEAD")
    assert fields["inputs"] == ["a.json"]
    assert datetime.fromisoformat(fields["created"]).tzinfo is not None  # UTC, with its offset
    assert fields["packages"] == package_versions() and "torch" in fields["packages"]


def test_a_record_is_provenance_only():
    """What an output is about (a study's description, metric) lives in its own file, not here."""
    with pytest.raises(TypeError):
        record(config={}, config_files=[], command="c", checkout=".", producer="p", study={"metric": "test_ppl"})


def test_write_provenance_writes_the_declared_path(checkout, tmp_path):
    path = tmp_path / "tables" / "unroll.provenance.json"
    write_provenance(path, config={}, config_files=[], command="c", checkout=checkout, producer="p")
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["producer"] == "p" and written["inputs"] == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["unroll.provenance.json"]  # no temporary left


def test_a_job_reads_its_config_files_command_and_checkout_from_where_the_workflow_put_them(monkeypatch, tmp_path):
    """The Snakefile shares the config files through the environment; the checkout is two folders above the job's
    script folder, whatever the working directory."""
    monkeypatch.setenv(CONFIG_FILES_VARIABLE, "")  # restored after the test
    share_config_files(["/c/config/config.yaml", "extra.yaml"])
    fields = job_fields({"seed": 1}, "study_figure", tmp_path / "checkout" / "workflow" / "scripts")
    assert fields == {
        "config": {"seed": 1},
        "config_files": ["/c/config/config.yaml", "extra.yaml"],
        "command": "snakemake --configfile /c/config/config.yaml --configfile extra.yaml (rule study_figure)",
        "checkout": str((tmp_path / "checkout").resolve()),
    }
    monkeypatch.delenv(CONFIG_FILES_VARIABLE)
    with pytest.raises(RuntimeError, match=f"{CONFIG_FILES_VARIABLE} is not set"):
        job_fields({}, "study_figure", tmp_path)
