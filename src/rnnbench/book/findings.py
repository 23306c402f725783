"""What the appendix of verdicts reads (and the first chapter, through rnnbench.book.answers): tables/findings.csv
(rule findings_table), each claim's verdict, the number behind it, and the sections of the book its evidence has.

    findings()            the table, one row per claim, every cell as written (an empty value stays empty)
    verdict_counts(t)     verdict -> how many claims have it, in rnnbench.findings.policy.VERDICTS order
    margins()             the policy's margin of no effect per quantity, as a table
    parts(claim)          tables/findings_parts.csv's decided parts of one claim, by label (empty where none)
    sections(evidence)    the book's labels of the sections a claim's evidence has: a study's section, an
                          analysis's, or the section the chapter's ``tables`` map names for a table

Returns values and labels; the sentences are reports/verdicts.qmd's and reports/answers.qmd's. No torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from rnnbench import paths
from rnnbench.book.format import label_slug
from rnnbench.book.results import missing_result, results_root, study_names
from rnnbench.findings.policy import ALPHA, LEVEL, MARGINS, VERDICTS  # noqa: F401  (the chapter reads LEVEL, ALPHA)
from rnnbench.findings.registry import COLUMNS


def findings(results: str | Path | None = None) -> pd.DataFrame:
    path = Path(paths.table(results_root(results), paths.FINDINGS_TABLE))
    if not path.is_file():
        raise missing_result(path)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: no column {', '.join(missing)}; rebuild it with `snakemake results`")
    return table


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    unknown = sorted(set(table["verdict"]) - set(VERDICTS))
    if unknown:
        raise ValueError(f"tables/findings.csv: verdict {', '.join(map(repr, unknown))}; known: {', '.join(VERDICTS)}")
    return {v: int((table["verdict"] == v).sum()) for v in VERDICTS}


def parts(claim: str, results: str | Path | None = None) -> pd.DataFrame:
    """The decided parts of ``claim`` (rule findings_table's tables/findings_parts.csv), indexed by their label."""
    path = Path(paths.table(results_root(results), paths.FINDINGS_PARTS_TABLE))
    if not path.is_file():
        raise missing_result(path)
    table = pd.read_csv(path, keep_default_na=False, dtype={"part": str, "verdict": str, "note": str})
    return table[table["id"] == claim].set_index("part")


def parts_true_by_construction(table: pd.DataFrame, results: str | Path | None = None) -> int:
    """How many parts of the claims of ``table`` whose own verdict was measured are true by construction."""
    path = Path(paths.table(results_root(results), paths.FINDINGS_PARTS_TABLE))
    if not path.is_file():
        raise missing_result(path)
    found = pd.read_csv(path, keep_default_na=False, dtype=str)
    measured = set(table.loc[table["verdict"] != "true by construction", "id"])
    return int((found["id"].isin(measured) & (found["verdict"] == "true by construction")).sum())


def margins() -> pd.DataFrame:
    """quantity, margin (as the rules print it: "2%" of the reference mean, or in the quantity's units)."""
    return pd.DataFrame(
        {
            "quantity": list(MARGINS),
            "margin": [f"{m} of the reference mean" if m.relative else str(m) for m in MARGINS.values()],
        }
    )


def sections(evidence: str, tables: Mapping[str, str] | None = None, results: str | Path | None = None) -> list[str]:
    """Labels of the sections that show a claim's evidence ("studies/x; analyses/y; tables/z.csv"), each once,
    only those this book has: a study with results, a gradient-decay analysis, a table ``tables`` maps."""
    import json

    labels = []
    studies = set(study_names(results))
    for item in (part.strip() for part in evidence.split(";")):
        kind, _, name = item.partition("/")
        if kind == "studies" and name in studies:
            labels.append(f"sec-study-{label_slug(name)}")
        elif kind == "analyses" and name:
            record = Path(paths.analysis_record(results_root(results), name))
            if record.is_file() and json.loads(record.read_text(encoding="utf-8")).get("kind") == "gradient_decay":
                labels.append(f"sec-analysis-{label_slug(name)}")
        elif kind == "tables" and tables and item in tables:
            labels.append(tables[item])
    return list(dict.fromkeys(labels))
