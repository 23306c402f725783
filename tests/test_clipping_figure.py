"""The clipping figure (rnnbench.plots.clipping_figure), on planted summaries whose answers are known: which runs it
reads, each setting's regime from its share of steps clipped, and what each panel draws."""

from __future__ import annotations

import math
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from rnnbench import paths
from rnnbench.book.clipping import CLIPPING_ROLE
from rnnbench.findings.clipping import ROLE
from rnnbench.metrics import CLIP_ORDINARY, CLIP_SPIKES
from rnnbench.plots import clipping_figure as cf
from rnnbench.plots.style import DIVERGED_COLOR

RECORD = {
    "name": "relative",
    "corpus": "ptb",
    "metric": "test_ppl",
    "vary": ["clip_times_median", "lr"],
    "fixed": {"optimizer": "sgd", "clip_mode": "norm"},
}


def _summary(runs: list[dict]) -> pd.DataFrame:
    """A study's long summary (rule study_summary's columns) from one dict per run."""
    rows = []
    for i, run in enumerate(runs):
        keys = {"study": "relative", "run_id": f"rnn-ptb-{i:010d}", "seed": run["seed"], "outcome": run["outcome"]}
        keys |= {"clip_times_median": run["times"], "lr": run["lr"]}
        values = {"clipped_fraction": run["share"], "test_ppl": run.get("ppl", math.nan), "clip_threshold": 0.4}
        rows += [{**keys, "metric": m, "value": v} for m, v in values.items()]
    return pd.DataFrame(rows)


# Rate 1: 0.5 x median clips ordinary steps, every one (both seeds learn, 30 and 32), 2 x median rare spikes (2% and 6%,
# mean 4%; 24 and 26), unclipped learns (20 and 22, mean 21). Rate 5: 2 x median clips half the steps and one seed
# diverges; unclipped diverges twice.
RUNS = [
    {"times": 0.5, "lr": 1.0, "seed": 1, "outcome": "learned", "share": 1.0, "ppl": 30.0},
    {"times": 0.5, "lr": 1.0, "seed": 2, "outcome": "learned", "share": 1.0, "ppl": 32.0},
    {"times": 2.0, "lr": 1.0, "seed": 1, "outcome": "learned", "share": 0.02, "ppl": 24.0},
    {"times": 2.0, "lr": 1.0, "seed": 2, "outcome": "learned", "share": 0.06, "ppl": 26.0},
    {"times": "inf", "lr": 1.0, "seed": 1, "outcome": "learned", "share": 0.0, "ppl": 20.0},
    {"times": "inf", "lr": 1.0, "seed": 2, "outcome": "learned", "share": 0.0, "ppl": 22.0},
    {"times": 2.0, "lr": 5.0, "seed": 1, "outcome": "diverged", "share": 0.6},
    {"times": 2.0, "lr": 5.0, "seed": 2, "outcome": "did not learn", "share": 0.4, "ppl": 90.0},
    {"times": "inf", "lr": 5.0, "seed": 1, "outcome": "diverged", "share": 0.0},
    {"times": "inf", "lr": 5.0, "seed": 2, "outcome": "diverged", "share": 0.0},
]


@pytest.fixture()
def runs() -> pd.DataFrame:
    other = {**RECORD, "vary": ["clip"], "fixed": {"optimizer": "adam", "clip_mode": "norm", "lr": 0.002}}
    absolute = _summary(RUNS).drop(columns="clip_times_median").assign(clip=0.25)  # a typed threshold: left out
    return cf.relative_runs([(_summary(RUNS), RECORD), (absolute, other)])


def test_relative_runs_reads_the_studies_with_thresholds_from_a_measured_norm(runs):
    assert len(runs) == len(RUNS)  # the study with a typed threshold is not read
    assert set(runs["optimizer"]) == {"sgd"}  # fixed by the record
    assert runs["unclipped"].tolist() == [t == "inf" for t in (r["times"] for r in RUNS)]
    assert runs.loc[runs["unclipped"], "times"].eq(math.inf).all()
    assert runs["value"].iloc[0] == 30.0 and math.isnan(runs["value"].iloc[6])  # a diverged run has no perplexity


def test_each_setting_is_in_the_regime_its_multiple_of_the_median_sets_whatever_it_clipped(runs):
    found = cf.settings(runs).set_index(["lr", "times"])
    assert found.loc[(1.0, 0.5), "regime"] == CLIP_ORDINARY
    assert found.loc[(1.0, 2.0), "share"] == pytest.approx(0.04)  # (2% + 6%) / 2
    assert found.loc[(1.0, 2.0), "regime"] == CLIP_SPIKES
    # over every run, the diverged one's too: (60% + 40%) / 2; twice the median stays in the rare-spike regime
    assert found.loc[(5.0, 2.0), "share"] == pytest.approx(0.5)
    assert found.loc[(5.0, 2.0), "regime"] == CLIP_SPIKES
    assert found.loc[(5.0, math.inf), "regime"] == cf.UNCLIPPED
    assert found.loc[(5.0, math.inf), ["runs", "diverged"]].tolist() == [2, 2]


def _crosses(ax) -> int:
    """Red crosses drawn in an axis: one per diverged seed."""
    return sum(
        len(c.get_offsets()) for c in ax.collections if np.allclose(c.get_edgecolor()[:1, :3], _rgb(DIVERGED_COLOR))
    )


def _rgb(color: str) -> np.ndarray:
    from matplotlib.colors import to_rgb

    return np.array([to_rgb(color)])


def test_the_figure_draws_each_rate_with_its_divergences_costs_and_shares(runs):
    fig = cf.clipping_figure(runs)
    strips, panels = fig.axes[0:2], fig.axes[2:4]
    assert [s.get_title() for s in strips] == ["SGD, rate 1", "SGD, rate 5"]
    assert [_crosses(s) for s in strips] == [0, 3]  # one seed at 2 x median, both unclipped seeds at rate 5
    # tightest threshold first, then no clipping after a gap; under each, its share of steps clipped
    ticks = [t.get_text() for t in panels[0].get_xticklabels()]
    assert ticks == ["0.5×\n100%", "2×\n4%", "none\n–"]
    assert list(panels[0].get_xticks()) == [0, 1, 3]
    # the seeds that did not diverge at their value: 2 + 2 + 2 at rate 1, the one that did not learn at rate 5
    drawn = [np.asarray(c.get_offsets())[:, 1] for c in panels[0].collections if len(c.get_offsets())]
    assert sorted(np.concatenate(drawn)) == [20.0, 22.0, 24.0, 26.0, 30.0, 32.0]
    hollow = [c for c in panels[1].collections if len(c.get_offsets())]
    # the seed that did not learn, at 90, is above twice the largest learned value (2 x 32 = 64): the shared axis
    # stops at 64 and the seed is a triangle on its top edge, its value written beside it
    assert panels[0].get_ylim()[1] == 64.0
    assert len(hollow) == 1 and np.asarray(hollow[0].get_offsets())[0, 1] == pytest.approx(0.97 * 64)
    assert [text.get_text() for text in panels[1].texts] == ["90"]
    # the unclipped mean, (20 + 22) / 2, where the unclipped seeds learned; none where they diverged
    assert [line.get_ydata()[0] for line in panels[0].get_lines() if line.get_linestyle() == "--"] == [21.0]
    assert [line for line in panels[1].get_lines() if line.get_linestyle() == "--"] == []
    plt.close(fig)


def test_the_figure_reads_the_studies_the_config_gives_the_role_and_a_relative_threshold():
    # one role, spelled in each layer that finds it
    assert paths.CLIPPING_ROLE == ROLE == CLIPPING_ROLE

    def study(roles, vary, fixed=None):  # what clipping_figure_studies reads of a config's study
        return SimpleNamespace(roles=tuple(roles), vary=vary, fixed=fixed or {})

    sgd = {"optimizer": "sgd"}
    config = SimpleNamespace(
        run={"optimizer": "adam"},
        studies={
            "relative": study([ROLE], {"clip_times_median": (0.5, math.inf), "lr": (1.0, 5.0)}, sgd),
            "fixed_multiple": study([ROLE], {"lr": (1.0, 5.0)}, {"clip_times_median": 2.0, **sgd}),
            "typed": study([ROLE], {"clip": (0.25, math.inf)}, sgd),
            "unjudged": study([], {"clip_times_median": (0.5, math.inf)}, sgd),  # no role: not evidence about clipping
            "adam": study([ROLE], {"clip_times_median": (0.5, math.inf)}),  # the run block's Adam: not the figure's
        },
    )
    assert paths.clipping_figure_studies(config) == ["relative", "fixed_multiple"]


def test_a_perplexity_far_above_every_learned_one_caps_the_axis_at_twice_the_largest_learned():
    # learned seeds at 355 and 440; a seed that blew up without diverging ended at 40,871: the axis stops at 2 x 440
    runs = pd.DataFrame(
        {
            "metric": "test_ppl",
            "outcome": ["learned", "learned", "did not learn", "diverged"],
            "value": [355.0, 440.0, 40_871.0, math.nan],
        }
    )
    assert cf.value_cap(runs) == 880.0
    assert cf.value_cap(runs.iloc[[0, 1, 3]]) is None  # nothing above 880: the axis is left to fit the values
    accuracy = runs.assign(metric="agreement_accuracy", value=[0.9, 0.95, 0.5, math.nan])
    assert cf.value_cap(accuracy) is None
