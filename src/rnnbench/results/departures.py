"""Where our run's recipe departs from its reference row's: each setting the paper states (the recipe columns of
rnnbench.published) set against the same setting of our run's config.json.

    recipe_of(config)            our run's recipe, in the published table's recipe columns
    departures(ours, theirs)     each setting the paper states and ours differs in, "<setting> <ours> against <theirs>"
    departure_text(ours, theirs) the comparison table's cell: those departures, "none", or that the paper states none
    setting_departures(ours, base) each run setting two of our runs differ in, "<setting> <ours> against <base's>":
                                 a recipe carried beyond the run that reproduced a published row (a study's
                                 departs_from), read from both runs' config.json

Both sides are read, never typed: ours from the run's settings, theirs from published.csv. A setting the paper
leaves blank is no departure; a paper that states no setting at all (Mikolov et al.'s table) gets NO_RECIPE.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from rnnbench.config.runs import ADDED_AFTER_IDS
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


# How setting_departures words a run setting ("{ours} against {base's}"): the recipe columns' words where a run
# setting is one (n and direct are the published table's, not config.json's), then the settings only our runs state;
# any other is named by its words.
SETTING_WORDING = {
    **{key: words for key, words in WORDING.items() if key not in ("n", "direct")},
    "context": "n - 1 = {} against {}",
    "dropout_mask": "one dropout mask a {} against one a {}",
    "recurrent_dropout": "dropout on U {} against {}",
    "lr": "rate {} against {}",
    "bptt": "BPTT over {} steps against {}",
    "max_epochs": "at most {} epochs against {}",
    "output": "a {} softmax against an {}",
    "tie_weights": "{} embeddings against {}",
}
# A yes-or-no setting in words: (its words at true, at false).
BOOLEAN_WORDS = {"tie_weights": ("tied", "untied")}
# What two seeds of one recipe differ in, and how a run is computed rather than what it computes.
NOT_RECIPE = ("run_id", "seed", "threads")
ZERO_IS_NONE = ("dropout", "recurrent_dropout", "weight_decay")


def setting_departures(ours: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    """ "; "-joined, each run setting (config.json) in which ``ours`` differs from ``base``, in ``ours``'s order
    then ``base``'s, or NO_DEPARTURE. A config.json leaves out a setting added after run ids existed while it is
    at the value every earlier run had (rnnbench.config.runs.ADDED_AFTER_IDS): a run without it had that value."""

    def value(config: Mapping[str, Any], key: str) -> Any:
        return config[key] if key in config else ADDED_AFTER_IDS.get(key)

    found = []
    for key in dict.fromkeys([*ours, *base]):
        if key in NOT_RECIPE or _setting_same(value(ours, key), value(base, key)):
            continue
        wording = SETTING_WORDING.get(key, key.replace("_", " ") + " {} against {}")
        found.append(wording.format(_setting_shown(key, value(ours, key)), _setting_shown(key, value(base, key))))
    return "; ".join(found) or NO_DEPARTURE


def _setting_same(ours: Any, base: Any) -> bool:
    if isinstance(ours, bool) or isinstance(base, bool) or not all(isinstance(v, (int, float)) for v in (ours, base)):
        return ours == base
    return math.isclose(float(ours), float(base), rel_tol=1e-9, abs_tol=0.0)


def _setting_shown(key: str, value: Any) -> str:
    if value is None or (key in ZERO_IS_NONE and value == 0):
        return "none"
    if key in BOOLEAN_WORDS:
        return BOOLEAN_WORDS[key][0 if value else 1]
    return _shown(key, value)  # as a recipe column shows it
