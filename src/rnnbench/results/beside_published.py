"""Our runs beside the published rows: each of ours with the published row of its corpus and family it is
measured against, and the ratio of their test perplexities where the two can be set against each other.

Inputs are plain data: the published table (`rnnbench.published.load_published`), our runs as
rnnbench.results.runs.our_runs tabulates them, and optionally each corpus's statistics (results/corpora/*.json,
`read_corpus_stats`) and our count-based baselines (tables/baselines.csv, rnnbench.baselines.tables). Every number
in the output is a copy of an input or computed from inputs; none is typed here.

    read_corpus_stats(paths)               corpus name -> its statistics
    comparison_table(published, ours)      published rows and ours side by side, each of ours with the
                                           published row of its corpus and family it is measured against

A run's ``status`` (rnnbench.results.runs) says whether its perplexity can stand beside a published one. A ratio
to a published row is given only where the two vocabularies agree within VOCAB_TOLERANCE: a perplexity is an
average over the words a model must tell apart, so one over a larger vocabulary (fewer rare words merged into
<unk>) is a harder task, not a worse model. The ``comparable`` column says why not.

Two splits of one corpus differ in more than the vocabulary (which texts are tested, how they are cut), so every
perplexity is also a ratio to the Kneser-Ney model of its own corpus and split: a published row's to its paper's
(the row marked ``reference_for`` ngram, e.g. KN5), ours to our baseline of the same order on the split the run
read (``kn_ppl``, ``ratio_to_kn``). Where our run is comparable, ``normalised_ratio`` is our ratio to our KN over
the reference row's ratio to theirs: 1 where ours beats its Kneser-Ney model by as much as the paper's beat its.
``departures`` lists each setting of the paper's recipe (published.csv's recipe columns) our run does not share
(rnnbench.results.departures); our rows carry their own recipe in those columns. A run of a study that departs
from another (its ``departs_from``: a recipe carried beyond the one that reproduced the published row) lists
instead each run setting in which it differs from that study's run of its seed (or its first run).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rnnbench import paths
from rnnbench.published import COLUMNS as PUBLISHED_COLUMNS
from rnnbench.published import RECIPE_NUMBERS, kneser_ney_rows, reference_rows
from rnnbench.results.departures import departure_text, recipe_of, setting_departures
from rnnbench.results.runs import float_or_nan

VOCAB_TOLERANCE = 0.05  # relative difference of |V| up to which two perplexities are set against each other
CORPUS_ORDER = ("ptb", "brown")
DYNAMIC_MODEL = "RNN LM, dynamic evaluation"  # the published row a dynamically evaluated run stands beside
DYNAMIC_SUFFIX = " dynamic"  # a dynamically evaluated run's model name: its run id and this
# Runs whose test perplexity is set against our Kneser-Ney model's: measured on the whole test split, and current.
ON_THE_WHOLE_SPLIT = ("converged", "epoch cap")

COMPARISON_COLUMNS = (
    "corpus",
    "origin",  # published, or ours
    "scale",  # ours: reference (trained to convergence, kept in the repository), paper or short; published: empty
    "model",
    "family",
    "description",
    "test_ppl",
    "valid_ppl",
    "parameters",
    "epochs",
    "train_seconds",
    "job_wall_seconds",
    "status",
    "studies",
    "reference_model",
    "reference_ppl",
    "ratio_to_reference",
    "kn_model",  # the Kneser-Ney model of the row's own corpus and split: its paper's, or our baseline
    "kn_ppl",
    "ratio_to_kn",  # test_ppl / kn_ppl
    "normalised_ratio",  # ours: ratio_to_kn over the reference row's ratio_to_kn
    "departures",  # ours: the settings of the reference row's recipe our run does not share
    "departs_from",  # ours: the study whose recipe this run's changes; departures then lists the settings changed
    "comparable",
    "seed",
    "commit",
    # the published table's description of each row, from its source on (ours fill in theirs)
    *PUBLISHED_COLUMNS[PUBLISHED_COLUMNS.index("source") :],
)


def carried_beyond(rows: pd.DataFrame) -> pd.Series:
    """Which of the comparison's rows are a recipe carried beyond a paper's (their study's departs_from): not runs
    of the paper's recipe, so kept out of what is said of those."""
    if "departs_from" not in rows:
        return pd.Series(False, index=rows.index)
    return rows["departs_from"].fillna("").astype(str).astype(bool)


def read_corpus_stats(paths: Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """corpus name -> its statistics, from the corpus records the workflow writes (results/corpora/*.json)."""
    stats: dict[str, dict[str, Any]] = {}
    for path in paths:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        if "corpus" not in record:
            raise ValueError(f"{path}: not a corpus statistics record (no 'corpus' key)")
        stats[record["corpus"]] = record
    return stats


def vocabulary_agreement(ours: Any, theirs: Any) -> str:
    """ "" when two vocabulary sizes agree within VOCAB_TOLERANCE, else why the perplexities are not comparable."""
    if pd.isna(ours) or pd.isna(theirs):
        return "not comparable: a vocabulary size is unknown"
    change = float(ours) / float(theirs) - 1
    if abs(change) <= VOCAB_TOLERANCE:
        return ""
    return (
        f"not comparable: |V| = {int(ours):,} against {int(theirs):,} ({change:+.1%}; a ratio needs them within "
        f"{VOCAB_TOLERANCE:.0%})"
    )


def comparison_table(
    published: pd.DataFrame,
    ours: pd.DataFrame,
    corpus_stats: Mapping[str, Mapping[str, Any]] | None = None,
    baselines: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Published rows and ours, corpus by corpus (published first, then our paper-scale and short runs).

    Each of our rows carries the published row it is measured against (same corpus and family, marked
    ``reference_for`` in the published table) and the ratio of its test perplexity to that row's.
    ``corpus_stats`` (corpus name -> statistics with train/valid/test_tokens and vocab_size) fills in our
    split beside the paper's (a reference run carries its own, ``ours["corpus_stats"]``, when it has one); only
    corpora that have published rows appear. ``comparable`` is "yes", or why there is no ratio. ``baselines``
    (tables/baselines.csv) gives our Kneser-Ney perplexities; without it, or without the order of the paper's,
    our rows have no ratio to a Kneser-Ney model.
    """
    corpora = [c for c in CORPUS_ORDER if c in set(published["corpus"])]
    corpora += sorted(set(published["corpus"]) - set(corpora))
    references = {(r.corpus, r.reference_for): r for r in reference_rows(published).itertuples()}
    kn = kneser_ney_rows(published)
    theirs_kn = published["corpus"].map({corpus: row.test_ppl for corpus, row in kn.items()}).astype(float)
    theirs = published.assign(
        origin="published",
        scale="",
        parameters=np.nan,
        epochs=np.nan,
        train_seconds=np.nan,
        job_wall_seconds=np.nan,
        status="",
        studies="",
        reference_model="",
        reference_ppl=np.nan,
        ratio_to_reference=np.nan,
        kn_model=published["corpus"].map({corpus: row.model for corpus, row in kn.items()}).fillna(""),
        kn_ppl=theirs_kn,
        ratio_to_kn=published["test_ppl"] / theirs_kn,
        normalised_ratio=np.nan,
        departures="",
        departs_from="",
        comparable="",
        seed=pd.NA,
        commit="",
    )
    mine = []
    for row in ours[ours["corpus"].isin(corpora)].itertuples():
        ref = references.get((row.corpus, row.family))
        stats = getattr(row, "corpus_stats", None) or (corpus_stats or {}).get(row.corpus, {})
        why_not = _why_not_comparable(row, ref, stats)
        comparable = not why_not
        recipe = recipe_of(row.config)
        kn_model, kn_ppl = _our_kneser_ney(baselines, row.config, kn.get(row.corpus))
        ratio_to_kn = row.test_ppl / kn_ppl if row.status in ON_THE_WHOLE_SPLIT else np.nan
        mine.append(
            {
                "corpus": row.corpus,
                "origin": "ours",
                "scale": row.scale,
                "model": row.run_id,
                "family": row.family,
                "description": row.description,
                "test_ppl": row.test_ppl,
                "valid_ppl": row.valid_ppl,
                "parameters": row.parameters,
                "epochs": row.epochs,
                "train_seconds": row.train_seconds,
                "job_wall_seconds": row.job_wall_seconds,
                "status": row.status,
                "studies": row.studies,
                "reference_model": ref.model if ref is not None else "",
                "reference_ppl": ref.test_ppl if ref is not None else np.nan,
                "ratio_to_reference": row.test_ppl / ref.test_ppl if comparable else np.nan,
                "kn_model": kn_model,
                "kn_ppl": kn_ppl,
                "ratio_to_kn": ratio_to_kn,
                "normalised_ratio": _normalised(ratio_to_kn, ref, kn.get(row.corpus), comparable),
                "departures": _departures(row, ours, ref, recipe),
                "departs_from": _base_study(row),
                "comparable": "yes" if comparable else why_not,
                "seed": row.seed,
                "commit": row.commit,
                "source": row.source,
                "cite_key": "",  # a run of ours cites no paper
                "table": "",
                "page": "",
                "split": _our_split(row.corpus, stats),
                "train_tokens": stats.get("train_tokens"),
                "valid_tokens": stats.get("valid_tokens"),
                "test_tokens": stats.get("test_tokens"),
                "vocab_size": stats.get("vocab_size"),
                "counting": _our_counting(row),
                **recipe,
                "checked_against": "",
                "notes": row.stale_reason,
            }
        )
    mine += _dynamic_rows(mine, ours, published, kn)
    mine = pd.DataFrame(mine, columns=list(COMPARISON_COLUMNS))
    families = {f: i for i, f in enumerate(("ff", "rnn", "lstm"))}
    mine = (
        mine.assign(_f=mine["family"].map(families)).sort_values(["_f", "test_ppl"], kind="stable").drop(columns="_f")
    )
    # Published rows keep the order of their paper's table; ours follow, feed-forward first, best first.
    table = pd.concat([theirs[list(COMPARISON_COLUMNS)], mine], ignore_index=True)
    for column in (c for c, (_, whole) in RECIPE_NUMBERS.items() if whole):  # n = 13, not 13.0
        table[column] = table[column].astype("Int64")
    keys = pd.DataFrame(
        {
            "corpus": table["corpus"].map({c: i for i, c in enumerate(corpora)}),
            "origin": (table["origin"] + " " + table["scale"]).map(
                {"published ": 0, "ours reference": 1, "ours paper": 2, "ours short": 3}
            ),
        }
    )
    return table.loc[keys.sort_values(["corpus", "origin"], kind="stable").index].reset_index(drop=True)


def _dynamic_rows(mine: list[dict], ours: pd.DataFrame, published: pd.DataFrame, kn: Mapping) -> list[dict]:
    """A row for each run with a dynamic-evaluation record: its test perplexity learning as it reads, set beside
    the published dynamic row of its corpus, with the record's own static perplexity (batch 1) in its notes."""
    rows = []
    records = dict(zip(ours["run_id"], ours["dynamic"], strict=True))
    for row in mine:
        record = records.get(row["model"])
        if not record or row["origin"] == "published":
            continue
        ref = published[(published["corpus"] == row["corpus"]) & (published["model"] == DYNAMIC_MODEL)]
        value = record.get("dynamic_ppl")
        comparable = row["comparable"] == "yes" and len(ref) and value is not None and not record.get("diverged")
        ratio_to_kn = float_or_nan(value) / row["kn_ppl"] if row["status"] in ON_THE_WHOLE_SPLIT else math.nan
        rows.append(
            {
                **row,
                "model": f"{row['model']}{DYNAMIC_SUFFIX}",
                "description": f"{row['description']}, dynamic evaluation (SGD rate {record.get('lr')})",
                "test_ppl": float_or_nan(value),
                "valid_ppl": math.nan,
                "reference_model": ref["model"].iloc[0] if len(ref) else "",
                "reference_ppl": float(ref["test_ppl"].iloc[0]) if len(ref) else math.nan,
                "ratio_to_reference": float_or_nan(value) / float(ref["test_ppl"].iloc[0]) if comparable else math.nan,
                "ratio_to_kn": ratio_to_kn,
                "normalised_ratio": _normalised(
                    ratio_to_kn, next(ref.itertuples(), None), kn.get(row["corpus"]), comparable
                ),
                # a recipe carried beyond another keeps its departures from that one; else the dynamic row's recipe
                "departures": row["departures"]
                if row["departs_from"]
                else (departure_text(row, ref.iloc[0].to_dict()) if len(ref) else ""),
                "comparable": "yes"
                if comparable
                else (row["comparable"] if row["comparable"] != "yes" else "no record"),
                "notes": f"static at batch 1, same segments: {float_or_nan(record.get('static_ppl')):.1f}",
            }
        )
    return rows


def _departures(row: Any, ours: pd.DataFrame, ref: Any, recipe: Mapping[str, Any]) -> str:
    """The comparison's departures of one run of ours: from its study's base recipe where it names one (the base
    study's run of its seed, or its first), else from its published row's stated recipe ("" without one)."""
    if study := _base_study(row):
        base = ours[ours["studies"].str.split(", ").map(lambda names: study in names)]
        if base.empty:
            return f"its base study {study!r} has no run here"
        same_seed = base[base["seed"] == row.seed]
        return setting_departures(row.config, (same_seed if len(same_seed) else base).iloc[0]["config"])
    return departure_text(recipe, ref._asdict()) if ref is not None else ""


def _base_study(row: Any) -> str:
    """The study whose recipe this run's changes, or "" (a table of runs read before studies could name one has no
    such column)."""
    study = getattr(row, "departs_from", None)
    return study if isinstance(study, str) else ""


def _our_kneser_ney(baselines: pd.DataFrame | None, config: Mapping[str, Any], theirs: Any) -> tuple[str, float]:
    """(model, test perplexity) of our Kneser-Ney baseline on the prepared corpus the run read (its corpus key), of
    the order of the paper's Kneser-Ney row ``theirs``; ("", NaN) where there is no such row or baseline."""
    if baselines is None or theirs is None:
        return "", math.nan
    key = paths.corpus_key(config["corpus"], config.get("corpus_options", {}))
    found = baselines[
        (baselines["corpus_key"] == key)
        & (baselines["split"] == "test")
        & (baselines["order"] == theirs.n)
        & (baselines["model"] != "unigram")
    ]
    if found.empty:
        return "", math.nan
    return str(found["model"].iloc[0]), float(found["perplexity"].iloc[0])


def normalised_ratio(ours: float, our_kn: float, theirs: float, their_kn: float) -> float:
    """Our ratio to our Kneser-Ney model over theirs to their Kneser-Ney model: (ours / our_kn) / (theirs / their_kn)."""
    return (ours / our_kn) / (theirs / their_kn)


def _normalised(ratio_to_kn: float, ref: Any, their_kn: Any, comparable: bool) -> float:
    """A row's normalised ratio (ratio_to_kn = ours / our_kn, already NaN where there is none), or NaN where it has
    no reference row, its paper no Kneser-Ney row, or its perplexity is not comparable with the reference row's."""
    if not comparable or ref is None or their_kn is None:
        return math.nan
    return normalised_ratio(ratio_to_kn, 1.0, ref.test_ppl, their_kn.test_ppl)


def _why_not_comparable(row, ref, stats: Mapping[str, Any]) -> str:
    """ "" when our run's test perplexity can be set against its reference row's, else the reason."""
    if ref is None:
        return "no published row of this family"
    if row.status in ("diverged", "subset", "stale"):
        return {
            "diverged": "diverged",
            "subset": "measured on part of the test split",
            "stale": "stale reference run",
        }[row.status]
    return vocabulary_agreement(stats.get("vocab_size"), ref.vocab_size)


def _our_split(corpus: str, stats: Mapping[str, Any]) -> str:
    if not stats:
        return ""
    counts = " / ".join(f"{int(stats[k]):,}" for k in ("train_tokens", "valid_tokens", "test_tokens"))
    return f"{counts} tokens train / valid / test, |V| = {int(stats['vocab_size']):,}"


def _our_counting(row) -> str:
    """Which test tokens our perplexity averages over (rnnbench.training.evaluate reads the test split as one stream)."""
    skipped = "the first" if row.family != "ff" else f"the first n - 1 = {row.context}"
    return f"every test token but {skipped}, <eos> included, all alike"
