"""Which of a chapter's alternative passages its results call for, written where Quarto reads it: the chapter's
metadata, so the passages themselves stay Markdown in the chapter.

A chapter keeps every alternative sentence in its text, each in a div that Quarto shows or drops by a metadata
flag::

    ::: {.content-visible when-meta="published.reference.shown"}
    Trained to convergence, ...
    :::

and one cell, with ``#| output: asis``, whose value is ``metadata("published", chapter)``: a YAML metadata block
holding the chapter's flags. Pandoc reads a YAML block anywhere in a document as metadata, and Quarto decides
``when-meta``/``unless-meta`` after the cells have run, so the flags are the results'.

The flags are the boolean fields of the chapter's value objects (dataclasses), nested as those are: a chapter's
text can name only a flag its values have (tests/test_conditions.py reads each name a chapter's text uses against them).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any

from rnnbench.book.format import Markdown


def flags(values: Any) -> dict[str, Any]:
    """The boolean fields of a dataclass, and those of the dataclasses it holds, nested by field name."""
    found: dict[str, Any] = {}
    for field in dataclasses.fields(values):
        value = getattr(values, field.name)
        if isinstance(value, bool):
            found[field.name] = value
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            nested = flags(value)
            if nested:
                found[field.name] = nested
    return found


def metadata(namespace: str, values: Any) -> Markdown:
    """A YAML metadata block setting ``<namespace>.<flag>`` for each flag of ``values`` (a dataclass, or a mapping
    of flags), to be the value of a cell with ``output: asis``."""
    tree = flags(values) if dataclasses.is_dataclass(values) else dict(values)
    return Markdown("\n---\n" + "\n".join(_yaml({namespace: tree}, 0)) + "\n---\n")


def names(namespace: str, kind: type) -> set[str]:
    """Every flag ``metadata`` sets for a value of the dataclass ``kind``, as a chapter names it:
    "published.reference.shown". Read from the fields' types, so no results are needed."""
    return set(_paths({namespace: _flag_types(kind)}, ""))


def _flag_types(kind: type) -> dict[str, Any]:
    hints = typing.get_type_hints(kind)
    found: dict[str, Any] = {}
    for field in dataclasses.fields(kind):
        hint = hints[field.name]
        if hint is bool:
            found[field.name] = True
        elif dataclasses.is_dataclass(hint):
            nested = _flag_types(hint)
            if nested:
                found[field.name] = nested
    return found


def _yaml(tree: Mapping[str, Any], depth: int) -> list[str]:
    lines = []
    for key, value in tree.items():
        if isinstance(value, Mapping):
            lines.append(f"{'  ' * depth}{key}:")
            lines += _yaml(value, depth + 1)
        else:
            lines.append(f"{'  ' * depth}{key}: {'true' if value else 'false'}")
    return lines


def _paths(tree: Mapping[str, Any], prefix: str):
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from _paths(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"
