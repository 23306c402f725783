"""What the chapter "Against the published numbers" (reports/published.qmd) reads: the comparison tables
of rule comparison (rnnbench.comparison) shaped for the page, the values its sentences print, and the sections
the configuration adds (one per corpus) or that are still written here (the crossover).

    results/tables/comparison.csv          published rows and ours (every run of the config's comparison studies)
    results/tables/crossover.csv           both families on one corpus, perplexity against parameter count
    results/tables/matched_parameters.csv  the RNN curve read at each feed-forward run's parameter count
    results/tables/matched_time.csv        ... and at its training time

Like rnnbench.report, nothing here trains or imports torch; every number shown is read from those tables.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.markdown import Markdown, cell_sig, code, escape, integer, sig
from rnnbench.report import _root, table

SCALE_NAMES = {"paper": "paper-config", "short": "short"}
STATUS_TEXT = {
    "converged": "converged",
    "epoch cap": "stopped at its epoch cap",
    "subset": "measured on part of the test split",
    "diverged": "diverged",
}
CORPUS_NAMES = {"ptb": "Penn Treebank", "brown": "Brown"}
CORPUS_SHORT = {"ptb": "PTB", "brown": "Brown"}


def ppl(value: Any) -> Markdown:
    """A perplexity to one decimal, as the papers print theirs (124.7, not 125); a whole number without it (268)."""
    if pd.isna(value):
        return Markdown("–")
    return Markdown(f"{float(value):,.1f}".removesuffix(".0"))


def has_comparison(results: Any = None) -> bool:
    """Whether this results folder holds the comparison (its config names studies for it)."""
    return all(Path(paths.table(_root(results), name)).is_file() for name in paths.COMPARISON_TABLES)


def comparison(results: Any = None) -> pd.DataFrame:
    return table("comparison", results, text=["table", "page", "status", "studies"]).fillna({"page": "", "table": ""})


def ours(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["origin"] != "published"]


def trained_here(frame: pd.DataFrame) -> pd.DataFrame:
    """Our runs of this results folder's config: all of ours but the reference runs kept in the repository."""
    return frame[~frame["origin"].isin(["published", "ours (reference)"])]


def scale_of(frame: pd.DataFrame) -> str:
    """paper or short: the scale of this folder's runs (one config, one scale)."""
    scales = {origin[len("ours (") : -1] for origin in trained_here(frame)["origin"]}
    return scales.pop() if len(scales) == 1 else "mixed"


def short_cite(source: str) -> str:
    """'Mikolov, Deoras, ... (2011), Empirical ...' -> 'Mikolov et al. (2011)'."""
    match = re.match(r"\s*([^,]+),[^(]*\((\d{4})\)", source)
    return f"{match.group(1)} et al. ({match.group(2)})" if match else source.split(",")[0]


def best_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """Our run with the lowest validation perplexity per corpus and family (chosen without the test split)."""
    measured = trained_here(frame)[trained_here(frame)["status"] != "diverged"].dropna(subset=["valid_ppl"])
    picks = measured.sort_values("valid_ppl", kind="stable").groupby(["corpus", "family"], sort=False).head(1)
    return picks.sort_values(["corpus", "family"], kind="stable")


def corpus_rows(frame: pd.DataFrame, corpus: str) -> pd.DataFrame:
    """The chapter's table for one corpus: every published row, then our best run of each family."""
    theirs = frame[(frame["origin"] == "published") & (frame["corpus"] == corpus)]
    mine = best_runs(frame)
    mine = mine[mine["corpus"] == corpus]
    rows = []
    for row in theirs.itertuples():
        where = ", ".join(p for p in (f"{short_cite(row.source)}", str(row.table), _page(row.page)) if p)
        rows.append({"model": escape(row.model), "measured by": escape(where), "test_ppl": row.test_ppl, "ratio": None})
    for row in reference_runs(frame).itertuples():
        if row.corpus != corpus:
            continue
        spread = f"mean of seeds {row.seeds}, {ppl(row.test_min)} to {ppl(row.test_max)}"
        rows.append(
            {
                "model": Markdown(f"**ours, trained to convergence**: {escape(row.description)}"),
                "measured by": Markdown(
                    f"reference results from commit {code(row.commit)}, {escape(row.epochs)} epochs, "
                    f"{escape(row.status)}; {escape(spread)}"
                ),
                "test_ppl": row.test_ppl,
                "ratio": Markdown(f"{cell_sig(row.ratio)} of {escape(row.reference_model)}")
                if pd.notna(row.ratio)
                else Markdown(escape(row.comparable.split(":")[0])),  # the reason in full: the section below
            }
        )
    for row in mine.itertuples():
        label = Markdown(f"**ours, {SCALE_NAMES.get(row.origin[6:-1], row.origin)}**: {escape(row.description)}")
        epochs = f"{int(row.epochs)} epoch{'s' if row.epochs != 1 else ''}, {STATUS_TEXT.get(row.status, row.status)}"
        rows.append(
            {
                "model": label,
                "measured by": Markdown(f"{code(row.model)}, {escape(epochs)}"),
                "test_ppl": row.test_ppl,
                "ratio": Markdown(f"{cell_sig(row.ratio_to_reference)} of {escape(row.reference_model)}")
                if pd.notna(row.ratio_to_reference)
                else None,
            }
        )
    return pd.DataFrame(rows, columns=["model", "measured by", "test_ppl", "ratio"])


def reference_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """The reference results (trained to convergence, kept in the repository), one row per study: its
    seeds' mean test perplexity and range, epochs, status, commit, and the ratio of the mean to the
    published row it is measured against (only where every seed is comparable: same vocabulary, not stale)."""
    mine = frame[frame["origin"] == "ours (reference)"]
    # a run scored under dynamic evaluation is a row of its own ("<run> dynamic"), beside the published dynamic row
    mine = mine.assign(_dynamic=mine["model"].str.endswith(" dynamic"))
    rows = []
    for (corpus, family, study, _), runs in mine.groupby(["corpus", "family", "studies", "_dynamic"], sort=False):
        measured = runs.dropna(subset=["test_ppl"])
        fresh = runs[runs["status"] != "stale"]
        comparable = (runs["comparable"] == "yes").all() and len(measured) == len(runs)
        mean = measured["test_ppl"].mean() if len(measured) else float("nan")
        reasons = [r for r in dict.fromkeys(runs["comparable"]) if r != "yes"]
        rows.append(
            {
                "corpus": corpus,
                "family": family,
                "study": study,
                "description": _without_seed(runs["description"].iloc[0]),
                "seeds": ", ".join(str(int(s)) for s in runs["seed"]),
                "n_seeds": len(runs),
                "stale": len(runs) - len(fresh),
                "test_ppl": mean,
                "test_min": measured["test_ppl"].min(),
                "test_max": measured["test_ppl"].max(),
                "valid_ppl": measured["valid_ppl"].mean(),
                "epochs": ", ".join(str(int(e)) for e in runs["epochs"]),
                "status": ", ".join(dict.fromkeys(runs["status"])),
                "commit": ", ".join(dict.fromkeys(str(c)[:7] for c in runs["commit"])),
                "parameters": runs["parameters"].iloc[0],
                "reference_model": runs["reference_model"].iloc[0],
                "reference_ppl": runs["reference_ppl"].iloc[0],
                "ratio": mean / runs["reference_ppl"].iloc[0] if comparable else float("nan"),
                "comparable": "yes" if comparable else "; ".join(reasons),
                "runs": ", ".join(runs["model"]),
            }
        )
    return pd.DataFrame(rows)


def reference_verdict(row: Any) -> str:
    """Where a reference row's seeds stand against its published row: below (every seed lower), above (every
    seed higher), straddles (some of each), or not comparable (see rnnbench.comparison.VOCAB_TOLERANCE)."""
    if row["comparable"] != "yes":
        return "not comparable"
    if row["test_max"] < row["reference_ppl"]:
        return "below"
    if row["test_min"] > row["reference_ppl"]:
        return "above"
    return "straddles"


def _without_seed(description: str) -> str:
    return re.sub(r", seed \d+", "", description)


def _page(page: Any) -> str:
    text = str(page).strip()
    return f"p. {text.removesuffix('.0')}" if text and text != "nan" else ""


def sources(frame: pd.DataFrame, corpus: str) -> Markdown:
    """The full source of each published row of ``corpus``, once each."""
    theirs = frame[(frame["origin"] == "published") & (frame["corpus"] == corpus)]
    return Markdown("; ".join(escape(s) for s in dict.fromkeys(theirs["source"])))


def split_sentence(frame: pd.DataFrame, corpus: str) -> Markdown:
    """The paper's split and ours, side by side, from the table's split columns."""
    theirs = frame[(frame["origin"] == "published") & (frame["corpus"] == corpus)]["split"]
    mine = trained_here(frame)[trained_here(frame)["corpus"] == corpus]["split"].dropna()
    paper = escape(theirs.iloc[0]) if len(theirs) else Markdown("not given")
    parts = [f"The paper's split: {paper}."]
    if len(mine) and str(mine.iloc[0]):
        parts.append(f"Ours: {escape(str(mine.iloc[0]).removeprefix(f'ours ({corpus}): '))}.")
    return Markdown(" ".join(parts))


def best_against_reference(frame: pd.DataFrame, corpus: str, family: str) -> dict[str, Any] | None:
    """Our best run of a family on a corpus beside its reference row: the numbers the prose prints."""
    picks = best_runs(frame)
    pick = picks[(picks["corpus"] == corpus) & (picks["family"] == family)]
    if pick.empty:
        return None
    row = pick.iloc[0]
    return {
        "ours": ppl(row["test_ppl"]),
        "reference": ppl(row["reference_ppl"]),
        "reference_model": escape(row["reference_model"]),
        "ratio": sig(row["ratio_to_reference"]),
        "comparable": pd.notna(row["ratio_to_reference"]),
        "status": STATUS_TEXT.get(row["status"], row["status"]),
        "epochs": count_text(int(row["epochs"]), "epoch"),
    }


def matched_sentence(matched: pd.DataFrame, by: str) -> Markdown:
    """By how much our RNN beats our feed-forward model at equal ``by`` (parameters or training time), or not.

    The feed-forward run with the lowest validation perplexity among those the RNN curve spans is the headline
    (chosen without the test split);
    the range over every such run follows. Outside the curve's span no RNN value is read (no extrapolation).
    """
    cost = {"parameters": "parameter count", "train_seconds": "training time"}[by]
    spanned = matched.dropna(subset=["rnn_test_ppl"])
    if spanned.empty:
        return Markdown(
            f"No feed-forward run falls within the {cost}s our RNN runs span, so none can be matched at equal {cost}."
        )
    best = spanned.sort_values("ff_valid_ppl", kind="stable").iloc[0]
    at = f"{integer(best['cost'])} parameters" if by == "parameters" else f"{sig(best['cost'])} seconds of training"
    delta = best["rnn_advantage"]
    verdict = "beats it by" if delta > 0 else "trails it by"
    n_better = int((spanned["rnn_advantage"] > 0).sum())
    sentence = (
        f"At equal {cost}, our best matched feed-forward model (n-1 = {integer(best['context'])}, "
        f"H = {integer(best['hidden'])}, {at}) has test perplexity {ppl(best['ff_test_ppl'])}; the RNN curve at "
        f"that {cost} gives {ppl(best['rnn_test_ppl'])}, so the RNN {verdict} {ppl(abs(delta))} "
        f"(a ratio of {sig(best['ratio'])}). Over all {integer(len(spanned))} feed-forward runs the RNN curve spans, "
        f"the RNN is lower at {integer(n_better)}, by {ppl(spanned['rnn_advantage'].min())} to "
        f"{ppl(spanned['rnn_advantage'].max())}."
    )
    left = len(matched) - len(spanned)
    if left:
        sentence += f" Outside that span, unmatched: {count_text(left, 'feed-forward run')}."
    return Markdown(sentence)


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


def count_text(n: int, noun: str) -> Markdown:
    return Markdown(f"{integer(n)} {noun}{'s' if n != 1 else ''}")


def matched_table(matched_parameters: pd.DataFrame, matched_time: pd.DataFrame) -> pd.DataFrame:
    """One row per feed-forward run: its perplexity, and the RNN curve's at its parameter count and time."""
    by_time = matched_time.set_index("run_id")
    rows = []
    for row in matched_parameters.itertuples():
        timed = by_time.loc[row.run_id] if row.run_id in by_time.index else None
        rows.append(
            {
                "run": code(row.run_id),
                "n‑1": row.context,
                "H": row.hidden,
                "parameters": row.cost,
                "feed-forward": row.ff_test_ppl,
                "RNN at equal parameters": row.rnn_test_ppl,
                "training seconds": timed["cost"] if timed is not None else None,
                "RNN at equal time": timed["rnn_test_ppl"] if timed is not None else None,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "run",
            "n‑1",
            "H",
            "parameters",
            "feed-forward",
            "RNN at equal parameters",
            "training seconds",
            "RNN at equal time",
        ],
    )


def corpus_sections(frame: pd.DataFrame) -> Markdown:
    """A section per corpus of the comparison (the config decides which): its published rows beside our best
    runs, and how its split differs from the paper's."""
    lines = []
    for corpus in dict.fromkeys(frame["corpus"]):
        lines += _corpus_section(frame, corpus)
    return Markdown("\n".join(lines))


def crossover_section(results: Any = None, staging: Any = None) -> Markdown:
    """The crossover in practice: perplexity against parameter count, and the matched comparisons."""
    from rnnbench.report import STAGING_DIR, book_figure

    return Markdown("\n".join(_crossover_section(results, staging or STAGING_DIR, book_figure)))


def wall_minutes(runs: pd.DataFrame) -> float:
    """The summed wall time of the training jobs of ``runs`` (runs_table), in minutes; NaN when none was timed."""
    timed = runs["job_wall_seconds"].dropna()
    return float(timed.sum() / 60) if len(timed) else math.nan


def _corpus_section(frame: pd.DataFrame, corpus: str) -> list[str]:
    from rnnbench.markdown import markdown_table

    name = CORPUS_NAMES.get(corpus, corpus)
    slug = re.sub(r"[^a-z0-9]+", "-", corpus)
    theirs = frame[(frame["origin"] == "published") & (frame["corpus"] == corpus)]
    cite = words_of(dict.fromkeys(short_cite(s) for s in theirs["source"]))
    lines = [f"## {name} {{#sec-published-{slug}}}", ""]
    said = []
    for family, label in (("rnn", "Elman RNN"), ("ff", "feed-forward model")):
        numbers = best_against_reference(frame, corpus, family)
        if numbers is None:
            continue
        if numbers["comparable"]:
            said.append(
                f"our best {label} has test perplexity {numbers['ours']} after {numbers['epochs']} "
                f"({numbers['status']}), {numbers['ratio']} times the {numbers['reference']} of "
                f"{numbers['reference_model']}"
            )
        else:
            said.append(f"our best {label} has test perplexity {numbers['ours']} ({numbers['status']}; no ratio)")
    lines.append(
        f"@tbl-published-{slug} sets our runs beside {cite}'s rows. "
        + (f"{'; '.join(said)[0].upper()}{'; '.join(said)[1:]}." if said else "No run of ours finished on this corpus.")
    )
    lines += [
        "",
        split_sentence(frame, corpus),
        "",
        markdown_table(
            corpus_rows(frame, corpus),
            formats={"test_ppl": ppl},
            headers={"test_ppl": "test perplexity", "ratio": "ours / reference"},
            align={"ratio": "right"},
        ),
        "",
        f": {name}: the published rows ({escape(cite)}) and our best run of each family, chosen by validation "
        f"perplexity. Sources: {sources(frame, corpus)}. From tables/comparison.csv, rule comparison. "
        f"{{#tbl-published-{slug}}}",
        "",
    ]
    return lines


def _crossover_section(results: Any, staging: Any, book_figure) -> list[str]:
    from rnnbench.markdown import markdown_table

    crossover = table("crossover", results)
    lines = ["## Perplexity against parameter count {#sec-published-crossover}", ""]
    if crossover.empty:
        return lines + ["This configuration names no corpus for the crossover figure.", ""]
    by_params = table("matched_parameters", results)
    by_time = table("matched_time", results)
    ff = crossover[crossover["family"] == "ff"].dropna(subset=["tie_context"])
    ties = words_of(
        f"n-1 = {sig(t)} at d = {integer(d)}, H = {integer(h)}"
        for t, d, h in ff[["tie_context", "embed_dim", "hidden"]].drop_duplicates().itertuples(index=False)
    )
    corpus = CORPUS_NAMES.get(crossover["corpus"].iloc[0], crossover["corpus"].iloc[0])
    image = book_figure(paths.CROSSOVER_FIGURE, results, staging)
    lines += [
        f"The chapter puts the crossover at a context of five words. Counting the two matrices that differ, the "
        f"window's (n-1)d × H against the recurrence's d × H + H × H, the window's model outgrows the recurrent one "
        f"once its context passes 1 + H/d words ({ties or 'no feed-forward run here'}). @fig-published-crossover measures what "
        f"each size buys on {corpus}: our Elman RNNs over H and our feed-forward models over n-1 and H, test "
        f"perplexity against parameter count. A dotted line marks, for each feed-forward H, the Elman LM of the "
        f"same d and H; a hollow point is a feed-forward model past that tie.",
        "",
        matched_sentence(by_params, "parameters"),
        "",
        f"Training time is the other cost. {matched_sentence(by_time, 'train_seconds')} "
        f"@tbl-published-matched gives every feed-forward run with the RNN curve read at its size and at its "
        f"training time (linear in log cost between the two nearest RNN runs; a blank: outside their span).",
        "",
        f"![Test perplexity against parameter count on {corpus}, both families; dotted: the Elman LM of the same "
        f"d and H as a feed-forward line (the analytic tie). From figures/crossover.png, rule crossover_figure.]"
        f"({image}){{#fig-published-crossover}}",
        "",
        markdown_table(
            matched_table(by_params, by_time),
            formats={c: ppl for c in ("feed-forward", "RNN at equal parameters", "RNN at equal time")}
            | {"training seconds": cell_sig}
            | {"parameters": integer, "n‑1": integer, "H": integer},
        ),
        "",
        ": Each feed-forward run against the Elman RNN curve at equal parameter count and at equal training time "
        "(test perplexity). From tables/matched_parameters.csv and tables/matched_time.csv, rule comparison. "
        "{#tbl-published-matched}",
        "",
    ]
    return lines


def words_of(items) -> Markdown:
    from rnnbench.markdown import words

    return words(list(items))
