"""The seeds' conclusions, computed: each empirical claim of the chapter and the two lessons, the evidence it
reads (studies and analyses found by the role the config gives them), its statistic, a decision rule in one
line, and a verdict computed from the results.

    findings_table(results, roles)   tables/findings.csv: one row per claim (registry.COLUMNS), and the files read
    findings_tables(results, roles)  that, and tables/findings_parts.csv: one row per part of a claim, decided

Modules: policy (the statistical policy: verdicts, tests, margins, intervals), evidence (roles and results),
registry (claims, parts, verdicts, the chapter's QUESTIONS), catalog (every claim, CLAIMS, and the claims each role
serves, ROLES), headline (the number that decides a verdict), and the judges by subject: window, decay, clipping,
truncation, activation, carrying. The workflow's files import `evidence.Roles` alone, so nothing here is imported
until a table is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from rnnbench.findings.evidence import Roles
    from rnnbench.findings.registry import Finding


def findings(results: str | Path, roles: Roles) -> tuple[list[Finding], list[str]]:
    """Every claim judged on the results folder ``results``; and every file read, in order."""
    from rnnbench.findings.catalog import CLAIMS
    from rnnbench.findings.evidence import Evidence
    from rnnbench.findings.registry import judge

    evidence = Evidence(results, roles)
    return [judge(claim, evidence) for claim in CLAIMS], list(evidence.read)


def findings_table(results: str | Path, roles: Roles) -> tuple[pd.DataFrame, list[str]]:
    """tables/findings.csv as a frame (columns registry.COLUMNS), and the files it read."""
    import pandas as pd

    from rnnbench.findings.registry import COLUMNS

    found, read = findings(results, roles)
    return pd.DataFrame([f.row() for f in found], columns=list(COLUMNS)), read


def findings_tables(results: str | Path, roles: Roles) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """tables/findings.csv and tables/findings_parts.csv as frames (registry.COLUMNS, registry.PART_COLUMNS), and
    the files they read."""
    import pandas as pd

    from rnnbench.findings.registry import COLUMNS, PART_COLUMNS

    found, read = findings(results, roles)
    table = pd.DataFrame([f.row() for f in found], columns=list(COLUMNS))
    parts = pd.DataFrame([row for f in found for row in f.part_rows()], columns=list(PART_COLUMNS))
    return table, parts, read
