"""Published reference perplexities, as data with their sources.

``published.csv`` (package data beside this file) holds one row per published model:

    corpus, model, family        which corpus, the paper's name for the model, and its kind:
                                 ff | rnn | ngram | ff+ngram (a network averaged with an n-gram)
    description                  the model's settings in the paper's own terms
    test_ppl, valid_ppl          the published perplexities (valid_ppl blank where not published)
    reference_for                ff | rnn: the row our model of that family is measured against on
                                 that corpus; ngram: the paper's Kneser-Ney row that our count-based baseline
                                 of the same order (tables/baselines.csv) stands beside, and to which every
                                 perplexity of that corpus is also taken as a ratio (at most one per corpus and
                                 family); blank otherwise
    source, table, page          where the number is printed (page blank where not checked)
    cite_key                     the paper's key in the book's bibliography (reports/references.bib), so that
                                 the book cites each row's paper where it shows the row
    split, train_tokens, valid_tokens, test_tokens, vocab_size
                                 the paper's data split (token counts blank where the paper gives none)
    counting                     what the paper says about which tokens its perplexity averages over
    n, hidden, embed_dim, direct the paper's recipe, blank where the source does not state it: the model's
    optimizer, batch_size,       order n (n - 1 words of context), hidden units (h), word features (m), direct
    dropout, weight_decay        connections (yes | no), the update rule (sgd | adam, as our config names
                                 them), examples per update, dropout and weight decay (0: none); our runs'
                                 departures from their reference row are read against these
                                 (rnnbench.results.departures)
    checked_against              the text each number was checked against
    notes                        anything a reader needs to compare the row with ours

Nothing here is computed: the numbers are the papers', and this module only reads and checks them.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

# The recipe columns: a training recipe as a paper states it, in the names of our run config's settings but n
# (the model's order, one more than our context n - 1).
RECIPE = ("n", "hidden", "embed_dim", "direct", "optimizer", "batch_size", "dropout", "weight_decay")
COLUMNS = (
    "corpus",
    "model",
    "family",
    "description",
    "test_ppl",
    "valid_ppl",
    "reference_for",
    "source",
    "cite_key",
    "table",
    "page",
    "split",
    "train_tokens",
    "valid_tokens",
    "test_tokens",
    "vocab_size",
    "counting",
    *RECIPE,
    "checked_against",
    "notes",
)
FAMILIES = ("ff", "rnn", "ngram", "ff+ngram")
REFERENCE_FAMILIES = ("ff", "rnn", "ngram")
# What each recipe column may hold: a number (its smallest value, whether whole), or one of a few words.
RECIPE_NUMBERS = {
    "n": (1, True),
    "hidden": (0, True),  # Bengio et al.'s MLP3 has no hidden layer (h = 0)
    "embed_dim": (1, True),
    "batch_size": (1, True),
    "dropout": (0, False),
    "weight_decay": (0, False),
}
RECIPE_WORDS = {"direct": ("yes", "no"), "optimizer": ("sgd", "adam")}
# Text columns every row must fill: a number without its source is not a published number.
REQUIRED_TEXT = ("corpus", "model", "family", "description", "source", "cite_key", "table", "split", "checked_against")
# A citation key as pandoc reads one after @ (a letter first; letters, digits and : . - _ inside), so that "@key" in
# the book is a citation and nothing else.
CITE_KEY = re.compile(r"[A-Za-z][\w:.-]*\w")
NUMBERS = ("test_ppl", "valid_ppl")
COUNTS = ("train_tokens", "valid_tokens", "test_tokens", "vocab_size")


def published_path() -> Path:
    """The packaged table's location (inside the installed package)."""
    return Path(str(resources.files("rnnbench.published").joinpath("published.csv")))


def load_published(path: str | Path | None = None) -> pd.DataFrame:
    """The published rows, checked: every column present, every source filled in, perplexities > 1.

    A malformed table raises ValueError naming the file, the row (1 = first data row) and the column.
    """
    path = Path(path) if path is not None else published_path()
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected {list(COLUMNS)}")
    table = table[list(COLUMNS)].copy()
    for i, row in table.iterrows():
        where = f"{path}: row {i + 1} ({row['corpus']} {row['model']!r})"
        for column in REQUIRED_TEXT:
            if not row[column].strip():
                raise ValueError(f"{where}: column {column!r} is empty; every published number needs it")
        if not CITE_KEY.fullmatch(row["cite_key"]):
            raise ValueError(f"{where}: cite_key {row['cite_key']!r} is not a citation key (letters, digits, : . - _)")
        if row["family"] not in FAMILIES:
            raise ValueError(f"{where}: family {row['family']!r} is not one of {FAMILIES}")
        if row["reference_for"] and (row["reference_for"] != row["family"] or row["family"] not in REFERENCE_FAMILIES):
            raise ValueError(
                f"{where}: reference_for {row['reference_for']!r} must be blank or the row's own family "
                f"({row['family']!r}); allowed: {REFERENCE_FAMILIES}"
            )
        if row["reference_for"] == "ngram" and not row["n"].strip():
            raise ValueError(f"{where}: a Kneser-Ney reference row needs its order n (our baseline of that order)")
        for column in NUMBERS:
            _check_number(row[column], where, column, required=column == "test_ppl", minimum=1.0)
        for column in COUNTS:
            _check_number(row[column], where, column, required=False, minimum=1.0, integer=True)
        for column, (minimum, whole) in RECIPE_NUMBERS.items():
            _check_number(row[column], where, column, required=False, minimum=minimum, integer=whole)
        for column, words in RECIPE_WORDS.items():
            if row[column] not in ("", *words):
                raise ValueError(f"{where}: column {column!r} must be blank or one of {words}, found {row[column]!r}")
    for column in NUMBERS:
        table[column] = pd.to_numeric(table[column].replace("", None), errors="raise").astype(float)
    for column in (*COUNTS, *(c for c, (_, whole) in RECIPE_NUMBERS.items() if whole)):
        table[column] = pd.to_numeric(table[column].replace("", None), errors="raise").astype("Int64")
    for column in (c for c, (_, whole) in RECIPE_NUMBERS.items() if not whole):
        table[column] = pd.to_numeric(table[column].replace("", None), errors="raise").astype(float)
    references = table[table["reference_for"] != ""]
    doubled = references[references.duplicated(["corpus", "reference_for"], keep=False)]
    if len(doubled):
        pairs = sorted(set(zip(doubled["corpus"], doubled["reference_for"], strict=True)))
        raise ValueError(f"{path}: more than one reference row for (corpus, family) {pairs}; keep one each")
    return table.reset_index(drop=True)


def reference_rows(published: pd.DataFrame) -> pd.DataFrame:
    """The rows our models are measured against, one per (corpus, family)."""
    return published[published["reference_for"] != ""].reset_index(drop=True)


def kneser_ney_rows(published: pd.DataFrame) -> dict[str, Any]:
    """corpus -> its paper's Kneser-Ney row (reference_for ngram), the one every perplexity of it is also a ratio to."""
    return {row.corpus: row for row in reference_rows(published).itertuples() if row.reference_for == "ngram"}


def _check_number(text: str, where: str, column: str, *, required: bool, minimum: float, integer: bool = False) -> None:
    if not text.strip():
        if required:
            raise ValueError(f"{where}: column {column!r} is empty")
        return
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: column {column!r} must be a number, found {text!r}") from None
    if not value >= minimum or (integer and value != int(value)):
        kind = "an integer" if integer else "a number"
        raise ValueError(f"{where}: column {column!r} must be {kind} >= {minimum:g}, found {text!r}")
