"""The book's explorables (HTML only): the data each one needs, read from the results, written into the page.

    unroll_data    the chapter's W, U and b_h (tables/unroll_weights.csv), the sentence and its x_t (tables/unroll.csv)
    params_data    the lecture's |V|, d and H (tables/params_ff_vs_rnn.csv) and the context to start from
    decay_data     every gradient-decay analysis's measured curves (analyses/<name>/curves.csv) with their measured
                   rates (rates.csv), and the chapter's per-step factors (tables/decay_47_words.csv)
    explorable     one explorable as a raw HTML block: a <div> holding its data as JSON

reports/explorables.js turns each <div class="explorable"> into controls and an inline SVG. It does the little
arithmetic the controls need (the recurrence of three steps, the parameter formulas, a power of the chapter's
factors) and nothing else: the measured curves are drawn as read, never recomputed. No script or style is
fetched from anywhere, so the book still reads offline. Like the rest of rnnbench.book, nothing here imports torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from rnnbench import paths
from rnnbench.book.decay import snapshot_name
from rnnbench.book.format import Markdown
from rnnbench.book.results import analysis_names, analysis_record, analysis_table, results_root, table

KINDS = ("unroll", "params", "decay")
UNTRAINED = "untrained"  # the snapshot of a network no study trained
CURVE = {"direction": "backward", "method": "one_pass", "quantity": "h"}  # what the decay chapter's figures draw


def _matrix(weights: pd.DataFrame, tensor: str) -> list[list[float]]:
    rows = weights[weights["tensor"] == tensor]
    if rows.empty:
        raise ValueError(
            f"tables/unroll_weights.csv has no rows for tensor {tensor!r}; it has {sorted(set(weights['tensor']))}"
        )
    shape = (int(rows["row"].max()), int(rows["column"].max()))
    matrix = [[math.nan] * shape[1] for _ in range(shape[0])]
    for r in rows.itertuples():
        matrix[int(r.row) - 1][int(r.column) - 1] = float(r.value)
    return matrix


def unroll_data(results: str | Path | None = None) -> dict[str, Any]:
    """W, U, b_h as the chapter prints them, and the words read with their embeddings, in order."""
    weights = table("unroll_weights", results)
    trace = table("unroll", results).sort_values(["step", "unit"])
    bias = weights[weights["tensor"] == "b_h"].sort_values("row")
    steps = [
        {"word": str(group["word"].iloc[0]), "x": [float(v) for v in group["x"]]}
        for _, group in trace.groupby("step", sort=True)
    ]
    return {
        "W": _matrix(weights, "W"),
        "U": _matrix(weights, "U"),
        "b": [float(v) for v in bias["value"]],
        "steps": steps,
    }


def params_data(results: str | Path | None = None, context: int = 3) -> dict[str, Any]:
    """The lecture's sizes, as the parameter table was built from them, and the context the chapter starts at."""
    shapes = table("params_ff_vs_rnn", results)
    rnn = shapes[(shapes["model"] == "rnn") & (shapes["context"] == shapes["context"].min())].set_index("tensor")
    vocab, embed = (int(n) for n in rnn.loc["embedding", "shape"].split("x"))
    hidden = int(rnn.loc["U", "shape"].split("x")[0])
    if context not in set(shapes["context"]):
        raise ValueError(
            f"context {context} is not in tables/params_ff_vs_rnn.csv (it has {sorted(set(shapes['context']))})"
        )
    return {"vocab": vocab, "embed": embed, "hidden": hidden, "context": int(context)}


def _activation(keys: Mapping[str, Any], results: str | Path | None) -> str:
    """A network's activation: its own key, else its run's settings (config.json); an LSTM has none."""
    if keys.get("family") == "lstm":
        return "LSTM"
    if isinstance(keys.get("activation"), str):
        return keys["activation"]
    run = keys.get("run_id")
    config = Path(paths.run_config(results_root(results), str(run))) if isinstance(run, str) else None
    if config is not None and config.is_file():
        return str(json.loads(config.read_text(encoding="utf-8")).get("activation", "tanh"))
    return str(keys.get("family", "rnn"))


def _number(value: Any) -> float | None:
    """A value JSON can hold: NaN and infinities (an underflow, a rate that could not be fitted) as null."""
    if value is None or isinstance(value, str):
        return None
    return float(value) if math.isfinite(float(value)) else None


def _plain(value: Any) -> Any:
    """A key as JSON holds it: numpy scalars as Python ones, NaN (a key an LSTM does not have) as null, an infinite
    one (clip_times_median .inf: never clips) as "inf", the text a run's config.json writes it as."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return None if isinstance(value, float) and math.isnan(value) else value


def _networks(name: str, results: str | Path | None) -> list[dict[str, Any]]:
    """One analysis's networks: the keys that name each, its measured curve (median and 10-90% band by distance),
    its measured rate and rho(U)."""
    record = analysis_record(name, results)
    keys = list(record["keys"])
    as_written = ("snapshot", "run_id")  # names: snapshot "0" must not come back as the number 0
    curves = analysis_table(name, "curves", results, text=as_written)
    rates = analysis_table(name, "rates", results, text=as_written)
    chosen = [(frame[list(CURVE)] == pd.Series(CURVE)).all(axis=1) for frame in (curves, rates)]
    curves, rates = curves[chosen[0]], rates[chosen[1]]
    # Matched on the keys as text: an LSTM's missing radius is NaN in both tables, and NaN never equals NaN.
    measured = {tuple(str(v) for v in row[keys]): row for _, row in rates.iterrows()}
    trained = record["network"] == "study"
    source = paths.analysis_table(".", name, "curves").removeprefix("./")
    networks = []
    for point, curve in curves.groupby(keys, sort=False, dropna=False):
        point = dict(zip(keys, point, strict=True))
        rate = measured.get(tuple(str(v) for v in point.values()))
        curve = curve.sort_values("distance")
        # Untrained: the radius U was rescaled to. Trained: rho(U) of the weights, measured, not set.
        radius = (rate["rho"] if rate is not None else None) if trained else point["radius"]
        networks.append(
            {
                "analysis": name,
                "keys": {k: _plain(v) for k, v in point.items()},
                "activation": _activation(point, results),
                "snapshot": str(point["snapshot"]) if trained else UNTRAINED,
                "snapshot_label": snapshot_name(point["snapshot"]) if trained else "untrained",
                "radius": _number(radius),
                "radius_measured": trained,
                "rate": _number(rate["rate"]) if rate is not None else None,
                "distance": [int(d) for d in curve["distance"]],
                "median": [_number(v) for v in curve["median"]],
                "q10": [_number(v) for v in curve["q10"]],
                "q90": [_number(v) for v in curve["q90"]],
                "source": source,
            }
        )
    return networks


def decay_data(results: str | Path | None = None) -> dict[str, Any]:
    """Every gradient-decay analysis's networks, and the chapter's factors (the ones its powers are printed for)."""
    networks = [
        network
        for name in analysis_names(results)
        if analysis_record(name, results)["kind"] == "gradient_decay"
        for network in _networks(name, results)
    ]
    chapter = table("decay_47_words", results)
    return {"networks": networks, "factors": sorted(float(f) for f in set(chapter["factor"]))}


def explorable(kind: str, data: Mapping[str, Any]) -> Markdown:
    """A raw HTML block: the <div> explorables.js fills in, its data as JSON inside it. Pandoc passes it to the
    HTML page as it is and leaves it out of every other format."""
    if kind not in KINDS:
        raise ValueError(f"explorable kind {kind!r} is not one of {list(KINDS)}")
    # "</" would end the <script> element early: JSON allows the escaped "<\/" in its place.
    payload = json.dumps(data, allow_nan=False, separators=(",", ":")).replace("</", "<\\/")
    return Markdown(
        "```{=html}\n"
        f'<div class="explorable explorable-{kind}" data-explorable="{kind}">'
        f'<script type="application/json">{payload}</script>'
        "<noscript>This explorable needs JavaScript; the tables beside it hold the same numbers.</noscript>"
        "</div>\n"
        "```\n"
    )
