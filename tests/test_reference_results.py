"""The reference rows' verdict: the normalised ratio (ours over our KN5, theirs over their KN5) against a tie band
as wide as the findings' margin for a perplexity, its edges included."""

from __future__ import annotations

import math

import pytest

from rnnbench.book.reference_results import TIE_BAND, reference_verdict
from rnnbench.findings.policy import MARGINS


def _row(normalised: float, low: float | None = None, high: float | None = None, comparable: str = "yes") -> dict:
    """A reference row as reference_runs gives it: the mean's normalised ratio and the lowest and highest seed's."""
    return {
        "comparable": comparable,
        "normalised": normalised,
        "normalised_min": normalised if low is None else low,
        "normalised_max": normalised if high is None else high,
    }


def test_the_band_is_the_findings_margin_for_a_perplexity():
    assert MARGINS["perplexity"].relative and TIE_BAND == MARGINS["perplexity"].size == 0.02


def test_brown_against_mlp1_is_a_tie_not_below():
    # Ours 250.4 (seeds 249.8 and 250.9) over our KN5's 303.9: 0.8238; MLP1 268 over Bengio et al.'s KN5 321:
    # 0.8349. 0.8238 / 0.8349 = 0.9867, inside 1 +- 0.02, though both seeds are below 268, by 6 to 7%.
    seeds = [(249.8 / 303.9) / (268 / 321), (250.9 / 303.9) / (268 / 321)]
    mean = ((249.8 + 250.9) / 2 / 303.9) / (268 / 321)
    assert mean == pytest.approx(0.9867, abs=1e-4)
    assert reference_verdict(_row(mean, min(seeds), max(seeds))) == "tie"


@pytest.mark.parametrize(
    ("ours", "verdict"),
    [
        (98.0, "tie"),  # 0.98: on the lower edge, inside
        (97.99, "below"),  # 0.9799: just past it
        (102.0, "tie"),  # 1.02: on the upper edge, inside
        (102.01, "above"),  # 1.0201: just past it
        (100.0, "tie"),
    ],
)
def test_the_band_at_its_edges(ours, verdict):
    # our KN5 and theirs both 100, their row 100: the normalised ratio is ours / 100
    normalised = (ours / 100) / (100 / 100)
    assert reference_verdict(_row(normalised)) == verdict


def test_seeds_on_both_sides_of_the_edge_are_mixed():
    # the mean 0.97 is below the band, but one seed (0.985) is inside it
    assert reference_verdict(_row(0.97, low=0.955, high=0.985)) == "mixed"
    assert reference_verdict(_row(0.97, low=0.955, high=0.979)) == "below"
    # a mean inside the band is a tie, whatever the seeds' spread
    assert reference_verdict(_row(1.0, low=0.95, high=1.05)) == "tie"


def test_no_comparable_row_or_no_kneser_ney_model_gives_no_verdict():
    assert reference_verdict(_row(0.9, comparable="not comparable: |V| = 17,905 against 16,383")) == "not comparable"
    assert reference_verdict(_row(math.nan)) == "no baseline"
