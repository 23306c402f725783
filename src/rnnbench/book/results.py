"""The book's reader API: where the results are, and each kind of result read from there.

    results_dir / results_root    the folder the book reads (env RNNBENCH_RESULTS, else ../results from reports/)
    results_name                  that folder as its config names it, for the file names captions give
    missing_result                the error every reader raises for a result that is not there
    table / table_path            results/tables/<name>.csv (baselines, agreement_baselines: two of them)
    provenance_*, package_versions  the provenance records of the tables, figures and studies
    study_names / study_summary / study_about      a study's summary.csv and study.json
    analysis_names / analysis_record / analysis_table  an analysis's analysis.json and its tables

Every reader takes ``results``: a results folder, or None for the one the book is rendered from. The layout
inside it is rnnbench.paths'. Nothing here imports torch, directly or through what it imports: the book reads
results and never computes them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.metrics import FAMILY_NAMES, METRIC_LABELS

RESULTS_ENV = "RNNBENCH_RESULTS"
RESULTS_NAME_ENV = "RNNBENCH_RESULTS_NAME"
DEFAULT_RESULTS = "../results"  # from reports/, Quarto's working directory for every chapter


def results_dir() -> Path:
    """The results folder: env RNNBENCH_RESULTS (absolute, or relative to reports/), else ../results."""
    return Path(os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)


def results_root(results: str | Path | None) -> str:
    """``results``, or the book's results folder when None; as text, the form rnnbench.paths builds on."""
    return str(results if results is not None else results_dir())


def results_name() -> str:
    """The results folder as its config names it (e.g. results/smoke): file names in captions are relative
    to it. Env RNNBENCH_RESULTS_NAME (set by the report rule), else the folder the book reads."""
    return os.environ.get(RESULTS_NAME_ENV) or str(results_dir())


def missing_result(path: Path | str) -> FileNotFoundError:
    """The error for a result the book needs and the folder lacks: it names the file and how to build it."""
    return FileNotFoundError(
        f"{path} not found: the report reads finished results. Build them with "
        f"`snakemake --cores 8 results`, or point {RESULTS_ENV} at a results folder that has them."
    )


# --------------------------------------------------------------------------------------------------------------
# Tables


def table_path(name: str, results: str | Path | None = None) -> Path:
    return Path(paths.table(results_root(results), name))


def table(name: str, results: str | Path | None = None, *, text: Sequence[str] = ()) -> pd.DataFrame:
    """results/tables/<name>.csv; a missing table names the file and the command that builds it.

    ``text``: columns to keep as written (a value printed as "5e-02" must not come back as 0.05).
    """
    path = table_path(name, results)
    if not path.is_file():
        raise missing_result(path)
    return pd.read_csv(path, dtype={column: str for column in text})


def baselines(results: str | Path | None = None) -> pd.DataFrame:
    """tables/baselines.csv: unigram and Kneser-Ney perplexity of each corpus and split (rule baseline_tables)."""
    return table("baselines", results)


def agreement_baselines(results: str | Path | None = None) -> pd.DataFrame:
    """tables/agreement_baselines.csv: chance and the nearest-noun heuristic per head-verb distance."""
    return table("agreement_baselines", results)


# --------------------------------------------------------------------------------------------------------------
# Provenance


def provenance_files(results: str | Path | None = None) -> list[Path]:
    """Every provenance record under results/: tables, book figures, then studies, each sorted by name."""
    root = Path(results_root(results))
    return (
        sorted(root.glob("tables/*.provenance.json"))
        + sorted(root.glob("figures/*.provenance.json"))
        + sorted(root.glob("studies/*/*.provenance.json"))
    )


def provenance_table(results: str | Path | None = None) -> pd.DataFrame:
    """One row per provenance record: the output it describes (relative to results/) and what made it."""
    root = Path(results_root(results))
    rows = []
    for path in provenance_files(root):
        record = json.loads(path.read_text(encoding="utf-8"))
        rows.append(
            {
                "record": path.relative_to(root).as_posix(),
                "producer": record.get("producer", ""),
                "config_hash": record.get("config_hash", ""),
                "config_files": " ".join(record.get("config_files", [])),
                "git_commit": record.get("git_commit", ""),
                "command": record.get("command", ""),
                "created": record.get("created", ""),
            }
        )
    return pd.DataFrame(
        rows, columns=["record", "producer", "config_hash", "config_files", "git_commit", "command", "created"]
    )


def package_versions(results: str | Path | None = None) -> pd.DataFrame:
    """Package versions across all records: one row per package, every version seen (one, when consistent)."""
    seen: dict[str, list[str]] = {}
    for path in provenance_files(results):
        for package, version in json.loads(path.read_text(encoding="utf-8")).get("packages", {}).items():
            versions = seen.setdefault(package, [])
            if version not in versions:
                versions.append(version)
    rows = [{"package": p, "version": ", ".join(v), "consistent": len(v) == 1} for p, v in seen.items()]
    return pd.DataFrame(rows, columns=["package", "version", "consistent"])


# --------------------------------------------------------------------------------------------------------------
# Studies: whatever results/studies/* holds, so a study added to the config is read with no edit.


def study_names(results: str | Path | None = None) -> list[str]:
    """Studies with a summary under results/studies/, sorted by name."""
    root = Path(results_root(results)) / "studies"
    return sorted(p.parent.name for p in root.glob("*/summary.csv"))


def study_summary(study: str, results: str | Path | None = None) -> pd.DataFrame:
    path = Path(paths.study_summary(results_root(results), study))
    if not path.is_file():
        raise missing_result(path)
    return pd.read_csv(path)


def study_about(study: str, results: str | Path | None = None) -> dict[str, Any]:
    """The study's study.json: name, description, family, corpus, metric, vary, fixed, seeds, run_ids."""
    path = Path(paths.study_record(results_root(results), study))
    if not path.is_file():
        raise missing_result(path)
    about = json.loads(path.read_text(encoding="utf-8"))
    if not about.get("description"):
        metric = METRIC_LABELS.get(about["metric"], about["metric"])
        against = f" against {about['vary'][0]}" if about.get("vary") else ""
        about["description"] = (
            f"{FAMILY_NAMES.get(about['family'], about['family'])} on the {about['corpus']} corpus: {metric}{against}"
        )
    return about


# --------------------------------------------------------------------------------------------------------------
# Analyses: results/analyses/*, each with its analysis.json and the tables rule decay_analysis writes.


def analysis_names(results: str | Path | None = None) -> list[str]:
    """Analyses with a record under results/analyses/, sorted by name."""
    root = Path(results_root(results)) / "analyses"
    return sorted(p.parent.name for p in root.glob("*/analysis.json"))


def analysis_record(name: str, results: str | Path | None = None) -> dict[str, Any]:
    """The analysis's analysis.json: kind, network, keys, vary, fixed, measure, description, ..."""
    return json.loads(Path(paths.analysis_record(results_root(results), name)).read_text(encoding="utf-8"))


def analysis_table(
    name: str, table_name: str, results: str | Path | None = None, *, text: Sequence[str] = ()
) -> pd.DataFrame:
    """results/analyses/<name>/<table_name>.csv (curves, rates, passage).

    ``text``: columns to keep as written (a snapshot "0" is a name, not a number; so is a run id).
    """
    return pd.read_csv(paths.analysis_table(results_root(results), name, table_name), dtype={c: str for c in text})
