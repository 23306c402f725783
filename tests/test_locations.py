"""Folders: one precedence rule for a setting and its variable, folders that cannot be written, the source tree."""

import os
import subprocess
from pathlib import Path

import pytest

from rnnbench.config import locations

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("key", "given", "variable", "expected"),
    [
        # the setting when given, else the variable, else the default
        ("cache_dir", "here/cache", "/env/cache", ("here/cache", "config.cache_dir")),
        ("cache_dir", None, "/env/cache", ("/env/cache", "RNNBENCH_CACHE")),
        ("cache_dir", None, "", ("data/cache", "the default")),  # set but empty counts as unset
        ("cache_dir", None, None, ("data/cache", "the default")),
        ("data_dir", "/my/corpora", "/env/corpora", ("/my/corpora", "config.data_dir")),
        ("data_dir", None, "/env/corpora", ("/env/corpora", "RNNBENCH_DATA")),
        ("data_dir", None, None, (None, "the default")),  # no folder: download
    ],
)
def test_one_precedence_rule_for_every_folder_with_a_variable(monkeypatch, key, given, variable, expected):
    name = locations.ENVIRONMENT[key]
    if variable is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, variable)
    assert locations.resolve(key, given, f"config.{key}") == expected


def test_home_folder_and_one_spelling_of_a_path(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    assert locations.expand("~/x") == "/home/someone/x"  # not a folder named ~ in the working directory
    assert locations.expand("results/smoke/") == "results/smoke"  # no results/smoke//runs
    assert locations.expand("./results") == "results"


def test_where_files_cannot_be_written(tmp_path, monkeypatch):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    assert locations.unwritable(tmp_path / "new" / "deeper") is None  # made with its parents
    assert locations.unwritable(tmp_path) is None
    assert locations.unwritable(a_file) == "is a file, not a folder"
    assert locations.unwritable(a_file / "sub") == f"is below {a_file}, which is a file"
    # a folder this process may not write (a read-only mount; for root, chmod does not stop writes)
    monkeypatch.setattr(locations.os, "access", lambda path, mode: Path(path) != tmp_path)
    assert locations.unwritable(tmp_path) == f"cannot be written: {tmp_path} is read-only for this user"
    assert locations.unwritable(tmp_path / "new") == f"cannot be written: {tmp_path} is read-only for this user"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a folder without write permission")
def test_a_folder_without_write_permission_cannot_be_written(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert locations.unwritable(folder / "cache") == f"cannot be written: {folder} is read-only for this user"
    finally:
        folder.chmod(0o755)


@pytest.mark.parametrize(
    ("folder", "problem"),
    [
        (".", "holds the checkout"),
        ("..", "holds the checkout"),
        ("/", "holds the checkout"),
        ("src", "is inside the checkout's src/"),
        ("workflow/x", "is inside the checkout's workflow/"),
        ("config", "is inside the checkout's config/"),
        ("results", None),
        ("results/smoke", None),
        ("data/cache", None),
        ("elsewhere", None),
    ],
)
def test_outputs_keep_out_of_the_source_tree(monkeypatch, folder, problem):
    monkeypatch.chdir(REPO)  # relative folders are relative to the working directory, as each job's are
    found = locations.source_tree_problem(folder, REPO)
    assert (found is None) if problem is None else found.startswith(problem)
    assert locations.source_tree_problem(folder, None) is None  # no checkout (an installed package): no tree


def test_the_source_folders_are_the_folders_git_tracks():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    folders = {line.split("/")[0] for line in tracked.splitlines() if (REPO / line.split("/")[0]).is_dir()}
    assert set(locations.SOURCE_FOLDERS) == folders | {".git", ".snakemake"}


def test_the_package_knows_its_checkout():
    assert locations.package_checkout() == REPO


def test_a_job_resolves_its_folders_by_the_same_rule(monkeypatch):
    """The data folder as the config gives it (None: the loader's own fallback); the cache folder resolved."""
    from rnnbench.config.locations import job_folders

    monkeypatch.setenv("RNNBENCH_CACHE", "/env/cache")
    assert job_folders({"data_dir": "~/corpora", "cache_dir": None}) == {
        "data_dir": os.path.expanduser("~/corpora"),
        "cache_dir": "/env/cache",
    }
    assert job_folders({"data_dir": None, "cache_dir": "given/"}) == {"data_dir": None, "cache_dir": "given"}
    monkeypatch.delenv("RNNBENCH_CACHE")
    assert job_folders({"data_dir": None, "cache_dir": None}) == {"data_dir": None, "cache_dir": "data/cache"}
