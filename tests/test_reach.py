"""Accuracy within reach of a truncation length and beyond it, per run (rnnbench.results.reach): the splits worked by
hand, the lengths each run is split at, the study's table, and the interaction read from it."""

import math

import pandas as pd
import pytest

from rnnbench.results.ablations import runs_frame, study_extras
from rnnbench.results.reach import REACH_COLUMNS, reach_lengths, reach_rows, reach_table

# One run's probes split by cuts every 3 steps (rnnbench.results.cut_accuracy.cut_accuracy): distance 1 never crosses,
# distance 3 = k crosses where the head sits at the end of a block, distance 4 > k always crosses.
CUTS_AT_3 = pd.DataFrame(
    [
        (3, 1, False, 100, 0.9),
        (3, 3, False, 40, 0.8),
        (3, 3, True, 60, 0.6),
        (3, 4, True, 50, 0.5),
    ],
    columns=["cut_every", "distance", "crosses_cut", "n", "accuracy"],
)


def test_the_distance_split_pools_every_probe_up_to_k_against_those_past_it():
    rows = reach_rows(CUTS_AT_3, 3, block=False).set_index("split")
    assert list(rows.index) == ["distance"]
    # within: 90 + 32 + 36 = 158 correct of 200; beyond: 25 of 50
    assert rows.loc["distance", "within_probes"] == 200 and rows.loc["distance", "beyond_probes"] == 50
    assert rows.loc["distance", "within_accuracy"] == pytest.approx(0.79)
    assert rows.loc["distance", "beyond_accuracy"] == pytest.approx(0.5)
    assert rows.loc["distance", "gap"] == pytest.approx(0.29)


def test_the_block_split_sets_head_and_verb_in_one_block_against_a_cut_between():
    rows = reach_rows(CUTS_AT_3, 3, block=True).set_index("split")
    assert list(rows.index) == ["distance", "block"] and list(rows.columns) == [
        c for c in REACH_COLUMNS if c != "split"
    ]
    # within a block: 90 + 32 = 122 of 140; across a cut: 36 + 25 = 61 of 110
    assert rows.loc["block", "within_probes"] == 140 and rows.loc["block", "beyond_probes"] == 110
    assert rows.loc["block", "within_accuracy"] == pytest.approx(122 / 140)
    assert rows.loc["block", "beyond_accuracy"] == pytest.approx(61 / 110)


def test_a_length_past_every_distance_has_nothing_beyond():
    rows = reach_rows(CUTS_AT_3.assign(cut_every=20), 20, block=False)
    assert rows["beyond_probes"].tolist() == [0]
    assert math.isnan(rows["beyond_accuracy"].iloc[0]) and math.isnan(rows["gap"].iloc[0])


def test_a_truncated_run_is_split_at_its_own_k_and_full_bptt_at_every_k_of_its_study():
    assert reach_lengths(5, "stream", [2, 5, 10], []) == [(5, False)]  # stream cuts fall anywhere in a sentence
    assert reach_lengths(5, "sentence", [2, 5], [2, 5]) == [(5, True)]
    assert reach_lengths(0, "stream", [10, 2, 5], []) == [(2, False), (5, False), (10, False)]
    assert reach_lengths(0, "stream", [2, 5, 10], [2, 5, 10]) == [(2, True), (5, True), (10, True)]


def test_agreement_studies_of_a_recurrence_that_vary_the_length_get_the_table():
    assert "reach" in study_extras("agreement", ["bptt"], "agreement_accuracy")
    assert "reach" not in study_extras("agreement", ["clip"], "agreement_accuracy")
    assert "reach" not in study_extras("agreement", ["context"], "agreement_accuracy", family="ff")
    assert "reach" not in study_extras("ptb", ["bptt"], "test_ppl")


def runs_and_rows():
    """Full-sentence BPTT (two seeds) and k = 3 cut within sentences (two seeds, one of which did not learn)."""
    record = {"name": "t", "run_ids": ["f1", "f2", "c1", "c2"], "vary": ["bptt"]}
    points = [{"bptt": 0, "seed": 1}, {"bptt": 0, "seed": 2}, {"bptt": 3, "seed": 1}, {"bptt": 3, "seed": 2}]
    outcomes = {"f1": "learned", "f2": "learned", "c1": "learned", "c2": "did not learn"}
    runs = runs_frame(record, points, outcomes)

    def at(within, beyond):
        return reach_rows(
            pd.DataFrame(
                [(3, 2, False, 100, within), (3, 5, True, 100, beyond)],
                columns=["cut_every", "distance", "crosses_cut", "n", "accuracy"],
            ),
            3,
            block=True,
        )

    per_run = {"f1": at(0.95, 0.85), "f2": at(0.93, 0.87), "c1": at(0.9, 0.6), "c2": at(0.52, 0.5)}
    return runs, per_run


def test_the_study_table_has_a_row_per_run_length_and_split_with_its_outcome():
    runs, per_run = runs_and_rows()
    table = reach_table(runs, per_run, ["bptt"])
    assert list(table.columns) == ["run_id", "bptt", "seed", "outcome", *REACH_COLUMNS]
    assert len(table) == 4 * 2  # four runs, each at k = 3, by distance and by blocks
    assert table.loc[table["run_id"] == "c2", "outcome"].unique().tolist() == ["did not learn"]


def test_the_interaction_is_the_truncated_gap_less_full_bptt_s_on_the_same_probes():
    # the reading the claim's rule makes: at k = 3, by distance, over the seeds that learned
    runs, per_run = runs_and_rows()
    table = reach_table(runs, per_run, ["bptt"])
    rows = table[(table["split"] == "distance") & (table["cut_every"] == 3) & (table["outcome"] == "learned")]
    truncated = rows.loc[rows["bptt"] == 3, "gap"]  # 0.3 (seed 2 did not learn: left out)
    full = rows.loc[rows["bptt"] == 0, "gap"]  # 0.10 and 0.06
    assert truncated.tolist() == pytest.approx([0.3]) and full.tolist() == pytest.approx([0.1, 0.06])
    assert truncated.mean() - full.mean() == pytest.approx(0.22)


def test_a_run_that_did_not_diverge_needs_its_rows():
    runs, per_run = runs_and_rows()
    del per_run["c1"]
    with pytest.raises(ValueError, match=r"runs \['c1'\] did not diverge but have no accuracy within and beyond"):
        reach_table(runs, per_run, ["bptt"])


def test_a_runs_rows_scored_again_pool_to_its_agreement_table(tmp_path, cache_dir):
    # rule study_extra_table ("reach") scores each run's probes from its model.pt: within and beyond together are
    # every probe of the agreement.csv its training wrote, and the distance split is that table's, pooled
    from test_train import tiny

    from rnnbench.results.cut_scoring import reach_by_run, scored_table
    from rnnbench.training.loop import train_run

    configs = [tiny(bptt=0, max_epochs=1), tiny(bptt=3, segments="sentence", max_epochs=1), tiny(bptt=5, max_epochs=1)]
    for cfg in configs:
        train_run(cfg, tmp_path / cfg.run_id, cache_dir=cache_dir)
    runs = pd.DataFrame({"run_id": [c.run_id for c in configs], "diverged": False})
    models = {c.run_id: str(tmp_path / c.run_id / "model.pt") for c in configs}
    tables = reach_by_run(runs, models, data_dir=None, cache_dir=str(cache_dir))
    full, cut, stream = (tables[c.run_id] for c in configs)
    assert full[["cut_every", "split"]].values.tolist() == [[3, "distance"], [3, "block"], [5, "distance"]]
    assert cut[["cut_every", "split"]].values.tolist() == [[3, "distance"], [3, "block"]]
    assert stream[["cut_every", "split"]].values.tolist() == [[5, "distance"]]
    for cfg, table in zip(configs, (full, cut, stream), strict=True):
        written = pd.read_csv(tmp_path / cfg.run_id / "agreement.csv")
        for row in table.itertuples(index=False):
            assert row.within_probes + row.beyond_probes == written["n"].sum()
            if row.split == "distance":
                inside = written[written["distance"] <= row.cut_every]
                expected = (inside["n"] * inside["accuracy"]).sum() / inside["n"].sum()
                assert row.within_accuracy == pytest.approx(expected, abs=1e-12)
    # as rule study_extra_table writes it (jobs.study_extra_table): the study's table, and what made it
    frame = runs_frame(
        {"name": "t", "run_ids": list(models), "vary": ["bptt"]},
        [{"bptt": c.bptt, "seed": 1} for c in configs],
        dict.fromkeys(models, "learned"),
    )
    table, producer = scored_table("reach", frame, models, ["bptt"], data_dir=None, cache_dir=str(cache_dir))
    assert producer == "rnnbench.results.reach.reach_table" and len(table) == len(full) + len(cut) + len(stream)
    sentences = frame[frame["run_id"] != configs[2].run_id]  # a cuts table is of runs cut within sentences
    _, producer = scored_table("cuts", sentences, models, ["bptt"], data_dir=None, cache_dir=str(cache_dir))
    assert producer == "rnnbench.results.cut_accuracy.cut_table"
    with pytest.raises(ValueError, match="known: cuts, reach"):
        scored_table("units", frame, models, ["bptt"], data_dir=None, cache_dir=str(cache_dir))
