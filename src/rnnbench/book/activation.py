"""The values of the chapter "Which activation?" (reports/activation.qmd): the activation studies side by side from
tables/activation.csv (rule activation_figure, rnnbench.results.activation), the untrained networks' per-step factors
of the analyses the sigmoid's quarter is judged on, and the claims' verdicts.

    runs / figure         the table, and its figure staged into the book
    study_of              the first activation study on a corpus (or on any other corpus): the chapter's two kinds
    corpus_name / starts  how the prose names a study's corpus; the starts of U trained from
    setting / outcomes    one activation from one start in one study: its outcomes counted, its means over the runs
                          that learned, its share of steps clipped over every run; its outcomes as a table cell
    outcome_table         every setting as the chapter's table prints it
    clip_differs          whether the threshold acted differently on a study's activations (a confounded comparison)
    passages              which of the chapter's alternative sentences the results call for (its metadata flags)
    quarter_factors       the per-step factor of the gradient per activation and radius, untrained networks
    verdict / quote       a claim's verdict and the seed's words, from tables/findings.csv
    claim_sections / sections   the appendix sections of a claim's evidence, and of the activation studies

Returns numbers, tables and verdict words; the sentences are the chapter's. No torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.book import recipe_clipping
from rnnbench.book.answers import reading
from rnnbench.book.decay import untrained_rates
from rnnbench.book.figures import STAGING_DIR, book_figure, book_figure_shown
from rnnbench.book.findings import findings, parts
from rnnbench.book.findings import sections as evidence_sections
from rnnbench.book.format import NONE, Markdown, label_slug, share, sig
from rnnbench.book.results import table
from rnnbench.metrics import CLIP_NEVER, CLIP_SPIKES, clip_regime
from rnnbench.results.activation import ACTIVATIONS, DEFAULT_START
from rnnbench.results.outcome import DIVERGED

CORPUS_NAMES = {"ptb": "PTB"}  # a table names a corpus so; others by their own name
AGREEMENT = "agreement"


def runs(results: str | Path | None = None) -> pd.DataFrame:
    """tables/activation.csv: one row per run of every activation study (rnnbench.results.activation.COLUMNS)."""
    return table(paths.ACTIVATION, results)


def figure(results: str | Path | None = None, staging: str | Path = STAGING_DIR) -> str | None:
    """figures/activation (rule activation_figure), staged into the book: the path an image's markdown names; None
    where it draws too little to be a figure (rnnbench.book.figures.figure_shown), and the chapter's table stands."""
    if not book_figure_shown(paths.ACTIVATION, results):
        return None
    return book_figure(paths.ACTIVATION, results, staging)


def see(results: str | Path | None = None) -> Markdown:
    """Where a reader sees every run: the chapter's figure, or where it is not shown, its table of outcomes."""
    return Markdown("@fig-activation" if book_figure_shown(paths.ACTIVATION, results) else "@tbl-activation-outcomes")


def study_of(found: pd.DataFrame, corpus: str | None) -> str | None:
    """The first study of ``found`` on ``corpus``, or with ``corpus`` None the first on a corpus other than the
    agreement corpus (a language model's); None where there is none."""
    studies = found.drop_duplicates("study")
    here = studies[studies["corpus"] == corpus] if corpus else studies[studies["corpus"] != AGREEMENT]
    return str(here["study"].iloc[0]) if len(here) else None


@dataclass(frozen=True)
class Setting:
    """One activation from one start of U in one study. Means are over the runs that learned (NaN where none did);
    the share of steps clipped is over every run, whatever its outcome, as it is the recipe's doing."""

    runs: int
    learned: int
    failed: int  # finished, but did not learn
    diverged: int
    diverged_first: float  # the earliest and latest step a run diverged at (NaN where none did)
    diverged_last: float
    steps: float  # to the study's common training loss
    value: float  # the study's speed metric (rnnbench.results.activation.speed_metric)
    silent: float  # share of hidden units silent on the validation split
    clip_min: float
    clip_max: float
    target_ppl: float
    metric: str

    @property
    def clipped(self) -> Markdown:
        """The share of steps clipped, "a–b" over the runs, or the one value."""
        low, high = share(self.clip_min), share(self.clip_max)
        return low if low == high else Markdown(f"{low}–{high}")

    @property
    def diverged_at(self) -> Markdown:
        """The step the runs diverged at, "a–b" over them; – where none did."""
        if not self.diverged:
            return NONE
        low, high = sig(self.diverged_first), sig(self.diverged_last)
        return low if low == high else Markdown(f"{low}–{high}")


def setting(found: pd.DataFrame, study: str | None, activation: str, start: str = DEFAULT_START) -> Setting:
    """The runs of ``activation`` from ``start`` in ``study`` (none, where the study or setting is absent)."""
    here = found[(found["study"] == study) & (found["activation"] == activation) & (found["start"] == start)]
    learned = here[here["outcome"] == "learned"]
    blown = here.loc[here["outcome"] == "diverged", "diverged_step"]

    def mean(column: str) -> float:
        return float(learned[column].mean()) if len(learned) else math.nan

    return Setting(
        runs=len(here),
        learned=len(learned),
        failed=int((~here["outcome"].isin(["learned", "diverged"])).sum()),
        diverged=len(blown),
        diverged_first=float(blown.min()) if len(blown) else math.nan,
        diverged_last=float(blown.max()) if len(blown) else math.nan,
        steps=mean("steps_to_target"),
        value=mean("value"),
        silent=mean("silent_fraction"),
        clip_min=float(here["clipped_fraction"].min()) if len(here) else math.nan,
        clip_max=float(here["clipped_fraction"].max()) if len(here) else math.nan,
        target_ppl=float(here["target_ppl"].iloc[0]) if len(here) else math.nan,
        metric=str(here["metric"].iloc[0]) if len(here) else "",
    )


def starts(found: pd.DataFrame) -> list[str]:
    """The starts of U the studies trained from, the default first."""
    return sorted(set(found["start"]), key=lambda s: (s != DEFAULT_START, s))


def outcomes(s: Setting) -> str:
    """A setting's outcomes as a table cell: "3 learned", "2 learned, 1 did not learn", "3 diverged"."""
    parts = [
        f"{n} {what}" for n, what in ((s.learned, "learned"), (s.failed, "did not learn"), (s.diverged, "diverged"))
    ]
    return ", ".join(p for p in parts if not p.startswith("0 ")) or "–"


def _mean(value: float, digits: int = 3) -> Markdown:
    return NONE if math.isnan(value) else sig(value, digits, plain=True)


def outcome_table(found: pd.DataFrame) -> pd.DataFrame:
    """Every study, start and activation: outcomes counted, the step the diverged runs diverged at, the means over
    the runs that learned (steps to the common loss, the metric, silent units) and the share of steps clipped."""
    rows = []
    for study in dict.fromkeys(found["study"]):
        corpus = str(found.loc[found["study"] == study, "corpus"].iloc[0])
        for start in starts(found[found["study"] == study]):
            for activation in [a for a in ACTIVATIONS if a in set(found["activation"])]:
                s = setting(found, study, activation, start)
                if not s.runs:
                    continue
                rows.append(
                    {
                        "corpus": CORPUS_NAMES.get(corpus, corpus),
                        "start": start,
                        "activation": activation,
                        "runs": outcomes(s),
                        "diverged at step": s.diverged_at,
                        "steps to the loss": _mean(s.steps),
                        "metric": _mean(s.value),
                        "silent units": NONE if math.isnan(s.silent) else share(s.silent),
                        "steps clipped": s.clipped,
                    }
                )
    return pd.DataFrame(rows)


# Clipping as the chapter means it: a threshold that acts on no step or on the rare spike leaves training alone.
RARE = frozenset({CLIP_NEVER, CLIP_SPIKES})


def clip_differs(found: pd.DataFrame, study: str | None) -> bool:
    """Whether the threshold acted differently on the activations of ``study`` (its runs from the default start that
    did not diverge: a diverging run's share of steps clipped is the explosion's): some often or at every step
    (rnnbench.metrics.clip_regime), and not all in the same regime. Then a difference between the activations is
    also one of how often the threshold acted."""
    here = found[(found["study"] == study) & (found["start"] == DEFAULT_START) & (found["outcome"] != DIVERGED)]
    regimes = {clip_regime(f) for f in here["clipped_fraction"].dropna()}
    return bool(regimes - RARE) and len({r if r not in RARE else "rare" for r in regimes}) > 1


@dataclass(frozen=True)
class Passages:
    """Which of the chapter's alternative sentences the results call for (rnnbench.book.conditions)."""

    confounded: bool  # clip_differs on the language-model study
    identity_fewer: bool  # ReLU runs diverged from the identity start, fewer than / as many as / more than
    identity_same: bool  # from the default start
    identity_more: bool
    threshold: recipe_clipping.AgainstTheChapter  # where the recipe's threshold sits on the language-model study


def passages(found: pd.DataFrame, study: str | None, results: str | Path | None = None) -> Passages:
    default, identity = setting(found, study, "relu"), setting(found, study, "relu", "identity")
    return Passages(
        confounded=clip_differs(found, study),
        identity_fewer=identity.diverged < default.diverged,
        identity_same=identity.diverged == default.diverged,
        identity_more=identity.diverged > default.diverged,
        threshold=recipe_clipping.against_the_chapter(
            recipe_clipping.recipe_clipping([study], results) if study else None
        ),
    )


# --------------------------------------------------------------------------------------------------------------
# The sigmoid's quarter, in untrained networks


def quarter_factors(results: str | Path | None = None) -> pd.DataFrame:
    """Per radius of the analyses the sigmoid's claim reads (tables/findings.csv's evidence of sigmoid_quarter): the
    per-step factor exp(rate) of ||dL/dh|| for each activation, seeds averaged (NaN where it was not measured); a
    column per activation, in the chapter's order."""
    evidence = verdict_row("sigmoid_quarter", results)["evidence"]
    names = {item.partition("/")[2] for item in evidence.split(";") if item.strip().startswith("analyses/")}
    rates = untrained_rates(results)
    mine = rates[rates["analyses"].map(lambda listed: bool(names & {n.strip() for n in str(listed).split(",")}))]
    mine = mine[mine["family"] == "rnn"]
    if mine.empty:
        return pd.DataFrame(columns=["radius", *ACTIVATIONS])
    pivot = mine.assign(factor=np.exp(mine["measured"])).pivot_table(
        index="radius", columns="activation", values="factor"
    )
    return pivot.reindex(columns=list(ACTIVATIONS)).reset_index()  # an activation not measured: NaN


# --------------------------------------------------------------------------------------------------------------
# The claims


def verdict_row(claim: str, results: str | Path | None = None) -> pd.Series:
    found = findings(results)
    row = found[found["id"] == claim]
    if row.empty:
        raise KeyError(f"tables/findings.csv has no claim {claim!r}")
    return row.iloc[0]


def verdict(claim: str, results: str | Path | None = None) -> str:
    """The claim's verdict (rnnbench.findings.policy.VERDICTS), read with its parts where it holds in part
    (rnnbench.book.answers.reading)."""
    return reading(str(verdict_row(claim, results)["verdict"]), parts(claim, results)["verdict"])


def quote(claim: str, results: str | Path | None = None) -> Markdown:
    """The seed's words of the claim, as tables/findings.csv holds them (math and all)."""
    return Markdown(str(verdict_row(claim, results)["quote"]))


def corpus_name(found: pd.DataFrame, study: str | None) -> Markdown:
    """How the prose names a study's corpus: "PTB", or the corpus's own name; – where there is no such study."""
    corpus = found.loc[found["study"] == study, "corpus"]
    return Markdown(CORPUS_NAMES.get(corpus.iloc[0], corpus.iloc[0]) if len(corpus) else "–")


def claim_sections(claim: str, results: str | Path | None = None) -> Markdown:
    """The appendix sections that show a claim's evidence, as cross-references (rnnbench.book.findings.sections)."""
    labels = [f"@{label}" for label in evidence_sections(verdict_row(claim, results)["evidence"], results=results)]
    return Markdown(", ".join(labels)) if labels else Markdown("the appendix of verdicts")


def sections(found: pd.DataFrame) -> Markdown:
    """The appendix sections of the activation studies, as cross-references: "@sec-study-a and @sec-study-b"."""
    labels = [f"@sec-study-{label_slug(s)}" for s in dict.fromkeys(found["study"])]
    if len(labels) <= 1:
        return Markdown("".join(labels))
    return Markdown(f"{', '.join(labels[:-1])} and {labels[-1]}")
