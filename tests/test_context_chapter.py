"""The window section's values (rnnbench.book.context_chapter): a study with two widths that learned is compared,
one with fewer says so instead of printing a number that is not one."""

from __future__ import annotations

import json

import pytest
from planted import write_study

from rnnbench.book import context, context_chapter
from rnnbench.book.format import NONE
from rnnbench.worked.lessons import lesson_params

ABOUT = {"family": "ff", "corpus": "ptb", "metric": "test_ppl", "vary": ["context"], "roles": ["window_width"]}


def plant_widths(root, ppl, outcome=None):
    """A PTB window study, one seed per width: ``ppl`` n-1 -> test perplexity; ``outcome`` n-1 -> its outcome
    (learned where not named)."""
    outcome = outcome or {}
    runs = [
        {
            "run_id": f"n{width}",
            "seed": 1,
            "context": width,
            "outcome": outcome.get(width, "learned"),
            "metrics": {"test_ppl": value},
        }
        for width, value in ppl.items()
    ]
    write_study(root, "widths", {**ABOUT, "seeds": [1]}, runs)
    # its figure's record: no point drawn, so the section cites the study's table instead of staging an image
    (root / "studies" / "widths" / "figure.provenance.json").write_text(json.dumps({"drawn": {"panels": []}}))


def test_the_widths_that_learned_are_read_narrowest_best_next_and_widest(tmp_path):
    plant_widths(tmp_path, {1: 170.0, 2: 150.0, 4: 148.04, 8: 149.96})
    section = context_chapter.window_section(tmp_path)
    assert section.ptb_measured and not section.best_is_widest
    assert (section.narrow_ppl, section.best_width, section.best_ppl) == ("170", "4", "148")
    assert (section.next_width, section.next_ppl, section.widest_width, section.widest_ppl) == (
        "4",
        "148.0",
        "8",
        "150.0",
    )
    assert section.ptb_widths == "1, 2, 4 and 8"


def test_a_width_no_seed_learned_at_is_left_out_and_the_widest_that_learned_can_be_best(tmp_path):
    plant_widths(tmp_path, {1: 170.0, 2: 150.0, 4: 9_000.0}, outcome={4: "did not learn"})
    section = context_chapter.window_section(tmp_path)
    assert section.ptb_measured and section.best_is_widest
    assert (section.next_width, section.widest_width, section.widest_ppl) == ("1", "2", "150.0")


@pytest.mark.parametrize("learned", [0, 1])
def test_fewer_than_two_widths_that_learned_are_not_measured(tmp_path, learned):
    plant_widths(
        tmp_path, {1: 170.0, 2: 9_000.0}, outcome={1: "learned" if learned else "did not learn", 2: "diverged"}
    )
    section = context_chapter.window_section(tmp_path)
    assert not section.ptb_measured and not section.best_is_widest
    assert section.next_ppl == NONE  # no second width to set the widest against
    assert not (section.agreement_measured or section.blind_measured)  # no agreement study here


def test_without_a_window_study_nothing_is_measured_and_nothing_fails(tmp_path):
    (tmp_path / "studies").mkdir()
    section = context_chapter.window_section(tmp_path)
    assert not (section.ptb_measured or section.agreement_measured or section.blind_measured)
    assert section.ptb_widths == section.narrow_ppl == section.blind_low == NONE


def test_the_lessons_count_is_read_and_named_in_words():
    # d_model = 2, d_h = 3: the recurrence 3 x 3 + 3 x 2 + 3 = 18 weights; the first layer 3 x (T x 2): 12 at T = 2,
    # 60 at T = 10, five times as many, 60 - 18 = 42 more than the recurrence
    count = context.lesson_count(lesson_params(d_model=2, d_h=3, tokens=(2, 10)))
    assert (count.recurrence, count.first_layer_short, count.first_layer_long) == (18, 12, 60)
    assert (count.short_tokens, count.long_tokens, count.ratio, count.extra) == (2, 10, 5, 42)
    assert list(count.table["quantity"])[:4] == [
        "$W_{hh}$, state to state",
        "$W_{xh}$, input to state",
        "$b_h$",
        "the recurrence, in all",
    ]
    assert not count.table["quantity"].str.contains("mlp_|_ratio").any()  # no identifier reaches the table
    assert list(count.table["shape"])[:2] == ["3 × 3", "3 × 2"]


def test_the_totals_table_stops_two_contexts_past_the_crossover_and_keeps_the_largest():
    from rnnbench.worked.chapter import params_totals

    # d = 100, H = 200: FF - RNN = 20,000 (n-1) - 60,000, a tie at 3 and FF larger from 4; counted to 10.
    totals = params_totals(embed_dim=100, hidden=200, contexts=range(1, 11))
    shown = context.totals_around_crossover(totals)
    assert shown["context"].tolist() == [1, 2, 3, 4, 5, 6, 10]
    assert shown["ff_minus_rnn"].tolist()[-1] == 140_000
