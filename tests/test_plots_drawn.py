"""What a figure draws, counted from its artists, and the book's rule that a figure drawing too little is not
shown; a never-clip setting as a position of its own; figures legible at the book's print width, without a
source note inside the image. Planted data through the real plotting, job and staging code."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import matplotlib.transforms as mtransforms
import numpy as np
import pandas as pd
import pytest
from test_plots import study, summary

from rnnbench import jobs, paths
from rnnbench.book import figures, studies, study_sections
from rnnbench.plots import style
from rnnbench.plots.decay_figures import BOOK_FIGURES, DecadeLocator, decay_curves_figure
from rnnbench.plots.drawn import drawn_points, shows
from rnnbench.plots.study_figures import study_figure

PROVENANCE = {"config": {}, "config_files": [], "command": "pytest", "checkout": "."}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_points_are_counted_from_lines_scatters_bars_and_heatmap_cells_not_from_reference_marks():
    """Left: a line of 3 vertices and 2 scatter points at x = 1 and 5 (3 + 2 = 5 points, at 1, 2, 3, 5: 4
    positions), plus what is not a point: a band, a horizontal line across the axes, a cross on the top edge.
    Middle: 3 bars. Right: a 2 x 3 heatmap with one empty cell (5 cells, at 3 columns), and its colour bar,
    which is no panel."""
    fig, (left, middle, right) = plt.subplots(1, 3)
    left.plot([1, 2, 3], [1.0, 2.0, 3.0])
    left.scatter([1, 5], [2.0, 2.5])
    left.fill_between([1, 2, 3], [0, 1, 2], [2, 3, 4])
    left.axhline(1.5)
    edge = mtransforms.blended_transform_factory(left.transData, left.transAxes)
    left.scatter([4], [0.96], transform=edge, marker="x")
    left.plot([], [])  # a legend entry without data
    middle.bar([0, 1, 2], [3.0, 1.0, 2.0])
    mesh = right.pcolormesh(np.ma.masked_invalid([[0.1, 0.2, 0.3], [0.4, np.nan, 0.6]]))
    fig.colorbar(mesh, ax=right)
    drawn = drawn_points(fig)
    assert drawn["panels"] == [
        {"points": 5, "positions": 4, "curves": 1, "longest": 3},
        {"points": 3, "positions": 3, "curves": 0, "longest": 3},
        {"points": 5, "positions": 3, "curves": 0, "longest": 5},
    ]
    assert drawn["points"] == 13 and shows(drawn)


@pytest.mark.parametrize(
    "panels, shown",
    [
        ([{"points": 1, "positions": 1}], False),  # one point
        ([{"points": 4, "positions": 1}], False),  # three seeds and their mean, at one setting
        ([{"points": 0, "positions": 0}], False),  # an empty figure
        ([{"points": 12, "positions": 1}, {"points": 12, "positions": 12}], False),  # curves of one epoch each
        ([{"points": 2, "positions": 2}], True),
        ([{"points": 3, "positions": 3, "curves": 3, "longest": 1}], False),  # three runs of one epoch, one dot each
        ([{"points": 4, "positions": 2, "curves": 2, "longest": 2}], True),  # two seeds' means, seeds scattered
        ([{"points": 3, "positions": 3, "curves": 0, "longest": 1}], True),  # runs as dots, none meant to be joined
        ([], False),
    ],
)
def test_a_figure_is_shown_only_with_two_points_apart_in_every_panel(panels, shown):
    assert shows({"points": sum(p["points"] for p in panels), "panels": panels}) is shown


def _study_folder(tmp_path: Path, name: str, rows, setting="hidden", metric="test_ppl") -> Path:
    """A study's summary.csv and study.json under results/studies/<name>/, from test_plots.summary rows."""
    folder = tmp_path / "results" / "studies" / name
    folder.mkdir(parents=True)
    table = summary(rows, metric=metric, setting=setting).assign(study=name, corpus="ptb")
    table = pd.concat([table, table[table["metric"] == metric].assign(metric="valid_ppl")], ignore_index=True)
    table.to_csv(folder / "summary.csv", index=False)
    about = {**study(setting, metric), "name": name, "corpus": "ptb", "seeds": [1, 2, 3]}
    about["run_ids"] = list(dict.fromkeys(table["run_id"]))
    (folder / "study.json").write_text(json.dumps(about))
    return folder


def _draw_study(folder: Path) -> str:
    """The study's figure through its job, as the workflow draws it; returns its PNG."""
    png = str(folder / "figure.png")
    jobs.study_figure(
        str(folder / "summary.csv"),
        str(folder / "study.json"),
        [png, str(folder / "figure.pdf")],
        provenance_file=paths.provenance(png),
        provenance=PROVENANCE,
    )
    return png


def test_a_study_of_one_setting_gets_a_table_and_no_figure(tmp_path):
    """Three seeds at hidden = 200 draw 3 seed points and a mean, 4 points, all at x = 200: its record says so,
    staging refuses the figure, and the study's section prints its table alone."""
    folder = _study_folder(tmp_path, "one", [(200, 1, 160.0, 0), (200, 2, 162.0, 0), (200, 3, 157.0, 0)])
    png = _draw_study(folder)
    record = json.loads(Path(paths.provenance(png)).read_text())
    assert record["drawn"] == {"points": 4, "panels": [{"points": 4, "positions": 1, "curves": 1, "longest": 3}]}
    assert not figures.figure_shown(png)
    with pytest.raises(figures.TooFewPoints):
        figures.stage_figure(png, "study-one", tmp_path / "staged")
    section = study_sections.study_section("one", tmp_path / "results", staging=tmp_path / "staged")
    assert "![" not in section and "@fig-study-one" not in section
    assert "{#tbl-study-one}" in section and "fewer than two settings, too few for a figure" in section
    assert not (tmp_path / "staged").exists()


def test_every_figure_the_book_shows_draws_two_points_apart_in_every_panel(tmp_path):
    """Two studies through the real job and section code: one of two settings (shown), one whose runs all
    diverged (nothing drawn: not shown). Whatever the section stages, its record has at least two points at
    two positions in every panel."""
    two = _study_folder(tmp_path, "two", [(100, 1, 170.0, 0), (100, 2, 172.0, 0), (200, 1, 160.0, 0)])
    gone = _study_folder(tmp_path, "gone", [(100, 1, float("nan"), 1), (200, 1, float("nan"), 1)])
    for folder in (two, gone):
        _draw_study(folder)
        study_sections.study_section(folder.name, tmp_path / "results", staging=tmp_path / "staged")
    staged = sorted(p.stem for p in (tmp_path / "staged").glob("*.png"))
    assert staged == ["study-two"]
    for name in ("two", "gone"):
        drawn = json.loads((tmp_path / "results" / "studies" / name / "figure.provenance.json").read_text())["drawn"]
        on_show = f"study-{name}" in staged
        assert on_show == all(p["points"] >= 2 and p["positions"] >= 2 for p in drawn["panels"]), name


def _draw_learning(tmp_path, folder, learning: pd.DataFrame) -> dict:
    """Study "short"'s learning table written and its learning-curves figure drawn by the job; what the figure's
    record says it drew."""
    table = paths.study_extra_table(str(tmp_path / "results"), "short", "learning")
    learning.to_csv(table, index=False)
    png = paths.study_extra_figure(str(tmp_path / "results"), "short", "learning-curves", "png")
    jobs.study_extra_figure(
        "learning-curves",
        table,
        str(folder / "study.json"),
        [png, png[:-3] + "pdf"],
        provenance_file=paths.provenance(png),
        provenance=PROVENANCE,
    )
    return json.loads(Path(paths.provenance(png)).read_text())["drawn"]


def test_learning_curves_of_one_epoch_are_not_shown_and_their_table_is(tmp_path):
    """Two runs of one epoch each: one dot per run in each panel, both dots at the same tokens read; the
    figure is refused and the book's learning table gives each run's epoch instead."""
    folder = _study_folder(tmp_path, "short", [(100, 1, 300.0, 0), (200, 1, 280.0, 0)])
    learning = pd.DataFrame(
        {
            "run_id": ["run-0", "run-1"],
            "hidden": [100, 200],
            "seed": [1, 1],
            "epoch": [1, 1],
            "valid_ppl": [310.0, 290.0],
            "tokens_seen": [465000, 465000],
            "seconds_trained": [8.0, 9.5],
            "outcome": ["learned", "learned"],
            "diverged": [False, False],
        }
    )
    _draw_learning(tmp_path, folder, learning)
    assert not studies.extra_shown("short", "learning-curves", tmp_path / "results")
    shown = studies.learning_display("short", tmp_path / "results")
    assert list(shown.columns) == [
        "hidden",
        "seed",
        "epoch",
        "tokens read",
        "seconds trained",
        "validation perplexity",
        "outcome",
    ]
    assert shown["tokens read"].tolist() == ["465,000", "465,000"]
    assert shown["validation perplexity"].tolist() == ["310", "290"]


def test_learning_curves_of_one_epoch_at_different_token_counts_are_not_shown_either(tmp_path):
    """Three runs of one epoch that read different numbers of tokens (a window or truncation length drops a
    different remainder): one dot per run, at three positions in each panel. Each run is one point, so the figure
    is refused all the same, and the book prints the learning table; a run of two epochs beside them is a curve,
    and the figure is shown."""
    folder = _study_folder(tmp_path, "short", [(100, 1, 300.0, 0), (200, 1, 280.0, 0), (400, 1, 270.0, 0)])
    learning = pd.DataFrame(
        {
            "run_id": ["run-0", "run-1", "run-2"],
            "hidden": [100, 200, 400],
            "seed": [1, 1, 1],
            "epoch": [1, 1, 1],
            "valid_ppl": [310.0, 290.0, 280.0],
            "tokens_seen": [464990, 465000, 464980],
            "seconds_trained": [8.0, 9.5, 12.0],
            "outcome": ["learned", "learned", "learned"],
            "diverged": [False, False, False],
        }
    )
    drawn = _draw_learning(tmp_path, folder, learning)
    assert all(p["positions"] == 3 and p["curves"] == 3 and p["longest"] == 1 for p in drawn["panels"])
    assert not studies.extra_shown("short", "learning-curves", tmp_path / "results")
    png = paths.study_extra_figure(str(tmp_path / "results"), "short", "learning-curves", "png")
    with pytest.raises(figures.TooFewPoints):
        figures.stage_figure(png, "study-short-learning-curves", tmp_path / "staged")
    assert studies.learning_display("short", tmp_path / "results")["epoch"].tolist() == [1, 1, 1]

    second = learning.iloc[[2]].assign(epoch=2, valid_ppl=250.0, tokens_seen=929960, seconds_trained=24.0)
    drawn = _draw_learning(tmp_path, folder, pd.concat([learning, second], ignore_index=True))
    assert all(p["longest"] == 2 for p in drawn["panels"])
    assert studies.extra_shown("short", "learning-curves", tmp_path / "results")


def test_a_study_of_one_seed_whose_runs_did_not_learn_draws_one_point_per_network_and_gets_a_table(tmp_path):
    """Two settings, one seed, neither run learned: two
    hollow circles at two positions, one per network, no line through them. The figure marks its panel as one
    point per run, the book refuses it and the section lists the runs in its table; the same study with a second
    seed, or with runs that learned (a line through two means), keeps its figure."""
    failed = "did not learn"
    alone = _study_folder(tmp_path, "alone", [(16, 1, 3900.0, 0, failed), (32, 1, 3000.0, 0, failed)])
    png = _draw_study(alone)
    drawn = json.loads(Path(paths.provenance(png)).read_text())["drawn"]
    assert drawn["panels"][0]["alone"] and drawn["panels"][0]["positions"] == 2
    assert not figures.figure_shown(png)
    section = study_sections.study_section("alone", tmp_path / "results", staging=tmp_path / "staged")
    assert "![" not in section and "a point of its own" in section
    for name, rows in (
        ("seeds", [(16, 1, 3900.0, 0, failed), (16, 2, 3800.0, 0, failed), (32, 1, 3000.0, 0, failed)]),
        ("learned", [(16, 1, 160.0, 0), (32, 1, 150.0, 0)]),
    ):
        assert figures.figure_shown(_draw_study(_study_folder(tmp_path, name, rows))), name


def test_a_record_without_counts_is_refused_with_how_to_redraw_it(tmp_path):
    png = tmp_path / "figure.png"
    png.write_bytes(b"x")
    (tmp_path / "figure.provenance.json").write_text(json.dumps({"producer": "an older build"}))
    with pytest.raises(ValueError, match="does not say how many points"):
        figures.figure_shown(png)


def test_never_clipping_is_a_labelled_position_of_its_own_right_of_the_thresholds():
    """Thresholds 0.5, 2 and 5 and clip = inf: the mean line joins the three numbers only (means 300, 250, 240)
    and the never-clip runs (mean 260) sit at a finite position right of 5, past a dotted line, labelled
    "no clipping"; the numbers keep their own ticks."""
    rows = [
        (0.5, 1, 300.0, 0),
        (2.0, 1, 250.0, 0),
        (5.0, 1, 240.0, 0),
        (math.inf, 1, 250.0, 0),
        (math.inf, 2, 270.0, 0),
    ]
    table = summary(rows, metric="test_ppl", setting="clip_times_median")
    ax = study_figure(table, study("clip_times_median", "test_ppl")).axes[0]
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["0.5", "2", "5", "no clipping"]
    ticks = ax.get_xticks()
    assert np.isfinite(ticks).all() and ticks[-1] > ticks[-2] == 5.0
    joined = [line for line in ax.get_lines() if len(line.get_xdata()) > 1 and line.get_linestyle() == "-"]
    assert [list(line.get_xdata()) for line in joined] == [[0.5, 2.0, 5.0]]
    assert np.allclose(joined[0].get_ydata(), [300.0, 250.0, 240.0])
    alone = [line for line in ax.get_lines() if list(line.get_xdata()) == [ticks[-1]] and line.get_marker() == "o"]
    assert [list(line.get_ydata()) for line in alone] == [[260.0]]  # the never-clip mean, on no line
    separator = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert len(separator) == 1 and 5.0 < separator[0].get_xdata()[0] < ticks[-1]


def test_legends_and_rows_name_an_infinite_threshold_no_clipping():
    assert style.setting_value("clip", math.inf) == "no clipping"
    assert style.setting_value("bptt", 0) == "full sentence"
    assert style.setting_value("clip", 0.25) == "0.25"


def _decay_curves(levels) -> pd.DataFrame:
    rows = []
    for activation in ("relu", "sigmoid", "tanh"):
        for radius in levels:
            for direction, method in (("backward", "one_pass"), ("forward", "jvp")):
                for distance in range(20):
                    value = radius**distance
                    rows.append(
                        {
                            "quantity": "h",
                            "direction": direction,
                            "method": method,
                            "activation": activation,
                            "radius": radius,
                            "distance": distance,
                            "median": value,
                            "q10": value / 2,
                            "q90": value * 2,
                        }
                    )
    return pd.DataFrame(rows)


def test_decay_curves_print_at_the_books_width_with_legible_ticks_and_levels_told_apart():
    """Three panels of six radii: drawn at the print width, so an 8-point tick prints at 8 points (drawn 10
    inches wide and printed at 6, it would shrink to under 5); each radius its own colour and line style."""
    fig = decay_curves_figure(_decay_curves([0.5, 0.9, 1.0, 1.1, 1.5, 2.0]), hue="radius", panel="activation")
    assert fig.get_figwidth() <= style.PRINT_WIDTH
    ax = fig.axes[0]
    assert min(t.get_fontsize() for t in ax.get_yticklabels() + ax.get_xticklabels()) >= 8
    first = {(line.get_color(), str(line.get_linestyle())) for line in ax.get_lines() if len(line.get_xdata())}
    colours = {c for c, _ in first}
    styles = {s for _, s in first}
    assert len(first) == 6 and len(colours) == 6 and len(styles) >= 4  # four named styles, then dash patterns


def test_a_log_axis_over_many_decades_is_labelled_at_round_steps():
    """10^-210 to 10^18: steps of 50 decades, at most seven labels; 10^-24 to 10^8: steps of 5."""
    assert DecadeLocator().tick_values(1e-210, 1e18) == [1e-200, 1e-150, 1e-100, 1e-50, 1.0]
    assert DecadeLocator().tick_values(1e-24, 1e8) == [1e-20, 1e-15, 1e-10, 1e-05, 1.0, 1e5]


def test_a_log_axis_over_more_than_a_decade_labels_no_minor_tick():
    fig, ax = plt.subplots()
    ax.plot([150, 3e6], [1, 2])
    ax.set_xscale("log")
    style.plain_log_ticks(ax, "x")
    fig.canvas.draw()
    assert all(t.get_text() == "" for t in ax.xaxis.get_minorticklabels())
    ax.set_xlim(150, 600)  # within a decade, over more than a factor of three: labels at 2, 3 and 5 hundred
    fig.canvas.draw()
    shown = [t.get_text() for t in ax.xaxis.get_minorticklabels() if t.get_text() and 150 <= t.get_position()[0] <= 600]
    assert shown == ["200", "300", "500"]
    ax.set_xlim(150, 400)  # within a factor of three: every minor tick
    fig.canvas.draw()
    shown = [t.get_text() for t in ax.xaxis.get_minorticklabels() if t.get_text() and 150 <= t.get_position()[0] <= 400]
    assert shown == ["200", "300", "400"]


@pytest.mark.parametrize("name", sorted(BOOK_FIGURES))
def test_no_figure_prints_its_source_inside_the_image(name):
    """The caption names the file; the image carries no note of it (the worked figures and a study's)."""
    tables = {
        "decay": pd.DataFrame(
            {"factor": [0.5, 0.5, 0.9, 0.9], "distance": [1, 2, 1, 2], "value": [0.5, 0.25, 0.9, 0.81]}
        ),
        "jacobian_product": pd.DataFrame(
            {
                "spectral_radius": [0.9, 0.9, 1.5, 1.5],
                "distance": [1, 2, 1, 2],
                "jacobian_norm": [0.8, 0.6, 1.2, 1.1],
                "u_power_norm": [0.9, 0.81, 1.5, 2.25],
            }
        ),
    }
    for fig in (
        BOOK_FIGURES[name](tables[name]),
        study_figure(summary([(2, 1, 0.5, 0), (4, 1, 0.6, 0)], setting="bptt"), study("bptt")),
    ):
        assert [t.get_text() for t in fig.texts] == []


def test_the_published_learning_curves_give_way_to_a_table_when_every_run_trained_one_epoch(tmp_path):
    """Two runs of one epoch on one corpus: both dots at 929,588 tokens in the one panel, so the figure is
    refused and the chapter's table gives each run's epoch."""
    from rnnbench.book import published

    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    curves = pd.DataFrame(
        {
            "corpus": ["ptb", "ptb"],
            "scale": ["short", "short"],
            "family": ["ff", "rnn"],
            "run_id": ["ff-1", "rnn-1"],
            "studies": ["a", "b"],
            "seed": [1, 1],
            "status": ["epoch cap", "epoch cap"],
            "epoch": [1, 1],
            "lr": [0.002, 0.002],
            "train_ppl": [290.0, 300.0],
            "valid_ppl": [225.8, 240.0],
            "tokens_seen": [929588, 929588],
            "seconds_trained": [22.8, 30.1],
        }
    )
    table = results / "tables" / "learning_curves.csv"
    curves.to_csv(table, index=False)
    png = paths.book_figure(str(results), paths.LEARNING_CURVES_FIGURE, "png")
    Path(png).parent.mkdir(parents=True, exist_ok=True)
    jobs.learning_curves_figure(
        str(table), [png, png[:-3] + "pdf"], provenance_file=paths.provenance(png), provenance=PROVENANCE
    )
    assert not figures.book_figure_shown(paths.LEARNING_CURVES_FIGURE, results)
    shown = published.learning_display(results)
    assert shown["family"].tolist() == ["feed-forward n-gram network", "Elman RNN"]
    assert shown["tokens read"].tolist() == ["929,588", "929,588"]
    assert shown["validation perplexity"].tolist() == ["226", "240"]
