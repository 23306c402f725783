"""How often the default recipe's clipping acted, in the studies that keep it (every study without the clipping role):
their runs' threshold, the share of each run's steps clipped, its median pre-clip norm and the regime that puts it in
(rnnbench.metrics.clip_regime). The chapters that read those runs (the studies, the published numbers, gradient
decay) state it beside them.

Reads results only (rnnbench.book.results); no torch.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rnnbench.book.clipping import CLIPPING_ROLE, run_setting
from rnnbench.book.format import NONE, Markdown, integer, share, sig, words
from rnnbench.book.results import study_about, study_names, study_summary
from rnnbench.metrics import CLIP_EVERY_STEP, CLIP_NEVER, CLIP_OFTEN, CLIP_SPIKES, clip_regime
from rnnbench.results.ablations import per_run
from rnnbench.results.outcome import DIVERGED

REGIME_ORDER = (CLIP_NEVER, CLIP_SPIKES, CLIP_OFTEN, CLIP_EVERY_STEP)


@dataclass(frozen=True)
class RecipeClipping:
    """How often the threshold acted in the clipped runs of some studies: their thresholds, the lowest and highest
    share of a run's steps clipped and median pre-clip norm, and how many runs fall in each regime (REGIME_ORDER,
    only the regimes some run is in)."""

    studies: tuple[str, ...]
    runs: int
    thresholds: tuple[float, ...]
    share_min: float
    share_max: float
    median_min: float
    median_max: float
    regimes: tuple[tuple[str, int], ...]  # (regime, runs in it)


def recipe_runs(studies: Sequence[str], results: str | Path | None = None) -> pd.DataFrame:
    """Every run of ``studies`` that clips at a finite threshold, once: study, run_id, outcome, clip (the threshold it
    clipped at: metrics.json's clip_threshold, else its config.json's), clipped_fraction, grad_norm_median."""
    frames = []
    for study in studies:
        wide = per_run(study_summary(study, results), ["outcome"])
        for key in ("clip_threshold", "clipped_fraction", "grad_norm_median"):
            if key not in wide:
                wide[key] = math.nan
        threshold = [
            t if not math.isnan(t) else _configured_threshold(run, results)
            for run, t in zip(wide["run_id"], wide["clip_threshold"], strict=True)
        ]
        frames.append(wide.assign(study=study, clip=threshold))
    columns = ["study", "run_id", "outcome", "clip", "clipped_fraction", "grad_norm_median"]
    if not frames:
        return pd.DataFrame(columns=columns)
    table = pd.concat(frames, ignore_index=True).drop_duplicates("run_id")[columns]
    return table[table["clip"].notna() & table["clip"].lt(math.inf)].reset_index(drop=True)


def _configured_threshold(run_id: str, results: str | Path | None) -> float:
    """A run's threshold from its config.json where its metrics.json records none: NaN unclipped or unknown."""
    mode, clip = run_setting(run_id, "clip_mode", results), run_setting(run_id, "clip", results)
    if mode in (None, "none") or clip is None:
        return math.nan
    return float(clip)


def recipe_clipping(studies: Sequence[str], results: str | Path | None = None) -> RecipeClipping | None:
    """The clipping of ``studies``' runs that did not diverge (recipe_runs); None where none of them clips. A run that
    diverged clipped on its way to blowing up: its share of steps clipped is the explosion's, not where the threshold
    sits against a typical norm."""
    runs = recipe_runs([s for s in studies if s in study_names(results)], results)
    runs = runs[runs["clipped_fraction"].notna() & runs["outcome"].ne(DIVERGED)]
    if runs.empty:
        return None
    found = [clip_regime(f) for f in runs["clipped_fraction"]]
    return RecipeClipping(
        studies=tuple(dict.fromkeys(runs["study"])),
        runs=len(runs),
        thresholds=tuple(sorted(set(runs["clip"]))),
        share_min=float(runs["clipped_fraction"].min()),
        share_max=float(runs["clipped_fraction"].max()),
        median_min=float(runs["grad_norm_median"].min()),
        median_max=float(runs["grad_norm_median"].max()),
        regimes=tuple((r, found.count(r)) for r in REGIME_ORDER if r in found),
    )


def recipe_studies(results: str | Path | None = None) -> list[str]:
    """The studies here that are not about clipping (no clipping role): they clip as the run block says."""
    return [s for s in study_names(results) if CLIPPING_ROLE not in study_about(s, results).get("roles", [])]


def recipe_display(results: str | Path | None = None) -> pd.DataFrame:
    """Per study of recipe_studies whose runs clip: its threshold(s), runs, the share of steps clipped and the median
    pre-clip norm (lowest–highest over its runs), and the regimes its runs fall in."""
    rows = []
    for study in recipe_studies(results):
        found = recipe_clipping([study], results)
        if found is None:
            continue
        rows.append(
            {
                "study": Markdown(f"`{study}`"),
                "threshold": Markdown(", ".join(str(sig(t, plain=True)) for t in found.thresholds)),
                "runs": found.runs,
                "steps clipped": _range(share(found.share_min), share(found.share_max)),
                "median norm": _range(sig(found.median_min, plain=True), sig(found.median_max, plain=True)),
                "regime": Markdown(", ".join(f"{r} ({n})" for r, n in found.regimes)),
            }
        )
    return pd.DataFrame(rows, columns=["study", "threshold", "runs", "steps clipped", "median norm", "regime"])


def _range(lo: str, hi: str) -> Markdown:
    return Markdown(lo if lo == hi else f"{lo}–{hi}")


def tally(found: RecipeClipping | None) -> Markdown:
    """Runs per regime, as prose: "41 every step, 18 often and 20 rare spikes"; – where no run clipped."""
    if found is None:
        return NONE
    return words([f"{integer(n)} {regime}" for regime, n in found.regimes])


def studies_named(cells: Iterable[object]) -> list[str]:
    """The study names of a table's ``studies`` column (tables/comparison.csv: a run that serves several studies
    names them separated by commas), each once, in order."""
    names = [name.strip() for cell in cells if isinstance(cell, str) for name in cell.split(",")]
    return list(dict.fromkeys(n for n in names if n))


# Whether the runs clipped as the chapter's remedy does (rare spikes, or never), all of them, none, or some.
AS_THE_CHAPTER, NOT_AS_THE_CHAPTER, PARTLY_AS_THE_CHAPTER = "as the chapter", "not as the chapter", "partly"


@dataclass(frozen=True)
class AgainstTheChapter:
    """chapter_verdict as the flags of a chapter's alternative sentences (rnnbench.book.conditions)."""

    as_the_chapter: bool  # every clipped run was rescaled at rare spikes only
    partly: bool
    not_as_the_chapter: bool  # every one often or at every step
    unclipped: bool  # no run clipped at a finite threshold


def against_the_chapter(found: RecipeClipping | None) -> AgainstTheChapter:
    verdict = chapter_verdict(found)
    return AgainstTheChapter(
        as_the_chapter=verdict == AS_THE_CHAPTER,
        partly=verdict == PARTLY_AS_THE_CHAPTER,
        not_as_the_chapter=verdict == NOT_AS_THE_CHAPTER,
        unclipped=verdict == "",
    )


def chapter_verdict(found: RecipeClipping | None) -> str:
    """AS_THE_CHAPTER where every run clipped rare spikes or nothing, NOT_AS_THE_CHAPTER where every run clipped
    often or every step, else PARTLY_AS_THE_CHAPTER; "" where no run clipped (None)."""
    if found is None:
        return ""
    rare = {CLIP_NEVER, CLIP_SPIKES}
    least, most = clip_regime(found.share_min), clip_regime(found.share_max)
    if most in rare:
        return AS_THE_CHAPTER
    return NOT_AS_THE_CHAPTER if least not in rare else PARTLY_AS_THE_CHAPTER
