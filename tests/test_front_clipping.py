"""The front chapter's clipping answer (rnnbench.book.front): the runs that blew up (diverged, or ended above the
unigram perplexity), rate by rate, unclipped against each threshold set to clip rare spikes, in the words the answer
prints; planted studies, hand-counted."""

from __future__ import annotations

import pandas as pd
from planted import divergence_folder

from rnnbench.book.clipping import clipping_table
from rnnbench.book.front import divergence_by_rate_words


def _table(tmp_path, counts_by_rate, settled_high=None) -> pd.DataFrame:
    tables = []
    for lr, counts in counts_by_rate.items():
        divergence_folder(tmp_path / f"lr{lr:g}", counts, lr=lr, settled_high=(settled_high or {}).get(lr))
        tables.append(clipping_table(["clips"], tmp_path / f"lr{lr:g}"))
    return pd.concat(tables, ignore_index=True)


def test_each_rate_that_blew_up_sets_the_unclipped_runs_against_the_rare_spike_threshold(tmp_path):
    # reference median 0.5: clip 1 is 2 x median (rare spikes), clip 0.1 is 0.2 x (ordinary steps, not named).
    # At rate 1 three unclipped runs diverged and the other two settled above the unigram perplexity: 5 blew up;
    # at rate 5 the clipped run that did not diverge settled high too: 5 of 5.
    table = _table(
        tmp_path,
        {
            0.5: {None: (0, 5), 1.0: (0, 5)},  # no unclipped run blew up: not a rate of the answer
            1.0: {None: (3, 5), 1.0: (0, 5), 0.1: (1, 5)},
            5.0: {None: (5, 5), 1.0: (4, 5)},
        },
        settled_high={1.0: {None: 2}, 5.0: {1.0: 1}},
    )
    assert divergence_by_rate_words(table) == (
        "at rate 1, 5 of 5 unclipped and 0 of 5 clipped at 2 × median; at rate 5, 5 of 5 and 5 of 5"
    )


def test_no_diverging_rate_is_said_so(tmp_path):
    assert divergence_by_rate_words(_table(tmp_path, {0.5: {None: (0, 3), 1.0: (0, 3)}})) == "no rate"
