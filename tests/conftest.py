"""Shared fixtures: where the real corpora are, a per-session cache, corpora parsed once per session, and the
book's results fixture built once per test run, however many modules or pytest-xdist workers read it."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from rnnbench.data import load_corpus

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """Folder holding ptb/ and brown/: env RNNBENCH_DATA, else <repo>/../shared/data, else skip."""
    if os.environ.get("RNNBENCH_DATA"):
        return Path(os.environ["RNNBENCH_DATA"])
    shared = REPO.parent / "shared" / "data"
    if shared.is_dir():
        return shared
    pytest.skip("real corpora not found: set RNNBENCH_DATA to a folder holding ptb/ and brown/")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """One corpus cache per test session, outside the repository."""
    return tmp_path_factory.mktemp("corpus-cache")


@pytest.fixture(scope="session")
def ptb(data_dir, cache_dir):
    return load_corpus("ptb", data_dir=data_dir, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def brown(data_dir, cache_dir):
    return load_corpus("brown", data_dir=data_dir, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def agreement(cache_dir):
    """The default agreement corpus (no download needed)."""
    return load_corpus("agreement", cache_dir=cache_dir)


@pytest.fixture(scope="session")
def built_results(tmp_path_factory) -> Path:
    """Every output of config.yaml + smoke.yaml written by the workflow's own jobs (tests/test_report.py's
    build_results), once per test run; tests that change it work on a copy.

    Under pytest-xdist each worker is a session of its own: the first worker to ask builds the folder in the
    run's temporary folder, which every worker shares, and the others wait on a lock and read it."""
    import test_report

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder = shared / "report-results"
    with open(shared / "report-results.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (folder / "built").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            test_report.build_results(folder / "results")
            (folder / "built").touch()
    return folder / "results"


@pytest.fixture(scope="session")
def fixture(tmp_path_factory, built_results):
    """The results folder every chapter test reads (the real smoke results where RNNBENCH_SMOKE_RESULTS names
    them) and a copy of reports/ to run the chapters in."""
    import test_report

    return test_report.book_fixture(tmp_path_factory, built_results)
