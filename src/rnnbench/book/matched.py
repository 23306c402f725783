"""The matched-size chapter's values (reports/matched.qmd): our Elman RNNs against our feed-forward models at equal
parameter count and at equal training time, and whether the ranking of the two families has settled by epoch.

    matched_values(m)     one comparison at equal cost (rnnbench.book.published.Matched) as the values its sentence
                          reads, every one a formatted value ("–" where nothing was matched), and whether every
                          feed-forward model was matched (a flag: Passages, rnnbench.book.conditions)
    ranking_display(t)    tables/ranking_by_epoch.csv as one row per set of runs: the best model of each family after
                          the last epoch, how many matched windows the RNN beats after each epoch, whether it settled

Returns values and tables; the sentences are the chapter's. No torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from rnnbench.book.format import NONE, Markdown, counted, integer, sig, words
from rnnbench.book.published import CORPUS_NAMES, Matched, ppl
from rnnbench.metrics import FAMILY_NAMES
from rnnbench.results.learning_curves import ranking_settled

# How the RNN stands against the feed-forward model it is matched to, by the sign of the feed-forward perplexity
# minus the RNN's.
STANDS = {1: "beats it by", -1: "trails it by", 0: "matches it"}


@dataclass(frozen=True)
class MatchedValues:
    spanned: Markdown  # feed-forward models an RNN model matches
    unmatched: Markdown
    context: Markdown  # the headline feed-forward model: n-1, H, its cost, perplexity and what its mean rests on
    hidden: Markdown
    cost: Markdown
    ff: Markdown
    seeds: Markdown
    rnn_hidden: Markdown  # the RNN matched to it
    rnn_cost: Markdown
    rnn: Markdown
    rnn_seeds: Markdown
    stands: Markdown  # "beats it by 14.9", "trails it by 3", "matches it"
    ratio: Markdown
    rnn_lower: Markdown  # of the matched models, at how many the RNN is lower
    advantage_low: Markdown  # feed-forward minus RNN perplexity over the matched models
    advantage_high: Markdown
    every_matched: bool = False  # some feed-forward model was compared, and none was left without an RNN that near


@dataclass(frozen=True)
class Passages:
    """The chapter's flags (rnnbench.book.conditions): which of its alternative sentences the results call for."""

    by_parameters: MatchedValues  # at equal parameter count


def _seeds(n: int, low: float = math.nan, high: float = math.nan) -> Markdown:
    if n == 1:
        return Markdown("one seed")
    spread = f", {ppl(low)} to {ppl(high)} over its seeds" if not (math.isnan(low) or math.isnan(high)) else ""
    return Markdown(f"the mean of {integer(n)} seeds{spread}")


def _cost(value: float, by: str) -> Markdown:
    if math.isnan(value):
        return NONE
    return Markdown(f"{integer(value)} parameters" if by == "parameters" else f"{sig(value)} seconds of training")


def matched_values(m: Matched | None) -> MatchedValues:
    """The values of one equal-cost comparison; every one "–" where no feed-forward model was matched."""
    if m is None or m.spanned == 0:
        unmatched = integer(m.unmatched) if m is not None else NONE
        return MatchedValues(integer(0), unmatched, *([NONE] * 14))
    sign = (m.advantage > 0) - (m.advantage < 0)
    gap = f" {ppl(abs(m.advantage))}" if sign else ""
    return MatchedValues(
        spanned=integer(m.spanned),
        unmatched=integer(m.unmatched),
        context=integer(m.context),
        hidden=integer(m.hidden),
        cost=_cost(m.cost, m.by),
        ff=ppl(m.ff_test_ppl),
        seeds=_seeds(m.seeds, m.ff_test_min, m.ff_test_max),
        rnn_hidden=integer(m.rnn_hidden),
        rnn_cost=_cost(m.rnn_cost, m.by),
        rnn=ppl(m.rnn_test_ppl),
        rnn_seeds=_seeds(m.rnn_seeds),
        stands=Markdown(STANDS[sign] + gap),
        ratio=sig(m.ratio),
        rnn_lower=integer(m.rnn_lower),
        advantage_low=sig(m.advantage_min),
        advantage_high=sig(m.advantage_max),
        every_matched=m.unmatched == 0,
    )


# Whether a ranking has settled (rnnbench.results.learning_curves.ranking_settled), as a table cell.
SETTLED = {True: "settled", False: "not settled", None: "one epoch: cannot tell"}


def ranking_display(ranking: pd.DataFrame) -> pd.DataFrame:
    """One row per set of runs (corpus and scale) of tables/ranking_by_epoch.csv: after the last epoch the best
    model of each family by validation perplexity (its parameters), the matched windows the RNN beats after each
    epoch, and whether the ranking has settled, with the family leading and since when."""
    rows = []
    for row in ranking_settled(ranking).itertuples(index=False):
        runs = ranking[(ranking["corpus"] == row.corpus) & (ranking["scale"] == row.scale)].sort_values("epoch")
        last = runs.iloc[-1]
        settled = None if pd.isna(row.settled) else bool(row.settled)
        leads = (
            words([f"{integer(r.rnn_leads)} of {integer(r.matched)}" for r in runs.itertuples()])
            if row.matched
            else NONE
        )
        rows.append(
            {
                # the epochs in the runs' cell: a narrow column of its own overprints its neighbour's header in the PDF
                "runs": f"{CORPUS_NAMES.get(row.corpus, row.corpus)}, {row.scale}, {counted(int(row.last_epoch), 'epoch')}",
                "best RNN": Markdown(f"{ppl(last.best_rnn_valid_ppl)} ({integer(last.best_rnn_parameters)})"),
                "best feed-forward": Markdown(f"{ppl(last.best_ff_valid_ppl)} ({integer(last.best_ff_parameters)})"),
                "RNN lower, matched, by epoch": leads,
                "ranking": Markdown(SETTLED[settled]),
                "leads since": Markdown(
                    f"{FAMILY_NAMES[row.leader]}, epoch {integer(row.leader_since_epoch)}" if settled else "–"
                ),
            }
        )
    columns = [
        "runs",
        "best RNN",
        "best feed-forward",
        "RNN lower, matched, by epoch",
        "ranking",
        "leads since",
    ]
    return pd.DataFrame(rows, columns=columns)
