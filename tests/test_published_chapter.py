"""The published chapter's tally of the reference results (rnnbench.book.published_chapter.reference_tally): one
sentence, counts by verdict in a fixed order, a verdict no result has left out, one and several told apart."""

from __future__ import annotations

from rnnbench.book.published_chapter import reference_tally


def test_the_tally_counts_each_verdict_once_in_order_and_names_none_it_lacks():
    verdicts = ["below", "tie", "not comparable", "tie", "no baseline", "tie"]
    assert reference_tally(verdicts) == (
        "3 are level with their published model, 1 is below it with every seed and 2 are not compared"
    )


def test_one_result_is_said_in_the_singular_and_none_is_said_so():
    assert reference_tally(["mixed"]) == "1 is beyond the band on the mean only"
    assert reference_tally([]) == "none has a verdict"
