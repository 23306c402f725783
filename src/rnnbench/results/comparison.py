"""Our runs beside the published rows, and test perplexity against parameter count (the crossover in practice).

Inputs are plain data: the published table (`rnnbench.published.load_published`), one record per run
(``{"config": <config.json>, "metrics": <metrics.json>, "scale": "paper" | "short"}``, as `read_run`
returns, optionally with its ``"source"`` folder and the ``"studies"`` it serves), and optionally each
corpus's statistics (results/corpora/*.json) and the training jobs' benchmark table. Every number in the
outputs is a copy of an input or computed from inputs; none is typed here.

    our_runs(records)                      one row per run: settings, status, perplexity, size, time
    with_job_times(ours, benchmarks)       each run's training job's wall time and the run's CPU time beside it
    comparison_table(published, ours)      published rows and ours side by side, each of ours with the
                                           published row of its corpus and family it is measured against
    crossover_table(ours, corpus)          both families' test perplexity against parameter count, with the
                                           analytic crossover of rnnbench.params beside every feed-forward run
    matched_cost(crossover, by)            the RNN's perplexity at each feed-forward run's parameter count
                                           (or training time), read off the RNN curve
    learning_curves(ours, epochs)          each run's validation perplexity epoch by epoch, against the
                                           tokens it has trained on and the seconds it has trained

A run's ``scale``: short (the default config's few epochs), paper (a paper config's runs, trained here) or
reference (paper-scale runs kept in the repository, rnnbench.results.reference). Its ``status`` says whether its
perplexity can stand beside a published one:
    converged   Mikolov's schedule stopped it before its epoch cap (validation stopped improving)
    epoch cap   it ran its full max_epochs: a short run, or one the cap cut off before convergence
                (a run trained on a slice of the training split is a short run too; its description says so)
    subset      it was evaluated on part of the test split (smoke runs): no ratio to a published number,
                though it compares with our other runs of the same config (the same slice)
    diverged    no perplexity
    stuck column  its test perplexity is one evaluation column's doing (rnnbench.training.stuck_columns): shown, never compared
    stale       a reference run whose id the current config and code no longer give (rnnbench.results.reference):
                shown, never set against a published number

A ratio to a published row is given only where the two vocabularies agree within VOCAB_TOLERANCE: a
perplexity is an average over the words a model must tell apart, so one over a larger vocabulary (fewer
rare words merged into <unk>) is a harder task, not a worse model. The ``comparable`` column says why not.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rnnbench.metrics import read_metrics
from rnnbench.params import crossover_context, ff_minus_rnn
from rnnbench.published import COLUMNS as PUBLISHED_COLUMNS
from rnnbench.published import reference_rows
from rnnbench.results.progress import training_progress
from rnnbench.training.stuck_columns import stuck

SCALES = ("reference", "paper", "short")
STATUSES = ("converged", "epoch cap", "subset", "diverged", "stuck column", "stale")
VOCAB_TOLERANCE = 0.05  # relative difference of |V| up to which two perplexities are set against each other
# Runs whose perplexities compare with each other (one config evaluates all its runs on the same tokens).
MEASURED = ("converged", "epoch cap", "subset")
FAMILY_NAMES = {"ff": "feed-forward n-gram network", "rnn": "Elman RNN", "lstm": "LSTM"}
CORPUS_ORDER = ("ptb", "brown")

OUR_COLUMNS = (
    "run_id",
    "scale",
    "status",
    "family",
    "corpus",
    "description",
    "setting",
    "embed_dim",
    "hidden",
    "context",
    "direct",
    "dropout",
    "output",
    "optimizer",
    "epochs",
    "max_epochs",
    "parameters",
    "train_seconds",
    "tokens_per_second",
    "test_ppl",
    "valid_ppl",
    "source",
    "studies",
    "job_wall_seconds",
    "job_cpu_seconds",
    "seed",
    "commit",
    "stale_reason",
)
COMPARISON_COLUMNS = (
    "corpus",
    "origin",
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
    "comparable",
    "seed",
    "commit",
    # the published table's description of each row, from its source on (ours fill in theirs)
    *PUBLISHED_COLUMNS[PUBLISHED_COLUMNS.index("source") :],
)
CROSSOVER_COLUMNS = (
    "corpus",
    "scale",
    "family",
    "run_id",
    "setting",
    "seed",
    "status",
    "embed_dim",
    "hidden",
    "context",
    "parameters",
    "test_ppl",
    "valid_ppl",
    "train_seconds",
    "job_wall_seconds",
    "tie_context",
    "crossover_context",
    "ff_larger",
    "rnn_equivalent_parameters",
    "pareto",
)


def read_run(run_dir: str | Path, scale: str) -> dict[str, Any]:
    """The record of one finished run directory (its config.json and metrics.json) at the given scale."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    run_dir = Path(run_dir)
    record: dict[str, Any] = {"scale": scale, "source": run_dir.as_posix()}
    for name in ("config", "metrics"):
        path = run_dir / f"{name}.json"
        if not path.exists():
            raise FileNotFoundError(f"{path} is missing: {run_dir} is not a finished run (train it first)")
        record[name] = read_metrics(path) if name == "metrics" else json.loads(path.read_text(encoding="utf-8"))
    return record


def read_corpus_stats(paths: Iterable[str | Path]) -> dict[str, dict[str, Any]]:
    """corpus name -> its statistics, from the corpus records the workflow writes (results/corpora/*.json)."""
    stats: dict[str, dict[str, Any]] = {}
    for path in paths:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        if "corpus" not in record:
            raise ValueError(f"{path}: not a corpus statistics record (no 'corpus' key)")
        stats[record["corpus"]] = record
    return stats


def run_status(config: Mapping[str, Any], metrics: Mapping[str, Any], stale: str = "") -> str:
    """One of STATUSES (see the module docstring); ``stale``: why a reference run is stale, if it is."""
    if stale:
        return "stale"
    if metrics.get("diverged"):
        return "diverged"
    if stuck(metrics.get("test_column_worst"), metrics.get("test_column_median")):
        return "stuck column"
    if config.get("eval_tokens") is not None:
        return "subset"
    if config.get("schedule") == "mikolov" and metrics["epochs"] < config["max_epochs"]:
        return "converged"
    return "epoch cap"


def setting_key(config: Mapping[str, Any]) -> str:
    """The seeds of one model share this: its run's settings (config.json) hashed without the seed, like a run id."""
    shared = {k: v for k, v in config.items() if k not in ("run_id", "seed")}
    digest = hashlib.sha1(json.dumps(shared, sort_keys=True).encode()).hexdigest()[:10]
    return f"{config['family']}-{config['corpus']}-{digest}"


def describe(config: Mapping[str, Any]) -> str:
    """The model in a few words, from its settings."""
    family = config["family"]
    parts = [FAMILY_NAMES.get(family, family)]
    if family == "ff":
        parts.append(f"n - 1 = {config['context']}")
    parts += [f"H = {config['hidden']}", f"d = {config['embed_dim']}"]
    if family == "ff" and config.get("direct"):
        parts.append("direct connections")
    if config.get("dropout"):
        parts.append(f"dropout {config['dropout']:g}")
    parts.append(f"{config['output']} softmax, {config['optimizer']}, seed {config['seed']}")
    if config.get("train_tokens") is not None:
        parts.append(f"first {config['train_tokens']:,} training tokens")
    if config.get("max_steps_per_epoch") is not None:
        parts.append(f"at most {config['max_steps_per_epoch']:,} steps an epoch")
    if config.get("eval_tokens") is not None:
        parts.append(f"evaluated on the first {config['eval_tokens']:,} test tokens")
    return ", ".join(parts)


def our_runs(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per run record (see `read_run`), columns OUR_COLUMNS."""
    rows = []
    for record in records:
        config, metrics, scale = record["config"], record["metrics"], record["scale"]
        if scale not in SCALES:
            raise ValueError(f"run {config.get('run_id')!r}: scale must be one of {SCALES}, got {scale!r}")
        for key in ("test_ppl", "epochs", "parameters"):
            if key not in metrics:
                raise ValueError(f"run {config.get('run_id')!r}: metrics.json has no {key!r}")
        ff = config["family"] == "ff"
        rows.append(
            {
                "run_id": config["run_id"],
                "scale": scale,
                "status": run_status(config, metrics, record.get("stale", "")),
                "family": config["family"],
                "corpus": config["corpus"],
                "description": describe(config),
                "setting": setting_key(config),  # what the seeds of one model share
                "embed_dim": config["embed_dim"],
                "hidden": config["hidden"],
                "context": config["context"] if ff else None,  # the recurrent families read no window
                "direct": bool(config.get("direct")) if ff else False,
                "dropout": config.get("dropout", 0.0),
                "output": config["output"],
                "optimizer": config["optimizer"],
                "epochs": metrics["epochs"],
                "max_epochs": config["max_epochs"],
                "parameters": metrics["parameters"],
                "train_seconds": metrics.get("train_seconds"),
                "tokens_per_second": metrics.get("tokens_per_second"),
                "test_ppl": _number(metrics.get("test_ppl")),
                "valid_ppl": _number(metrics.get("valid_ppl")),
                "source": record.get("source", ""),
                "studies": ", ".join(record.get("studies", ())),
                "job_wall_seconds": math.nan,  # with_job_times fills these in
                "job_cpu_seconds": record.get("cpu_seconds", math.nan),
                "seed": config["seed"],
                "commit": record.get("commit", ""),
                "stale_reason": record.get("stale", ""),
                "corpus_stats": record.get("corpus_stats"),  # a reference run's own split, when it has one
                "dynamic": record.get(
                    "dynamic"
                ),  # its dynamic-evaluation record (rnnbench.results.dynamic_record), if any
            }
        )
    table = pd.DataFrame(rows, columns=[*OUR_COLUMNS, "corpus_stats", "dynamic"])
    table["context"] = table["context"].astype("Int64")
    return table


def with_job_times(ours: pd.DataFrame, benchmarks: pd.DataFrame) -> pd.DataFrame:
    """``ours`` with each run's training job's wall seconds and the run's CPU seconds from the benchmark table
    (rnnbench.results.summary.benchmark_table: rule, run_id, wall_seconds, cpu_seconds; the last repeat counts).
    A run without a record keeps what it had (a reference run its recorded CPU time), else NaN: its time is
    unknown, not zero."""
    jobs = benchmarks[benchmarks["rule"] == "train"].drop_duplicates("run_id", keep="last").set_index("run_id")
    out = ours.copy()
    out["job_wall_seconds"] = out["run_id"].map(jobs["wall_seconds"]).astype(float)
    out["job_cpu_seconds"] = out["run_id"].map(jobs["cpu_seconds"]).astype(float).fillna(out["job_cpu_seconds"])
    return out


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
    published: pd.DataFrame, ours: pd.DataFrame, corpus_stats: Mapping[str, Mapping[str, Any]] | None = None
) -> pd.DataFrame:
    """Published rows and ours, corpus by corpus (published first, then our paper-scale and short runs).

    Each of our rows carries the published row it is measured against (same corpus and family, marked
    ``reference_for`` in the published table) and the ratio of its test perplexity to that row's.
    ``corpus_stats`` (corpus name -> statistics with train/valid/test_tokens and vocab_size) fills in our
    split beside the paper's (a reference run carries its own, ``ours["corpus_stats"]``, when it has one); only
    corpora that have published rows appear. ``comparable`` is "yes", or why there is no ratio.
    """
    corpora = [c for c in CORPUS_ORDER if c in set(published["corpus"])]
    corpora += sorted(set(published["corpus"]) - set(corpora))
    references = {(r.corpus, r.reference_for): r for r in reference_rows(published).itertuples()}
    theirs = published.assign(
        origin="published",
        parameters=np.nan,
        epochs=np.nan,
        train_seconds=np.nan,
        job_wall_seconds=np.nan,
        status="",
        studies="",
        reference_model="",
        reference_ppl=np.nan,
        ratio_to_reference=np.nan,
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
        mine.append(
            {
                "corpus": row.corpus,
                "origin": f"ours ({row.scale})",
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
                "comparable": "yes" if comparable else why_not,
                "seed": row.seed,
                "commit": row.commit,
                "source": row.source,
                "table": "",
                "page": "",
                "split": _our_split(row.corpus, stats),
                "train_tokens": stats.get("train_tokens"),
                "valid_tokens": stats.get("valid_tokens"),
                "test_tokens": stats.get("test_tokens"),
                "vocab_size": stats.get("vocab_size"),
                "counting": _our_counting(row),
                "checked_against": "",
                "notes": row.stale_reason,
            }
        )
    mine += _dynamic_rows(mine, ours, published)
    mine = pd.DataFrame(mine, columns=list(COMPARISON_COLUMNS))
    families = {f: i for i, f in enumerate(("ff", "rnn", "lstm"))}
    mine = (
        mine.assign(_f=mine["family"].map(families)).sort_values(["_f", "test_ppl"], kind="stable").drop(columns="_f")
    )
    # Published rows keep the order of their paper's table; ours follow, feed-forward first, best first.
    table = pd.concat([theirs[list(COMPARISON_COLUMNS)], mine], ignore_index=True)
    keys = pd.DataFrame(
        {
            "corpus": table["corpus"].map({c: i for i, c in enumerate(corpora)}),
            "origin": table["origin"].map(
                {"published": 0, "ours (reference)": 1, "ours (paper)": 2, "ours (short)": 3}
            ),
        }
    )
    return table.loc[keys.sort_values(["corpus", "origin"], kind="stable").index].reset_index(drop=True)


def crossover_table(ours: pd.DataFrame, corpus: str = "ptb") -> pd.DataFrame:
    """Feed-forward and Elman runs on one corpus: test perplexity against parameter count.

    For every feed-forward run without direct connections, the analytic crossover of rnnbench.params at
    its d and H: ``tie_context`` = 1 + H/d (the n-1 at which it has exactly as many parameters as the Elman
    LM of the same d, H and output layer), ``crossover_context`` (the smallest n-1 at which it has more),
    ``ff_larger`` (whether this run is past it) and ``rnn_equivalent_parameters``, the size of that Elman LM
    (its own count minus the difference the analytic formula gives). ``pareto`` marks the runs no other
    run of the same scale beats with fewer or as many parameters.
    """
    table = ours[(ours["corpus"] == corpus) & ours["family"].isin(["ff", "rnn"])].copy()
    ff = (table["family"] == "ff") & ~table["direct"].astype(bool)
    table["tie_context"] = np.where(ff, 1 + table["hidden"] / table["embed_dim"], np.nan)
    table["crossover_context"] = pd.array(
        [
            crossover_context(d, h) if is_ff else None
            for is_ff, d, h in zip(ff, table["embed_dim"], table["hidden"], strict=True)
        ],
        dtype="Int64",
    )
    table["ff_larger"] = pd.array(
        [
            bool(c >= x) if is_ff else None
            for is_ff, c, x in zip(ff, table["context"], table["crossover_context"], strict=True)
        ],
        dtype="boolean",
    )
    table["rnn_equivalent_parameters"] = pd.array(
        [
            p - ff_minus_rnn(c, d, h) if is_ff else None
            for is_ff, p, c, d, h in zip(
                ff, table["parameters"], table["context"], table["embed_dim"], table["hidden"], strict=True
            )
        ],
        dtype="Int64",
    )
    table["pareto"] = False
    for _, group in table.groupby("scale"):
        table.loc[group.index, "pareto"] = _pareto(group)
    table = table.sort_values(["scale", "family", "parameters"], kind="stable")
    return table[list(CROSSOVER_COLUMNS)].reset_index(drop=True)


MATCHED_COLUMNS = (
    "corpus",
    "scale",
    "by",
    "setting",
    "context",
    "hidden",
    "seeds",
    "cost",
    "ff_valid_ppl",
    "ff_test_ppl",
    "ff_test_min",
    "ff_test_max",
    "rnn_seeds",
    "rnn_test_ppl",
    "rnn_advantage",
    "ratio",
)


def matched_cost(crossover: pd.DataFrame, by: str = "parameters") -> pd.DataFrame:
    """Each feed-forward model against the Elman curve of the same corpus and scale at equal ``by``.

    ``by`` is "parameters" or "train_seconds". A model is a setting with its seeds averaged (``setting_means``):
    one row per feed-forward setting, and the RNN curve through its settings' means. The RNN's perplexity at the
    feed-forward model's cost is read off that curve by linear interpolation in log(cost) between the two
    nearest points; outside the range they span it is NaN (no extrapolation). ``rnn_advantage`` = FF perplexity
    - RNN perplexity, so a positive value says by how much the RNN beats the feed-forward model at that cost;
    ``seeds`` and ``rnn_seeds`` (the fewer of the one or two curve points the RNN's value is read from; 0 where none
    is read) say how many seeds each mean rests on.
    """
    if by not in ("parameters", "train_seconds"):
        raise ValueError(f"by must be 'parameters' or 'train_seconds', got {by!r}")
    usable = crossover[crossover["status"].isin(MEASURED) & crossover[by].notna()]
    rows = []
    for (corpus, scale), group in usable.groupby(["corpus", "scale"], sort=False):
        rnn = setting_means(group[group["family"] == "rnn"], by).sort_values(by)
        for ff in setting_means(group[group["family"] == "ff"], by).itertuples():
            cost = float(getattr(ff, by))
            rnn_ppl = log_interpolate(cost, rnn[by].to_numpy(float), rnn["test_ppl"].to_numpy(float))
            rows.append(
                {
                    "corpus": corpus,
                    "scale": scale,
                    "by": by,
                    "setting": ff.setting,
                    "context": ff.context,
                    "hidden": ff.hidden,
                    "seeds": ff.seeds,
                    "cost": cost,
                    "ff_valid_ppl": ff.valid_ppl,
                    "ff_test_ppl": ff.test_ppl,
                    "ff_test_min": ff.test_min,
                    "ff_test_max": ff.test_max,
                    "rnn_seeds": _read_seeds(cost, rnn, by),
                    "rnn_test_ppl": rnn_ppl,
                    "rnn_advantage": ff.test_ppl - rnn_ppl,
                    "ratio": ff.test_ppl / rnn_ppl,
                }
            )
    return pd.DataFrame(rows, columns=list(MATCHED_COLUMNS))


def _read_seeds(cost: float, curve: pd.DataFrame, by: str) -> int:
    """The fewest seeds of the curve points (setting_means rows) log_interpolate reads at ``cost``: the nearest at or
    below it and the nearest at or above it; 0 outside the curve's span, where nothing is read."""
    below, above = curve[curve[by] <= cost], curve[curve[by] >= cost]
    if below.empty or above.empty:
        return 0
    return int(min(below.sort_values(by)["seeds"].iloc[-1], above.sort_values(by)["seeds"].iloc[0]))


def setting_means(runs: pd.DataFrame, by: str, keep: Sequence[str] = ()) -> pd.DataFrame:
    """One row per setting of ``runs`` (crossover rows), its seeds averaged: the mean ``by`` (a parameter count is
    the same for every seed; training seconds are not), the mean perplexities, the test range and the seeds, and
    the columns of ``keep`` as its first seed has them (settings every seed shares)."""
    return (
        runs.groupby("setting", sort=False)
        .agg(
            **{column: (column, "first") for column in keep},
            context=("context", "first"),
            hidden=("hidden", "first"),
            seeds=("run_id", "size"),
            **{by: (by, "mean")},
            valid_ppl=("valid_ppl", "mean"),
            test_ppl=("test_ppl", "mean"),
            test_min=("test_ppl", "min"),
            test_max=("test_ppl", "max"),
        )
        .reset_index()
    )


LEARNING_COLUMNS = (
    "corpus",
    "scale",
    "family",
    "run_id",
    "studies",
    "seed",
    "status",
    "epoch",
    "lr",
    "train_ppl",
    "valid_ppl",
    "tokens_seen",
    "seconds_trained",
)


def learning_curves(ours: pd.DataFrame, epochs: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per run and epoch: its rate, train and validation perplexity, and how far it had come: the
    training tokens and seconds summed over its epochs so far (``epochs``: run id -> its epochs.csv)."""
    frames = []
    for row in ours.itertuples():
        table = training_progress(epochs[row.run_id])
        frames.append(
            pd.DataFrame(
                {
                    "corpus": row.corpus,
                    "scale": row.scale,
                    "family": row.family,
                    "run_id": row.run_id,
                    "studies": row.studies,
                    "seed": row.seed,
                    "status": row.status,
                    "epoch": table["epoch"],
                    "lr": table["lr"],
                    "train_ppl": table["train_ppl"],
                    "valid_ppl": table["valid_ppl"],
                    "tokens_seen": table["tokens_seen"],
                    "seconds_trained": table["seconds_trained"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(LEARNING_COLUMNS))


def log_interpolate(x: float, xs: np.ndarray, ys: np.ndarray) -> float:
    """y at x on the piecewise-linear curve through (log xs, ys); NaN outside [min xs, max xs] or x <= 0."""
    if len(xs) == 0 or x <= 0 or x < xs.min() or x > xs.max():
        return math.nan
    order = np.argsort(xs)
    return float(np.interp(math.log(x), np.log(xs[order]), ys[order]))


def _pareto(group: pd.DataFrame) -> pd.Series:
    """True for runs that no other run beats (lower perplexity) with at most as many parameters."""
    ok = group["status"].isin(MEASURED) & group["test_ppl"].notna()
    flags = pd.Series(False, index=group.index)
    for i in group.index[ok]:
        others = group[ok & (group.index != i)]
        beaten = (others["parameters"] <= group.at[i, "parameters"]) & (others["test_ppl"] < group.at[i, "test_ppl"])
        flags[i] = not beaten.any()
    return flags


DYNAMIC_MODEL = "RNN LM, dynamic evaluation"  # the published row a dynamically evaluated run stands beside


def _dynamic_rows(mine: list[dict], ours: pd.DataFrame, published: pd.DataFrame) -> list[dict]:
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
        rows.append(
            {
                **row,
                "model": f"{row['model']} dynamic",
                "description": f"{row['description']}, dynamic evaluation (SGD rate {record.get('lr')})",
                "test_ppl": _number(value),
                "valid_ppl": math.nan,
                "reference_model": ref["model"].iloc[0] if len(ref) else "",
                "reference_ppl": float(ref["test_ppl"].iloc[0]) if len(ref) else math.nan,
                "ratio_to_reference": _number(value) / float(ref["test_ppl"].iloc[0]) if comparable else math.nan,
                "comparable": "yes"
                if comparable
                else (row["comparable"] if row["comparable"] != "yes" else "no record"),
                "notes": f"static at batch 1, same segments: {_number(record.get('static_ppl')):.1f}",
            }
        )
    return rows


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
    return f"ours ({corpus}): {counts} tokens train / valid / test, |V| = {int(stats['vocab_size']):,}"


def _our_counting(row) -> str:
    """Which test tokens our perplexity averages over (rnnbench.training.evaluate reads the test split as one stream)."""
    skipped = "the first" if row.family != "ff" else f"the first n - 1 = {row.context}"
    return f"every test token but {skipped}, <eos> included, all alike"


def _number(value: Any) -> float:
    return float(value) if value is not None else math.nan


RANKING_COLUMNS = (
    "corpus",
    "scale",
    "epoch",
    "matched",
    "rnn_leads",
    "best_ff",
    "best_ff_parameters",
    "best_ff_valid_ppl",
    "best_rnn",
    "best_rnn_parameters",
    "best_rnn_valid_ppl",
    "leader",
)


def ranking_by_epoch(curves: pd.DataFrame, crossover: pd.DataFrame) -> pd.DataFrame:
    """The two families' ranking after each epoch, read from validation perplexity only, so that a reader can
    tell a settled ranking from one the training budget decided.

    One row per corpus, scale and epoch up to the last any run trained (the same epoch is the same training
    tokens, every run reading its whole split). A run stands for the model it would keep if stopped there, the
    best by validation so far, and a run that has stopped (converged, or at its epoch cap) keeps its last one
    in the epochs after: so the last row compares the models the runs ended with. ``matched`` feed-forward
    models (settings, their seeds averaged) with an Elman perplexity at their parameter count (matched_cost's
    interpolation, on validation perplexity at that epoch), of which the RNN beats ``rnn_leads``; and the best run of each family at that epoch, its parameters and
    perplexity, ``leader`` the family of the lower. Runs that diverged or did not learn are left out, as
    they are by matched_cost. ``curves``: learning_curves' table; ``crossover``: crossover_table's (the
    runs, parameter counts and statuses).
    """
    runs = crossover[crossover["status"].isin(MEASURED)][list(_RUN_FIELDS)]
    at_epoch = _kept_model_by_epoch(curves[["run_id", "epoch", "valid_ppl"]].merge(runs, on="run_id"))
    rows = []
    for (corpus, scale, epoch), group in at_epoch.groupby(["corpus", "scale", "epoch"], sort=False):
        ff, rnn = group[group["family"] == "ff"], group[group["family"] == "rnn"]
        if ff.empty or rnn.empty:
            continue
        # matched_cost reads test_ppl: here it is the validation perplexity after this epoch.
        matched = matched_cost(group.assign(test_ppl=group["valid_ppl"], train_seconds=np.nan), "parameters")
        matched = matched[matched["rnn_test_ppl"].notna()]
        best_ff, best_rnn = ff.loc[ff["valid_ppl"].idxmin()], rnn.loc[rnn["valid_ppl"].idxmin()]
        rows.append(
            {
                "corpus": corpus,
                "scale": scale,
                "epoch": int(epoch),
                "matched": len(matched),
                "rnn_leads": int((matched["rnn_advantage"] > 0).sum()),
                "best_ff": best_ff["run_id"],
                "best_ff_parameters": best_ff["parameters"],
                "best_ff_valid_ppl": best_ff["valid_ppl"],
                "best_rnn": best_rnn["run_id"],
                "best_rnn_parameters": best_rnn["parameters"],
                "best_rnn_valid_ppl": best_rnn["valid_ppl"],
                "leader": "rnn" if best_rnn["valid_ppl"] < best_ff["valid_ppl"] else "ff",
            }
        )
    table = pd.DataFrame(rows, columns=list(RANKING_COLUMNS))
    return table.sort_values(["corpus", "scale", "epoch"], ignore_index=True)


def _kept_model_by_epoch(at_epoch: pd.DataFrame) -> pd.DataFrame:
    """Each run's validation perplexity after every epoch of its corpus and scale, as the best so far, carried
    past the run's last epoch up to the last epoch any run of the group trained."""
    at_epoch = at_epoch[at_epoch["valid_ppl"].notna()].sort_values(["run_id", "epoch"])
    last = at_epoch.groupby(["corpus", "scale"])["epoch"].transform("max")
    frames = []
    for _, run in at_epoch.assign(group_last=last).groupby("run_id", sort=False):
        epochs = pd.RangeIndex(int(run["epoch"].min()), int(run["group_last"].max()) + 1, name="epoch")
        best = run.set_index("epoch")["valid_ppl"].cummin().reindex(epochs).ffill()
        first = run.iloc[0]
        frames.append(
            pd.DataFrame({"epoch": epochs, "valid_ppl": best.to_numpy()}).assign(**{c: first[c] for c in _RUN_FIELDS})
        )
    return (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["epoch", "valid_ppl", *_RUN_FIELDS])
    )


# What a run carries into every epoch row of _kept_model_by_epoch.
_RUN_FIELDS = ("run_id", "setting", "corpus", "scale", "family", "context", "hidden", "parameters", "status")


def ranking_settled(ranking: pd.DataFrame) -> pd.DataFrame:
    """Per corpus and scale: whether the ranking held between the last two epochs of ranking_by_epoch (the
    best run's family and the count of matched points the RNN wins both unchanged), and the first epoch from
    which the best run's family never changed again. One epoch is not enough to tell: ``settled`` NA."""
    rows = []
    for (corpus, scale), group in ranking.groupby(["corpus", "scale"], sort=False):
        group = group.sort_values("epoch")
        leaders = group["leader"].tolist()
        since = len(leaders) - 1
        while since > 0 and leaders[since - 1] == leaders[-1]:
            since -= 1
        last = group.iloc[-1]
        settled = pd.NA
        if len(group) >= 2:
            before = group.iloc[-2]
            settled = bool(before["leader"] == last["leader"] and before["rnn_leads"] == last["rnn_leads"])
        rows.append(
            {
                "corpus": corpus,
                "scale": scale,
                "last_epoch": int(last["epoch"]),
                "leader": last["leader"],
                "leader_since_epoch": int(group["epoch"].iloc[since]),
                "rnn_leads": int(last["rnn_leads"]),
                "matched": int(last["matched"]),
                "settled": settled,
            }
        )
    columns = ["corpus", "scale", "last_epoch", "leader", "leader_since_epoch", "rnn_leads", "matched", "settled"]
    return pd.DataFrame(rows, columns=columns).astype({"settled": "boolean"})
