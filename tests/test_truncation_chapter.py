"""The chapter "Is truncation harmful?" (reports/truncation.qmd) run on the report's test fixture: its verdict
words follow the verdicts of tables/findings.csv, planted here, and its numbers follow the studies' tables."""

import shutil

import bookcheck
import pandas as pd
import planted as plant
import pytest
import test_report

from rnnbench.book import answers
from rnnbench.book import results as res
from rnnbench.book import truncation_chapter as tc
from rnnbench.book.truncation import epochs_by_length

CHAPTER = "truncation.qmd"
# The book's words for each verdict (rnnbench.book.answers), as a reader sees them after "the claim ...".
WORDS = {verdict: str(answers.says(verdict)) for verdict in ("holds", "fails", "partly", "inconclusive", "not shown")}


@pytest.fixture(scope="module")
def fixture_results(built_results):
    """The report's fixture: every output of config.yaml + smoke.yaml, written by the workflow's own jobs (tests
    below plant their verdicts into a copy)."""
    return built_results


def planted(fixture_results, tmp_path, verdicts=None, parts=None, reach=None):
    """A copy of the fixture's studies and tables with ``verdicts`` (claim -> verdict) written into findings.csv,
    ``parts`` (claim -> {label fragment: verdict}) into findings_parts.csv and ``reach`` ((bptt, seed) -> (outcome,
    within, beyond) at the block split of cut 2) into the sentence-cut study's reach.csv; the chapter run on it."""
    results = tmp_path / "results"
    for folder in ("studies", "tables"):
        shutil.copytree(fixture_results / folder, results / folder)
    path = results / "studies" / "truncation_sentence_agreement" / "reach.csv"
    table = pd.read_csv(path)
    for (bptt, seed), (outcome, within, beyond) in (reach or {}).items():
        run = (table["bptt"] == bptt) & (table["seed"] == seed)
        table.loc[run, "outcome"] = outcome
        at = run & (table["split"] == "block") & (table["cut_every"] == 2)
        table.loc[at, ["within_accuracy", "beyond_accuracy", "gap"]] = [within, beyond, within - beyond]
    table.to_csv(path, index=False)
    findings = pd.read_csv(results / "tables" / "findings.csv", dtype=str, keep_default_na=False)
    for claim, verdict in (verdicts or {}).items():
        findings.loc[findings["id"] == claim, "verdict"] = verdict
    findings.to_csv(results / "tables" / "findings.csv", index=False)
    table = pd.read_csv(results / "tables" / "findings_parts.csv", dtype=str, keep_default_na=False)
    for claim, labels in (parts or {}).items():
        for key, verdict in labels.items():  # a fragment of the label, or (the part's study, a fragment)
            source, fragment = key if isinstance(key, tuple) else ("", key)
            of_source = table["source"] == source if source else True
            at = (table["id"] == claim) & of_source & table["part"].str.contains(fragment, regex=False)
            table.loc[at, "verdict"] = verdict
    table.to_csv(results / "tables" / "findings_parts.csv", index=False)
    book = test_report.copy_book(tmp_path / "reports")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(res.RESULTS_ENV, str(results))
        return bookcheck.run_chapter(book / CHAPTER, cwd=book).markdown()


@pytest.mark.parametrize("verdict", list(WORDS))
def test_the_verdict_words_follow_the_planted_verdict(fixture_results, tmp_path, verdict):
    text = planted(fixture_results, tmp_path, {"truncation_invisible": verdict, "truncation_cost": verdict})
    # A claim that holds in part is said by its reading, which its parts' verdicts (the fixture's) decide.
    parts = pd.read_csv(fixture_results / "tables" / "findings_parts.csv", dtype=str, keep_default_na=False)
    invisible, cost = (
        answers.says(answers.reading(verdict, parts.loc[parts["id"] == claim, "verdict"]))
        for claim in ("truncation_invisible", "truncation_cost")
    )
    assert f"a dependency across a boundary is invisible to training {invisible}." in text
    assert f"long unrolling is slow and expensive in memory {cost}." in text
    for other in {*WORDS.values(), *map(answers.says, answers.READINGS)} - {invisible}:
        assert f"invisible to training {other}." not in text


def test_the_decided_parts_are_named_by_study_kind_and_length(fixture_results, tmp_path):
    # Every part undecided, then one sentence-cut part planted as holding and one PTB speed part as failing.
    undecided = {"truncation_invisible": {"": "inconclusive"}, "truncation_cost": {"": "inconclusive"}}
    text = planted(fixture_results, tmp_path / "none", parts=undecided)
    assert "Decided by these seeds: none." in text and "in each design; decided by these seeds: none." in text
    plant = {
        "truncation_invisible": {"": "inconclusive", ("truncation_sentence_agreement", "k = 2,"): "holds"},
        "truncation_cost": {"": "inconclusive", ("truncation_ptb", ", slow,"): "fails"},
    }
    text = planted(fixture_results, tmp_path / "two", parts=plant)
    assert "Decided by these seeds: holds for the sentence cuts at $k$ = 2." in text
    assert "decided by these seeds: speed with equal tokens fails." in text


def test_the_numbers_are_the_fixture_reach_tables(fixture_results, tmp_path):
    # The fixture's reach tables (tests/test_report.py, _write_reach): accuracy 0.9 - 0.01 i within and 0.7 - 0.01 i
    # beyond for its run i, so every gap is 0.2 and the one learned seed a side has an interaction of 0, no interval.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(res.RESULTS_ENV, str(fixture_results))
        cuts = tc.cut_numbers("sentence cuts")
    assert cuts.study == "truncation_sentence_agreement"
    assert (cuts.positive, cuts.seeds, cuts.lengths) == (0, 1, 0)
    assert "0 of the 1 seed-by-seed interactions are above zero" in planted(fixture_results, tmp_path / "as-is")
    # Planted at the cut of 2 steps, both seeds learned: full BPTT's gaps 0.02 and 0.04, the cut runs' 0.10 and
    # 0.20, so the paired interactions are 0.08 and 0.16: mean 0.12, standard error 0.04, and t(0.975, 1) = 12.706
    # puts the interval at 0.12 -+ 0.508. Across the cut the cut runs score 0.8 and 0.7, mean 0.75.
    reach = {
        (0, 1): ("learned", 0.92, 0.90),
        (0, 2): ("learned", 0.94, 0.90),
        (2, 1): ("learned", 0.90, 0.80),
        (2, 2): ("learned", 0.90, 0.70),
    }
    text = planted(fixture_results, tmp_path / "planted", reach=reach)
    assert "its gap, within minus across, is +0.030 at the cut lengths" in text
    assert "score the probes across a cut lower, by 0.150" in text
    assert "and 2 of the 2 seed-by-seed interactions are above zero" in text
    assert "is +0.120 (−0.388 to +0.628) at k = 2: the interval lies wholly above zero at 0 of the 1 lengths" in text
    assert "Across a cut the truncated runs still score 0.750 where chance is 0.5, well above it" in text


def test_epochs_per_length_are_read_where_a_length_s_runs_agree(tmp_path):
    # At 3,000 updates an agreement epoch of 1,361 updates (k = 2) is read 3 times (rounded up: the last one cut
    # short) and one of 137 (k = 20) 22 times. A length whose runs disagree (k = 5: 6 and 7) names no number; a run
    # that diverged is left out (k = 20's seed 2 stopped in its first epoch).
    runs = [
        {"run_id": f"r{k}-{seed}", "seed": seed, "bptt": k, "outcome": outcome, "metrics": {"epochs": epochs}}
        for k, seed, outcome, epochs in (
            (2, 1, "learned", 3),
            (2, 2, "learned", 3),
            (5, 1, "learned", 6),
            (5, 2, "learned", 7),
            (20, 1, "learned", 22),
            (20, 2, "diverged", 1),
        )
    ]
    plant.write_study(tmp_path, "stream", {"vary": ["bptt"]}, runs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(res.RESULTS_ENV, str(tmp_path))
        assert epochs_by_length("stream") == {2: 3, 20: 22}


def test_the_nearest_noun_bar_weights_its_accuracy_by_the_probes_across_each_cut():
    # Cut every 2 steps, 30 probes cross a cut at distance 2 and 10 at distance 3 (full BPTT's rows, bptt 0; the cut
    # runs' counts are the same probes and are not counted twice); the rule scores 0.9 at 2 and 0.5 at 3:
    # (30 x 0.9 + 10 x 0.5) / 40 = 0.8. At k = 4 only distance 5 crosses, and the rule has no number there: left out.
    # Probes within a block (crosses_cut False) never count.
    cuts = pd.DataFrame(
        [
            (0, 2, 2, True, 30),
            (0, 2, 3, True, 10),
            (0, 2, 1, False, 50),
            (2, 2, 2, True, 60),
            (2, 2, 3, True, 20),
            (0, 4, 5, True, 7),
        ],
        columns=["bptt", "cut_every", "distance", "crosses_cut", "probes"],
    )
    rule = pd.Series({1: 1.0, 2: 0.9, 3: 0.5})
    bar = tc.rule_at_cuts(cuts, rule)
    assert bar.to_dict() == pytest.approx({2: 0.8})
