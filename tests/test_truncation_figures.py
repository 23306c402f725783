"""The truncation chapter's figure and the interaction it draws, on reach tables written by hand."""

import math

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from scipy import stats

from rnnbench.findings import policy
from rnnbench.findings.truncation import ACCURACY_MARGIN, _interaction_test, interaction, interactions, split_gaps
from rnnbench.plots.truncation_figures import truncation_figure


def reach_rows(split, rows):
    """rows: (bptt, seed, cut_every, within, beyond, outcome); the gap is within minus beyond, as reach.csv has it."""
    return pd.DataFrame(
        [
            {
                "run_id": f"r{bptt}-{seed}",
                "bptt": bptt,
                "seed": seed,
                "outcome": outcome,
                "cut_every": cut,
                "split": split,
                "within_probes": 10,
                "within_accuracy": within,
                "beyond_probes": 10,
                "beyond_accuracy": beyond,
                "gap": within - beyond,
            }
            for bptt, seed, cut, within, beyond, outcome in rows
        ]
    )


@pytest.fixture
def sentence_cuts():
    """Cut at 2: seeds' gaps 0.10 and 0.20; full BPTT split at 2: 0.02 and 0.04, so the paired interactions are
    0.08 and 0.16. A third seed of the cut run did not learn, and the distance split beside the block one is
    never read where a block split exists."""
    block = reach_rows(
        "block",
        [
            (0, 1, 2, 0.92, 0.90, "learned"),
            (0, 2, 2, 0.94, 0.90, "learned"),
            (2, 1, 2, 0.90, 0.80, "learned"),
            (2, 2, 2, 0.90, 0.70, "learned"),
            (2, 3, 2, 0.50, 0.10, "did not learn"),
        ],
    )
    distance = reach_rows("distance", [(2, 1, 2, 0.9, 0.0, "learned"), (0, 1, 2, 0.9, 0.9, "learned")])
    return pd.concat([block, distance], ignore_index=True)


@pytest.fixture
def stream():
    """Split by distance, unpaired: cut gaps at 5 of 0.10 and 0.20 against full gaps of 0.00 and 0.02 (mean
    0.01), so each seed's interaction is its gap minus 0.01: 0.09 and 0.19."""
    return reach_rows(
        "distance",
        [
            (0, 1, 5, 0.90, 0.90, "learned"),
            (0, 2, 5, 0.92, 0.90, "learned"),
            (5, 1, 5, 0.90, 0.80, "learned"),
            (5, 2, 5, 0.90, 0.70, "learned"),
        ],
    )


def test_the_block_split_is_read_where_there_is_one(sentence_cuts, stream):
    gaps, split = split_gaps(sentence_cuts)
    assert split == "block" and set(gaps["split"]) == {"block"}
    assert "did not learn" not in set(gaps["outcome"])
    assert split_gaps(stream)[1] == "distance"


def test_paired_interactions_by_hand(sentence_cuts):
    points, intervals = interactions(sentence_cuts)
    assert points.sort_values("seed")["interaction"].tolist() == pytest.approx([0.08, 0.16])
    row = intervals.iloc[0]
    assert (row["k"], row["split"], bool(row["paired"]), row["n"]) == (2, "block", True, 2)
    # mean 0.12; sd of (0.08, 0.16) is 0.04 sqrt 2, so the standard error is 0.04, times t(0.975, 1) = 12.706
    half = stats.t.ppf(0.975, 1) * 0.04
    assert row["mean"] == pytest.approx(0.12)
    assert (row["low"], row["high"]) == pytest.approx((0.12 - half, 0.12 + half))


def test_unpaired_interactions_by_hand(stream):
    points, intervals = interactions(stream)
    assert points.sort_values("seed")["interaction"].tolist() == pytest.approx([0.09, 0.19])
    row = intervals.iloc[0]
    assert (row["split"], bool(row["paired"])) == ("distance", False)
    assert row["mean"] == pytest.approx(0.14)
    welch = policy.difference([0.10, 0.20], [0.00, 0.02])
    assert (row["low"], row["high"]) == pytest.approx((welch.low, welch.high))


@pytest.mark.parametrize("table", ["sentence_cuts", "stream"])
def test_the_interval_drawn_is_the_one_the_claim_tests(table, request):
    reach = request.getfixturevalue(table)
    gaps, split = split_gaps(reach)
    _, intervals = interactions(reach)
    for row in intervals.itertuples(index=False):
        cut, full = interaction(gaps, row.k)
        tested = _interaction_test(cut, full, paired=split == "block")[0].interval
        assert (row.mean, row.low, row.high) == pytest.approx((tested.estimate, tested.low, tested.high))


def test_one_seed_a_side_gives_points_but_no_interval():
    reach = reach_rows("block", [(0, 1, 2, 0.9, 0.9, "learned"), (2, 1, 2, 0.9, 0.7, "learned")])
    points, intervals = interactions(reach)
    assert points["interaction"].tolist() == pytest.approx([0.2]) and intervals.empty


def ptb_runs():
    """Two designs, two lengths, two seeds; one run that did not learn and one that diverged."""
    rows = []
    for design, values in (("equal tokens", {10: 240.0, 70: 320.0}), ("equal updates", {10: 360.0, 70: 250.0})):
        for k, value in values.items():
            rows += [{"design": design, "bptt": k, "seed": s, "outcome": "learned", "value": value + s} for s in (1, 2)]
    rows.append({"design": "equal updates", "bptt": 10, "seed": 3, "outcome": "did not learn", "value": 900.0})
    rows.append({"design": "equal updates", "bptt": 70, "seed": 3, "outcome": "diverged", "value": math.nan})
    return pd.DataFrame(rows)


def _points(ax):
    """The round markers drawn as single points (no line between them) on ``ax``: seeds, not means."""
    found = []
    for line in ax.get_lines():
        if line.get_linestyle() in ("None", "") and line.get_marker() == "o":
            found += list(zip(line.get_xdata(), line.get_ydata(), strict=True))
    return found


def test_the_figure_draws_each_seed_and_the_tested_interval(sentence_cuts, stream):
    fig = truncation_figure(
        {"sentence cuts": sentence_cuts, "stream segments": stream}, ptb_runs(), metric="validation perplexity"
    )
    within_across, middle, ptb = fig.axes[:3]
    # (a): the two learned seeds of the cut run and of full BPTT, each a within and an across marker
    markers = [xy for line in within_across.get_lines() for xy in zip(line.get_xdata(), line.get_ydata(), strict=True)]
    assert sorted(y for _, y in markers if y == pytest.approx(0.1)) == []  # the seed that did not learn is not drawn
    assert {round(y, 2) for _, y in markers} >= {0.92, 0.9, 0.94, 0.8, 0.7}
    # (b): every seed's interaction as a point, and each study's mean with its interval
    ys = sorted(round(float(y), 4) for _, y in _points(middle))
    assert ys == [0.08, 0.09, 0.16, 0.19]
    bars = [c for c in middle.containers if hasattr(c, "lines")]
    assert sorted(round(float(y), 4) for c in bars for y in c.lines[0].get_ydata()) == [0.12, 0.14]
    assert {round(line.get_ydata()[0], 4) for line in middle.get_lines() if len(line.get_ydata()) == 2} >= {
        0.0,
        ACCURACY_MARGIN,
    }
    # (c): a learned seed a point; the failed run hollow at its value; the diverged one a cross, never a point
    assert (10.0, 900.0) in [(float(x), float(y)) for x, y in _points(ptb)]
    crosses = [line for line in ptb.get_lines() if line.get_marker() == "x" and len(line.get_xdata())]
    assert len(crosses) == 1 and list(crosses[0].get_xdata()) == [70]
    assert ptb.get_ylabel() == "validation perplexity"
    plt.close(fig)


def test_without_ptb_runs_the_figure_has_two_panels(sentence_cuts):
    fig = truncation_figure({"sentence cuts": sentence_cuts}, ptb_runs().iloc[0:0], metric="")
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2
    plt.close(fig)
