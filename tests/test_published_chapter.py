"""The published chapter's tally of the reference results (rnnbench.book.published_chapter.reference_tally): one
sentence, counts by verdict in a fixed order, a verdict no result has left out, one and several told apart."""

from __future__ import annotations

import pandas as pd

from rnnbench.book.published_chapter import reference_tally


def test_the_tally_counts_each_verdict_once_in_order_and_names_none_it_lacks():
    verdicts = ["below", "tie", "not comparable", "tie", "no baseline", "tie"]
    assert reference_tally(verdicts) == (
        "3 are level with their published model, 1 is below it with every seed and 2 are not compared"
    )


def test_one_result_is_said_in_the_singular_and_none_is_said_so():
    assert reference_tally(["mixed"]) == "1 is beyond the band on the mean only"
    assert reference_tally([]) == "none has a verdict"


def test_the_comparison_table_names_one_kneser_ney_model_in_its_header_and_several_in_their_cells():
    from rnnbench.book.published_chapter import comparison_table

    rows = pd.DataFrame(
        {
            "model": ["KN5", "ours"],
            "measured by": ["a paper", "1 epoch"],
            "test_ppl": [141.2, 218.7],
            "ratio": [None, 1.56],
            "over_kn": [1.0, 1.55],
            "kn_name": ["KN5", "KN5"],
        }
    )
    one = comparison_table(rows)
    assert "over its split's KN5" in one and "1.55 of" not in one
    several = comparison_table(rows.assign(kn_name=["KN5", "KN4"]))
    assert "over its split's KN " in several and "1.55 of KN4" in several and "1 of KN5" in several


def test_a_modern_recipe_is_marked_and_lists_what_it_changes_in_our_row_of_the_paper_recipe():
    import pandas as pd

    from rnnbench.book.published_chapter import reference_display

    def row(study, departures, departs_from):
        return {"corpus": "ptb", "description": "Elman RNN", "study": study, "dynamic": False, "test_ppl": 110.0,
                "test_min": 109.0, "test_max": 111.0, "reference_ppl": 124.7, "reference_model": "RNN LM",
                "normalised": 0.9, "normalised_min": 0.89, "normalised_max": 0.91, "comparable": "yes",
                "departures": departures, "departs_from": departs_from}  # fmt: skip

    rows = pd.DataFrame(
        [row("paper_rnn_ptb", "the source states no recipe", ""), row("modern", "H = 800 against 400", "paper_rnn_ptb")]
    )
    cells = list(reference_display(rows)["recipe departs in"])
    assert cells == ["its paper states no recipe", "modern recipe; against our RNN LM row, H = 800 against 400"]


def test_a_perplexity_is_printed_to_one_decimal_and_a_whole_published_one_as_printed():
    from rnnbench.book.published import ppl

    assert ppl(124.7) == "124.7" and ppl(116.95271902746298) == "117.0"  # measured: the decimal stays
    assert ppl(268) == "268" and ppl(1416.04) == "1,416.0"
    assert ppl(float("nan")) == ppl(None)
