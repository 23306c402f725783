"""What the chapter "Against the published numbers" (reports/published.qmd) reads: the comparison tables
of rule comparison (rnnbench.results.beside_published, crossover, learning_curves) shaped for the page, the
values its sentences print, and the sections the configuration adds (one per corpus).

    results/tables/comparison.csv          published rows and ours (every run of the config's comparison studies)
    results/tables/crossover.csv           both families on one corpus, perplexity against parameter count
    results/tables/matched_parameters.csv  the RNN model matched to each feed-forward model's parameter count
    results/tables/matched_time.csv        ... and at its training time

Like the rest of rnnbench.book, nothing here trains or imports torch; every number shown is read from those tables.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.book.figures import STAGING_DIR, book_figure
from rnnbench.book.format import NONE, Markdown, cell_sig, code, counted, escape, integer, markdown_table, sig
from rnnbench.book.reference_results import reference_runs
from rnnbench.book.results import results_root, table
from rnnbench.metrics import FAMILY_NAMES

SCALE_NAMES = {"paper": "paper-config", "short": "short"}
STATUS_TEXT = {
    "converged": "converged",
    "epoch cap": "stopped at its epoch cap",
    "subset": "measured on part of the test split",
    "diverged": "diverged",
    "stuck column": "its test perplexity one evaluation column's doing",
}
CORPUS_NAMES = {"ptb": "Penn Treebank", "brown": "Brown"}
CORPUS_SHORT = {"ptb": "PTB", "brown": "Brown"}


def ppl(value: Any) -> Markdown:
    """A perplexity to one decimal, as the papers print theirs (124.7, not 125; a measured 116.95 is 117.0); a
    whole number as printed, without it (Bengio's 268)."""
    if pd.isna(value):
        return NONE
    value = float(value)
    return Markdown(f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}")


def has_comparison(results: Any = None) -> bool:
    """Whether this results folder holds the comparison (its config names studies for it)."""
    return all(Path(paths.table(results_root(results), name)).is_file() for name in paths.COMPARISON_TABLES)


def comparison(results: Any = None) -> pd.DataFrame:
    text = ["table", "page", "status", "studies", "scale", "kn_model", "departures", "direct", "optimizer", "cite_key"]
    frame = table("comparison", results, text=text)
    if "cite_key" not in frame:  # a table written before the published rows carried their keys: cited by name
        frame["cite_key"] = ""
    return frame.fillna({"page": "", "table": "", "scale": "", "kn_model": "", "departures": "", "cite_key": ""})


def ours(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["origin"] != "published"]


def published_rows(frame: pd.DataFrame, corpus: str) -> pd.DataFrame:
    """The published rows of ``corpus``."""
    return frame[(frame["origin"] == "published") & (frame["corpus"] == corpus)]


def trained_here(frame: pd.DataFrame) -> pd.DataFrame:
    """Our runs of this results folder's config: all of ours but the reference runs kept in the repository."""
    return frame[(frame["origin"] == "ours") & (frame["scale"] != "reference")]


def scale_of(frame: pd.DataFrame) -> str:
    """paper or short: the scale of this folder's runs (one config, one scale)."""
    scales = set(trained_here(frame)["scale"])
    return scales.pop() if len(scales) == 1 else "mixed"


def short_cite(source: str) -> str:
    """'Mikolov, Deoras, ... (2011), Empirical ...' -> 'Mikolov et al. (2011)'."""
    match = re.match(r"\s*([^,]+),[^(]*\((\d{4})\)", source)
    return f"{match.group(1)} et al. ({match.group(2)})" if match else source.split(",")[0]


def citation(source: str, key: str) -> Markdown:
    """A published row's paper as the book cites it: its bibliography key (@mikolov2011, which the book renders
    as "Mikolov et al. (2011)" and lists under References), or its short name where the row has no key."""
    return Markdown(f"@{key}") if key else escape(short_cite(source))


def best_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Our run with the lowest validation perplexity per corpus and family (chosen without the test split)."""
    measured = trained_here(frame)[trained_here(frame)["status"] != "diverged"].dropna(subset=["valid_ppl"])
    picks = measured.sort_values("valid_ppl", kind="stable").groupby(["corpus", "family"], sort=False).head(1)
    return picks.sort_values(["corpus", "family"], kind="stable")


def corpus_rows(frame: pd.DataFrame, corpus: str) -> pd.DataFrame:
    """The chapter's table for one corpus: every published row, then our best run of each family; each with its
    ratio to the Kneser-Ney model of its own split (its paper's, or ours; kn_name says which model, for the
    header where every row names the same), and ours with its ratio to the published row it stands against,
    which its model cell names. A reference result names its seeds and their range; its commit is in
    reference/."""
    theirs = published_rows(frame, corpus)
    mine = best_runs(frame)
    mine = mine[mine["corpus"] == corpus]
    rows = []
    for row in theirs.itertuples():
        where = [citation(row.source, row.cite_key)] + [escape(p) for p in (row.table, _page(row.page)) if p]
        rows.append(
            {
                "model": escape(row.model),
                "measured by": Markdown(", ".join(where)),
                "test_ppl": row.test_ppl,
                "ratio": None,
                "over_kn": row.ratio_to_kn,
                "kn_name": _kn_name(row.kn_model),
            }
        )
    for row in reference_runs(frame).itertuples():
        if row.corpus != corpus:
            continue
        spread = f"mean of seeds {row.seeds}, {ppl(row.test_min)} to {ppl(row.test_max)}"
        rows.append(
            {
                "model": Markdown(
                    f"**ours, trained to convergence{', modern recipe' if _carried(row) else ''}**: "
                    f"{escape(row.description)}{_against(row.reference_model)}"
                ),
                "measured by": Markdown(f"{escape(row.epochs)} epochs, {escape(row.status)}; {escape(spread)}"),
                "test_ppl": row.test_ppl,
                "ratio": Markdown(cell_sig(row.ratio))
                if pd.notna(row.ratio)
                else Markdown(escape(row.comparable.split(":")[0])),  # the reason in full: the section below
                "over_kn": row.ratio_to_kn,
                "kn_name": _kn_name(row.kn_model),
            }
        )
    for row in mine.itertuples():
        against = _against(row.reference_model) if pd.notna(row.ratio_to_reference) else ""
        label = Markdown(f"**ours, {SCALE_NAMES.get(row.scale, row.scale)}**: {escape(row.description)}{against}")
        epochs = f"{counted(int(row.epochs), 'epoch')}, {STATUS_TEXT.get(row.status, row.status)}"
        rows.append(
            {
                "model": label,
                "measured by": Markdown(escape(epochs)),  # the run itself: its id in the appendix's run tables
                "test_ppl": row.test_ppl,
                "ratio": row.ratio_to_reference,
                "over_kn": row.ratio_to_kn,
                "kn_name": _kn_name(row.kn_model),
            }
        )
    return pd.DataFrame(rows, columns=["model", "measured by", "test_ppl", "ratio", "over_kn", "kn_name"])


def _carried(row: Any) -> bool:
    """Whether a reference row's recipe carries another's further (its study's departs_from)."""
    return bool(getattr(row, "departs_from", ""))


def _kn_name(model: Any) -> str:
    """A Kneser-Ney model's name as the papers write it (KN5); blank where a row has none."""
    return str(model).upper() if pd.notna(model) else ""


def _against(reference_model: Any) -> str:
    """The words a row of ours ends on that name the published row its ratio is to; none where it has none."""
    return f"; set against {escape(reference_model)}" if pd.notna(reference_model) else ""


def _page(page: Any) -> str:
    text = str(page).strip()
    return f"p. {text.removesuffix('.0')}" if text and text != "nan" else ""


def sources(frame: pd.DataFrame, corpus: str) -> Markdown:
    """The full source of each published row of ``corpus``, once each."""
    theirs = published_rows(frame, corpus)
    return Markdown("; ".join(escape(s) for s in dict.fromkeys(theirs["source"])))


# The comparison's scales (rnnbench.config.comparison): runs trained to convergence, and the default run's short ones.
CONVERGED_SCALES = ("reference", "paper")
SHORT_SCALE = "short"


@dataclass(frozen=True)
class Matched:
    """Our RNN models against our feed-forward models at matched cost (parameters or training seconds), as
    rnnbench.results.crossover.matched_cost reads it, each model the mean of its seeds; the chapter words it.

    The headline is the feed-forward model with the lowest validation perplexity among those matched by an RNN
    model (rnnbench.results.matching: costs within its TOLERANCE; chosen without the test split); an unmatched model
    gets no RNN value (nothing is interpolated), so the headline fields are NaN when nothing is matched.
    """

    by: str  # "parameters" or "train_seconds"
    spanned: int  # feed-forward models matched by an RNN model's cost
    unmatched: int  # feed-forward models no RNN model matches
    rnn_lower: int  # matched models whose RNN match has the lower perplexity
    advantage_min: float  # feed-forward minus RNN perplexity, over the matched models
    advantage_max: float
    context: float  # the headline model's n-1, H and cost
    hidden: float
    cost: float
    seeds: int  # the seeds its mean rests on, and those of its RNN match
    rnn_seeds: int
    rnn_hidden: float  # its RNN match's H and cost
    rnn_cost: float
    ff_test_ppl: float  # its mean test perplexity with its seeds' range, and its RNN match's
    ff_test_min: float
    ff_test_max: float
    rnn_test_ppl: float
    advantage: float  # ff_test_ppl - rnn_test_ppl: above 0, the RNN beats it
    ratio: float  # ff_test_ppl / rnn_test_ppl


def matched_numbers(matched: pd.DataFrame, by: str) -> Matched:
    """The numbers the chapter prints about ``matched`` (crossover.matched_cost's table at equal ``by``)."""
    spanned = matched.dropna(subset=["rnn_test_ppl"])
    unmatched = len(matched) - len(spanned)
    if spanned.empty:
        nan = math.nan
        return Matched(by, 0, unmatched, 0, nan, nan, nan, nan, nan, 0, 0, nan, nan, nan, nan, nan, nan, nan, nan)
    best = spanned.sort_values("ff_valid_ppl", kind="stable").iloc[0]
    return Matched(
        by=by,
        spanned=len(spanned),
        unmatched=unmatched,
        rnn_lower=int((spanned["rnn_advantage"] > 0).sum()),
        advantage_min=float(spanned["rnn_advantage"].min()),
        advantage_max=float(spanned["rnn_advantage"].max()),
        context=float(best["context"]),
        hidden=float(best["hidden"]),
        cost=float(best["cost"]),
        seeds=int(best["seeds"]),
        rnn_seeds=int(best["rnn_seeds"]),
        rnn_hidden=float(best["rnn_hidden"]),
        rnn_cost=float(best["rnn_cost"]),
        ff_test_ppl=float(best["ff_test_ppl"]),
        ff_test_min=float(best["ff_test_min"]),
        ff_test_max=float(best["ff_test_max"]),
        rnn_test_ppl=float(best["rnn_test_ppl"]),
        advantage=float(best["rnn_advantage"]),
        ratio=float(best["ratio"]),
    )


def runs_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every run of ours: corpus, model, size, epochs, times and perplexity (the wall time per model)."""
    mine = ours(frame)
    return pd.DataFrame(
        {
            "run": [code(m) for m in mine["model"]],
            "corpus": mine["corpus"].map(lambda c: CORPUS_SHORT.get(c, c)),
            "model": [escape(_short_model(d)) for d in mine["description"]],
            "parameters": mine["parameters"],
            "epochs": mine["epochs"],
            "train_seconds": mine["train_seconds"],
            "job_wall_seconds": mine["job_wall_seconds"],
            "test_ppl": mine["test_ppl"],
        }
    ).reset_index(drop=True)


def _short_model(description: str) -> str:
    """'feed-forward n-gram network, n - 1 = 4, H = 200, d = 100, adaptive softmax, ...' -> 'FF, n - 1 = 4, H = 200, d = 100'."""
    kept = description.split(", adaptive softmax")[0].split(", full softmax")[0]
    for long, short in (("feed-forward n-gram network", "FF"), ("Elman RNN", "RNN"), ("n - 1", "n‑1")):
        kept = kept.replace(long, short)
    return kept


def matched_table(matched_parameters: pd.DataFrame, matched_time: pd.DataFrame) -> pd.DataFrame:
    """One row per feed-forward model (its seeds averaged): its perplexity, and that of the RNN model matched to
    it in parameter count and in training time (rnnbench.results.matching), with the matched RNN's H."""
    by_time = matched_time.set_index("setting")
    rows = []
    for row in matched_parameters.itertuples():
        timed = by_time.loc[row.setting] if row.setting in by_time.index else None
        rows.append(
            {
                "n‑1": row.context,
                "H": row.hidden,
                "seeds": row.seeds,
                "parameters": row.cost,
                "feed-forward": row.ff_test_ppl,
                "RNN H": row.rnn_hidden if pd.notna(row.rnn_test_ppl) else None,
                "RNN at equal parameters": row.rnn_test_ppl,
                "training seconds": timed["cost"] if timed is not None else None,
                "RNN at equal time": timed["rnn_test_ppl"] if timed is not None else None,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "n‑1",
            "H",
            "seeds",
            "parameters",
            "feed-forward",
            "RNN H",
            "RNN at equal parameters",
            "training seconds",
            "RNN at equal time",
        ],
    )


@dataclass(frozen=True)
class Crossover:
    """What the crossover section shows: both families on one corpus, perplexity against parameter count."""

    corpus: str  # its name
    ties: tuple[tuple[float, int, int], ...]  # (1 + H/d, d, H) of each feed-forward (d, H): the analytic tie
    figure: str  # the staged crossover figure
    by_parameters: Matched
    by_time: Matched
    table: Markdown  # every feed-forward run against the RNN matched to its size and to its training time
    # At equal parameters within one training budget: the runs trained to convergence (reference/ or the paper
    # config), and the default run's short runs. A ranking can change sides with training (tables/ranking_by_epoch),
    # so the two are read apart, never pooled.
    converged: Matched
    short: Matched


def crossover(results: Any = None, staging: Any = None) -> Crossover | None:
    """The crossover in practice, or None where the configuration names no corpus for it."""
    table_ = table("crossover", results)
    if table_.empty:
        return None
    by_params, by_time = table("matched_parameters", results), table("matched_time", results)
    ff = table_[table_["family"] == "ff"].dropna(subset=["tie_context"])
    ties = ff[["tie_context", "embed_dim", "hidden"]].drop_duplicates()
    corpus = table_["corpus"].iloc[0]
    return Crossover(
        corpus=CORPUS_NAMES.get(corpus, corpus),
        ties=tuple((float(t), int(d), int(h)) for t, d, h in ties.itertuples(index=False)),
        figure=book_figure(paths.CROSSOVER_FIGURE, results, staging or STAGING_DIR),
        by_parameters=matched_numbers(by_params, "parameters"),
        by_time=matched_numbers(by_time, "train_seconds"),
        converged=matched_numbers(by_params[by_params["scale"].isin(CONVERGED_SCALES)], "parameters"),
        short=matched_numbers(by_params[by_params["scale"] == SHORT_SCALE], "parameters"),
        table=markdown_table(
            matched_table(by_params, by_time),
            formats={c: ppl for c in ("feed-forward", "RNN at equal parameters", "RNN at equal time")}
            | {"training seconds": cell_sig}
            | {"parameters": integer, "n‑1": integer, "H": integer, "seeds": integer},
        ),
    )


def wall_minutes(runs: pd.DataFrame) -> float:
    """The summed wall time of the training jobs of ``runs`` (runs_table), in minutes; NaN when none was timed."""
    timed = runs["job_wall_seconds"].dropna()
    return float(timed.sum() / 60) if len(timed) else math.nan


def learning_display(results: str | Path | None = None) -> pd.DataFrame:
    """The comparison's learning curves (tables/learning_curves.csv) as the book prints them where their figure
    draws too little (every run one epoch): one row per run and finished epoch, its corpus, family, scale and
    seed, the tokens read by the epoch's end and the validation perplexity then."""
    curves = table("learning_curves", results)
    shown = curves[["corpus", "family", "scale", "seed", "epoch", "tokens_seen", "valid_ppl"]].copy()
    shown["family"] = [FAMILY_NAMES.get(f, f) for f in shown["family"]]
    shown["tokens_seen"] = [integer(v) for v in shown["tokens_seen"]]
    shown["valid_ppl"] = [sig(v, plain=True) for v in shown["valid_ppl"]]
    return shown.rename(columns={"tokens_seen": "tokens read", "valid_ppl": "validation perplexity"})
