"""A stuck evaluation column, on numbers worked by hand."""

import math

import pytest

from rnnbench.training.stuck_columns import STUCK_SPREAD, stuck, worst_and_median


def test_worst_and_median_of_a_runs_columns():
    # sorted 250, 260, 300, 46,146: the median of an even count is the mean of the middle two, (260 + 300) / 2
    assert worst_and_median([300.0, 250.0, 46_146.0, 260.0]) == (46_146.0, 280.0)
    assert worst_and_median([226.0, 320.0, 257.0]) == (320.0, 257.0)
    assert all(math.isnan(v) for v in worst_and_median([]))  # not read as a stream: nothing to say


@pytest.mark.parametrize(
    ("worst", "median", "expected"),
    [
        (46_146.0, 280.0, True),  # 165 times the median: one column made the run's number
        (1_400.0, 280.0, False),  # exactly 5 times: not above the threshold
        (1_400.5, 280.0, True),
        (320.0, 257.0, False),  # 1.25 times: columns that differ by the text they hold
        (math.inf, 280.0, True),  # a column that saturated
        (math.nan, 280.0, False),  # unknown: never marked
        (None, None, False),  # a run trained before runs kept their columns
    ],
)
def test_a_column_is_stuck_above_five_times_the_median(worst, median, expected):
    assert STUCK_SPREAD == 5.0
    assert stuck(worst, median) is expected
