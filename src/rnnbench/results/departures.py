"""Where our run's recipe departs from its reference row's: each setting the paper states (the recipe columns of
rnnbench.published) set against the same setting of our run's config.json.

    recipe_of(config)            our run's recipe, in the published table's recipe columns
    departures(ours, theirs)     each setting the paper states and ours differs in, "<setting> <ours> against <theirs>"
    departure_text(ours, theirs) the comparison table's cell: those departures, "none", or that the paper states none

Both sides are read, never typed: ours from the run's settings, theirs from published.csv. A setting the paper
leaves blank is no departure; a paper that states no setting at all (Mikolov et al.'s table) gets NO_RECIPE.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from rnnbench.published import RECIPE

NO_RECIPE = "the source states no recipe"
NO_DEPARTURE = "none"
# How each recipe column is written in a departure: "{ours} against {theirs}" after its words.
WORDING = {
    "n": "n - 1 = {} against {}",  # the window our config sets (n - 1 words), from the model's order n
    "hidden": "H = {} against {}",
    "embed_dim": "d = {} against {}",
    "direct": "direct connections {} against {}",
    "optimizer": "{} against {}",
    "batch_size": "{} examples per update against {}",
    "dropout": "dropout {} against {}",
    "weight_decay": "weight decay {} against {}",
}
OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}


def recipe_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """Our run's recipe from its settings (config.json): the order n = n - 1 + 1 and direct connections of a
    feed-forward model (a recurrent one has neither: None), and the settings every family has."""
    ff = config["family"] == "ff"
    return {
        "n": config["context"] + 1 if ff else None,
        "hidden": config["hidden"],
        "embed_dim": config["embed_dim"],
        "direct": ("yes" if config.get("direct") else "no") if ff else None,
        "optimizer": config["optimizer"],
        "batch_size": config["batch_size"],
        "dropout": config.get("dropout", 0.0),
        "weight_decay": config.get("weight_decay", 0.0),
    }


def departures(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    """The settings of RECIPE that ``theirs`` states and ``ours`` differs in, in RECIPE's order."""
    found = []
    for column in RECIPE:
        if _blank(theirs.get(column)) or _same(ours.get(column), theirs[column]):
            continue
        found.append(WORDING[column].format(_shown(column, ours.get(column)), _shown(column, theirs[column])))
    return found


def departure_text(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    """ "; "-joined departures, NO_DEPARTURE when the stated recipe is ours, NO_RECIPE when nothing is stated."""
    if all(_blank(theirs.get(column)) for column in RECIPE):
        return NO_RECIPE
    return "; ".join(departures(ours, theirs)) or NO_DEPARTURE


def _blank(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    return value is None or bool(pd.isna(value))


def _same(ours: Any, theirs: Any) -> bool:
    if _blank(ours):
        return False
    if isinstance(theirs, str) or isinstance(ours, str):
        return str(ours) == str(theirs)
    return math.isclose(float(ours), float(theirs), rel_tol=1e-9, abs_tol=0.0)


def _shown(column: str, value: Any) -> str:
    if _blank(value):
        return "none"
    if column == "n":
        return f"{int(value) - 1}"
    if column == "optimizer":
        return OPTIMIZER_NAMES.get(value, str(value))
    if column in ("dropout", "weight_decay"):
        return "none" if float(value) == 0 else f"{float(value):g}"
    return f"{value:g}" if isinstance(value, float) else str(value)
