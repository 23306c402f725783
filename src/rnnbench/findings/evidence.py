"""What the findings read: the config's studies and analyses by role, and their results.

A claim never names a study: it asks for a role (``roles: [clipping]`` on a study in the config), and gets
every study or analysis that carries it, whatever it is called. `Roles` is that map, taken from the config
(or from the findings rule's params, as JSON); `Evidence` reads the results of what it names, laid out as
rnnbench.paths says:

    runs(study)          one row per run: run_id, seed, the study's settings (varied, or fixed in study.json),
                         outcome (rnnbench.results.outcome), and one column per metric of its summary
    study_extra(study, kind)   a study's extra table (studies/<study>/<kind>.csv: units, ...)
    run_config(run_id)   a run's resolved settings (config.json), for a setting its study's record leaves out
    accuracy(run_id)     a run's agreement accuracy per head-verb distance (runs/<run_id>/agreement.csv, test split)
    rates(name), curves(name), analysis_table(name, kind), analysis(name)   an analysis's tables and its record
    table(name)          tables/<name>.csv

Pure pandas: the job that writes tables/findings.csv imports this, and nothing here needs torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from rnnbench import paths
from rnnbench.training.stuck_columns import stuck

if TYPE_CHECKING:
    from rnnbench.config.settings import Config

LEARNED = "learned"


@dataclass(frozen=True)
class Roles:
    """role -> the studies (and analyses) that carry it, in config order; and whether the worked tables and the
    comparison's tables exist."""

    studies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    analyses: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    worked: bool = True
    comparison: bool = False

    @classmethod
    def from_config(cls, config: Config) -> Roles:
        studies: dict[str, list[str]] = {}
        for name, study in config.studies.items():
            for role in study.roles:
                studies.setdefault(role, []).append(name)
        analyses: dict[str, list[str]] = {}
        for name, analysis in config.analyses.items():
            for role in analysis.roles:
                analyses.setdefault(role, []).append(name)
        return cls(
            {r: tuple(v) for r, v in studies.items()},
            {r: tuple(v) for r, v in analyses.items()},
            bool(config.tables.get("worked", True)),
            bool(config.comparison),
        )

    def record(self) -> dict[str, Any]:
        """As JSON (the findings rule's params): {"studies": {role: [names]}, "analyses": {...}, "worked": bool,
        "comparison": bool}."""
        return {
            "studies": {r: list(v) for r, v in self.studies.items()},
            "analyses": {r: list(v) for r, v in self.analyses.items()},
            "worked": self.worked,
            "comparison": self.comparison,
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Roles:
        return cls(
            {r: tuple(v) for r, v in record.get("studies", {}).items()},
            {r: tuple(v) for r, v in record.get("analyses", {}).items()},
            bool(record.get("worked", True)),
            bool(record.get("comparison", False)),
        )

    def study_names(self) -> list[str]:
        return list(dict.fromkeys(n for names in self.studies.values() for n in names))

    def analysis_names(self) -> list[str]:
        return list(dict.fromkeys(n for names in self.analyses.values() for n in names))


def _missing(path: Path | str) -> FileNotFoundError:
    return FileNotFoundError(f"{path} not found: the findings read finished results (snakemake results)")


class Evidence:
    """The results of one folder, found through `Roles`. Reads each file once and remembers it."""

    def __init__(self, results: str | Path, roles: Roles):
        self.results, self.roles = str(results), roles
        self._cache: dict[tuple[str, str], Any] = {}
        self.read: list[str] = []  # every file read, in order: the provenance record's inputs

    def studies(self, role: str) -> tuple[str, ...]:
        return tuple(self.roles.studies.get(role, ()))

    def analyses(self, role: str) -> tuple[str, ...]:
        return tuple(self.roles.analyses.get(role, ()))

    def _load(self, kind: str, path: str, reader) -> Any:
        key = (kind, path)
        if key not in self._cache:
            if not Path(path).is_file():
                raise _missing(path)
            self._cache[key] = reader(path)
            self.read.append(path)
        return self._cache[key]

    def _csv(self, path: str, **options) -> pd.DataFrame:
        return self._load("csv", path, lambda p: pd.read_csv(p, **options))

    def _json(self, path: str) -> dict[str, Any]:
        return self._load("json", path, lambda p: json.loads(Path(p).read_text(encoding="utf-8")))

    # Studies

    def study(self, name: str) -> dict[str, Any]:
        """The study's record (study.json): family, corpus, metric, vary, fixed, seeds, run_ids."""
        return self._json(paths.study_record(self.results, name))

    def runs(self, name: str) -> pd.DataFrame:
        """One row per run of study ``name``: run_id, seed, each setting the study varies or fixes (from its
        record), outcome, and one column per metric of its summary (NaN where a run reports none)."""
        record = self.study(name)
        summary = self._csv(paths.study_summary(self.results, name))
        keys = [c for c in summary.columns if c not in ("metric", "value")]
        runs = summary.drop_duplicates("run_id")[keys]
        wide = summary.pivot_table(index="run_id", columns="metric", values="value", aggfunc="first", dropna=False)
        runs = runs.merge(wide.reset_index(), on="run_id", how="left")
        for key, value in record.get("fixed", {}).items():
            if key not in runs.columns and not isinstance(value, (dict, list)):
                runs[key] = value
        if "outcome" not in runs.columns:  # a summary from before outcomes were judged: nothing is evidence
            runs["outcome"] = "unknown"
        if {"test_ppl", "test_column_worst", "test_column_median"} <= set(runs.columns):
            # A test perplexity that is one evaluation column's doing is shown in the book, never compared: the
            # studies' tables leave it out of their means (rnnbench.results.ablations), and so do the claims.
            held = [stuck(w, m) for w, m in zip(runs["test_column_worst"], runs["test_column_median"], strict=True)]
            runs.loc[held, "test_ppl"] = math.nan
        return runs.assign(study=name).reset_index(drop=True)

    def study_extra(self, name: str, kind: str) -> pd.DataFrame:
        """A study's extra table of ``kind`` (rnnbench.paths.EXTRA_TABLES), e.g. its units.csv."""
        return self._csv(paths.study_extra_table(self.results, name, kind))

    def run_config(self, run_id: str) -> dict[str, Any]:
        """A run's resolved settings (runs/<run_id>/config.json), for a setting its study's record leaves out."""
        return self._json(paths.run_config(self.results, run_id))

    def accuracy(self, run_id: str) -> pd.DataFrame:
        """A run's agreement accuracy per head-verb distance on the test split: distance, n, accuracy."""
        table = self._csv(paths.run_agreement(self.results, run_id))
        if "split" in table.columns:
            table = table[table["split"] == "test"]
        return table[["distance", "n", "accuracy"]].sort_values("distance").reset_index(drop=True)

    # Analyses

    def analysis(self, name: str) -> dict[str, Any]:
        return self._json(paths.analysis_record(self.results, name))

    def rates(self, name: str) -> pd.DataFrame:
        return self._csv(paths.analysis_table(self.results, name, "rates"), dtype={"snapshot": str})

    def curves(self, name: str) -> pd.DataFrame:
        return self._csv(paths.analysis_table(self.results, name, "curves"), dtype={"snapshot": str})

    def analysis_table(self, name: str, kind: str) -> pd.DataFrame:
        """Any other table of an analysis (analyses/<name>/<kind>.csv), e.g. a decoding probe's."""
        return self._csv(paths.analysis_table(self.results, name, kind), dtype={"snapshot": str})

    # Tables

    def table(self, name: str) -> pd.DataFrame:
        return self._csv(paths.table(self.results, name))


def learned(runs: pd.DataFrame) -> pd.DataFrame:
    """The runs that are evidence: those that learned (rnnbench.results.outcome); a run that diverged or did not learn
    never is."""
    return runs[runs["outcome"] == LEARNED]
