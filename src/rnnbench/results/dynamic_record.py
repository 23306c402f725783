"""A run's dynamic-evaluation record (runs/<run_id>/dynamic.json), read back without torch: for the comparison
and the book, which never import it.

rnnbench.training.dynamic.evaluate_run writes it; its fields, written once here:

    run_id, split          the run and the split scored (test)
    bptt, batch_size       the segment length (one SGD step per segment) and the layout: one column, batch 1
    clip_mode, clip        each step's gradient clipped as the run was trained
    rates                  the rates the validation split chose from (one rate: applied as given)
    chosen_on              "valid" (the grid was scored there) or "given"
    valid_tokens           validation tokens the grid was scored on (null: given)
    valid_static_ppl       their static perplexity at batch 1
    grid                   one row per rate: lr, valid_nll, valid_ppl, seconds
    lr                     the rate applied to the split (null: every rate's validation NLL blew up)
    tokens                 tokens of the split predicted (every token but the first)
    static_nll, static_ppl     the split read at batch 1 with the trained weights, the same segments
    dynamic_nll, dynamic_ppl   the same, learning as it reads (null without a rate)
    dynamic_seconds        the one dynamic pass over the split
    seconds                the whole job (model and corpus loading, the grid, both passes)
    diverged               the run itself diverged: no perplexities at all

The static perplexity here reads the split as one column, so every token but the first is predicted from
its whole history; the run's metrics.json test_ppl reads it in eval_batch_size columns, each from h_0 = 0.
They differ slightly: the dynamic row is to be set beside this record's static one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rnnbench.paths import run_dynamic

# Every field of a record, in the order it is written (the docstring says what each is).
FIELDS = (
    "run_id",
    "split",
    "bptt",
    "clip_mode",
    "clip",
    "batch_size",
    "rates",
    "chosen_on",
    "valid_tokens",
    "valid_static_ppl",
    "grid",
    "lr",
    "tokens",
    "static_nll",
    "static_ppl",
    "dynamic_nll",
    "dynamic_ppl",
    "dynamic_seconds",
    "diverged",
    "seconds",
)


def dynamic_metrics(results_dir: str | Path, run_id: str) -> dict[str, Any] | None:
    """The dynamic-evaluation record of ``run_id`` under ``results_dir``, or None if it has none."""
    path = Path(run_dynamic(str(results_dir), run_id))
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))
