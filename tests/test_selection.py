"""Choosing a best run on validation only: cases where the test split would have chosen another."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from rnnbench.results.selection import SELECTED_ON, best_and_worst, ranked, selection_metric

SCHEMA = Path(__file__).resolve().parents[1] / "workflow" / "schemas" / "config.schema.yaml"


def runs(rows):
    return pd.DataFrame(rows, columns=["run", "valid_ppl", "test_ppl"]).set_index("run")


def test_the_best_run_is_the_one_best_on_validation_even_where_test_disagrees():
    # b is best on test (118) but only second on validation: a is chosen, and its test number 125 is what is reported.
    table = runs([("a", 120.0, 125.0), ("b", 122.0, 118.0), ("c", 140.0, 139.0)])
    best, worst = best_and_worst(table, "test_ppl")
    assert best.name == "a" and best["test_ppl"] == 125.0
    assert worst.name == "c"
    assert table["test_ppl"].idxmin() == "b"  # what choosing on test would have reported instead


def test_agreement_accuracy_is_chosen_on_validation_perplexity():
    # Accuracy is higher-better, but the choice reads the validation perplexity (lower-better) alone.
    table = pd.DataFrame(
        {"valid_ppl": [3.10, 3.05, 3.20], "agreement_accuracy": [0.71, 0.64, 0.90]}, index=["x", "y", "z"]
    )
    assert list(ranked(table, "agreement_accuracy").index) == ["y", "x", "z"]


def test_a_mean_over_seeds_is_chosen_on_its_validation_mean():
    settings = pd.DataFrame(
        {"bptt": [5, 35], "valid_ppl_mean": [400.0, 390.0], "test_ppl_mean": [380.0, 395.0]}
    ).set_index("bptt", drop=False)
    best, worst = best_and_worst(settings, "test_ppl", suffix="_mean", what="truncation length")
    assert (best["bptt"], best["test_ppl_mean"]) == (35, 395.0)
    assert worst["bptt"] == 5


def test_a_training_measurement_is_chosen_on_itself_higher_better():
    table = pd.DataFrame({"tokens_per_second": [5_000.0, 9_000.0]}, index=["slow", "fast"])
    best, worst = best_and_worst(table, "tokens_per_second")
    assert (best.name, worst.name) == ("fast", "slow")


def test_no_validation_value_is_an_error_naming_the_run_never_a_fall_back_to_test():
    table = runs([("a", 120.0, 125.0), ("b", float("nan"), 90.0)])
    with pytest.raises(ValueError, match=r"1 run\(s\) \(b\) have no valid_ppl.*never on the test split"):
        best_and_worst(table, "test_ppl")
    with pytest.raises(ValueError, match="no 'valid_ppl' column"):
        best_and_worst(table.drop(columns="valid_ppl"), "test_ppl")


def test_a_metric_without_a_validation_metric_is_an_error():
    with pytest.raises(ValueError, match="'parameters' has no validation metric.*known: test_ppl"):
        selection_metric("parameters")


def test_every_study_metric_the_schema_allows_has_a_way_to_be_chosen():
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    allowed = schema["$defs"]["study"]["properties"]["metric"]["enum"]
    assert set(allowed) == set(SELECTED_ON)
