"""The chapter's and lessons' worked examples, regenerated as tidy tables, and every seed claim checked.

One module per source: ``chapter`` (the chapter, "Recurrent Networks"), ``lessons`` (lesson 001, "The
vanilla RNN", and lesson 003, "Recurrent Neural Networks", with runnable code) and ``claims`` (each
checkable claim of the three, against the code's result). ``TABLES`` names every table the workflow
writes (rule worked_table); ``print_tables`` prints the CLI's sections.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import pandas as pd

from rnnbench.worked import bptt
from rnnbench.worked.chapter import (
    CLIP_THRESHOLD,
    LECTURE_SIZES,
    UNROLL_EMBEDDINGS,
    clipping,
    crossover_grid,
    decay,
    decay_47_words,
    params_ff_vs_rnn,
    params_totals,
    unroll,
    unroll_weights,
)
from rnnbench.worked.claims import seed_claims, seed_discrepancies
from rnnbench.worked.lessons import (
    lesson_numpy_trace,
    lesson_params,
    lesson_rnn_shapes,
    lesson_two_sentences,
    lesson_word_order,
)

TABLES: dict[str, Callable[[], pd.DataFrame]] = {
    "unroll": unroll,
    "unroll_weights": unroll_weights,
    "params_ff_vs_rnn": params_ff_vs_rnn,
    "params_totals": params_totals,
    "crossover_grid": crossover_grid,
    "lesson_params": lesson_params,
    "decay": decay,
    "decay_47_words": decay_47_words,
    "clipping": clipping,
    "lesson_rnn_shapes": lesson_rnn_shapes,
    "lesson_gradient_reach": bptt.gradient_reach,
    "lesson_numpy_trace": lesson_numpy_trace,
    "lesson_two_sentences": lesson_two_sentences,
    "lesson_word_order": lesson_word_order,
    "bptt_gradient_check": bptt.gradient_check,
    "jacobian_product": bptt.jacobian_decay,
    "jacobian_width": bptt.jacobian_width,
    "seed_claims": seed_claims,
    "seed_discrepancies": seed_discrepancies,
}


# The terminal: `rnnbench worked --unroll --params --vanish --clip`.

SECTIONS = ("unroll", "params", "vanish", "clip")


def _section_tables(section: str) -> list[tuple[str, pd.DataFrame]]:
    if section == "unroll":
        emb = ", ".join(f"{w} = {v}" for w, v in UNROLL_EMBEDDINGS.items())
        return [(f"Unrolling 'the dog ran' from h_0 = 0 (embeddings ours: {emb})", unroll())]
    if section == "params":
        sizes = ", ".join(f"{k} = {v:,}" for k, v in LECTURE_SIZES.items())
        shapes = params_ff_vs_rnn(contexts=(3,))
        return [
            (f"Shapes at context 3 ({sizes})", shapes),
            ("Totals by context", params_totals()),
            ("Crossover context over d and H", crossover_grid()),
            ("Lesson 001: recurrence vs concatenated MLP", lesson_params()),
        ]
    if section == "vanish":
        table = decay(distances=(1, 5, 10, 20, 47, 50, 100))
        wide = table.pivot(index="distance", columns="factor", values="value")
        return [
            ("factor ** distance", wide.reset_index()),
            ("The 47-word example", decay_47_words()),
        ]
    if section == "clip":
        return [(f"Clipping at threshold {CLIP_THRESHOLD:g} (eq. 12.7)", clipping())]
    raise ValueError(f"unknown section {section!r}; choose from {SECTIONS}")


def print_tables(sections: Sequence[str], file: TextIO | None = None) -> None:
    """Print the CLI sections ("unroll", "params", "vanish", "clip") as terminal tables; file defaults to stdout."""
    unknown = [s for s in sections if s not in SECTIONS]
    if unknown:
        raise ValueError(f"unknown section(s) {unknown}; choose from {SECTIONS}")
    out = file if file is not None else sys.stdout
    for section in sections:
        for title, table in _section_tables(section):
            print(f"\n== {title}", file=out)
            print(table.to_string(index=False, float_format=lambda v: f"{v:.6g}"), file=out)
