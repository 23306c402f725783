"""A chapter's alternative passages are Markdown, shown or dropped by flags its results set as metadata
(rnnbench.book.conditions): the block written, and every flag a chapter's text names is one its values set."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rnnbench.book import (
    ablations_chapter,
    activation,
    clipping_chapter,
    conditions,
    context_chapter,
    front,
    gradients_chapter,
    matched,
    published_chapter,
    reproduce_chapter,
    truncation_chapter,
)
from rnnbench.book.format import Markdown

REPORTS = Path(__file__).resolve().parents[1] / "reports"
# Each namespace a chapter's text names, and the value object whose flags set it.
NAMESPACES = {
    "ablations": ablations_chapter.Ablations,
    "published": published_chapter.PublishedChapter,
    "activation": activation.Passages,
    "clipping": clipping_chapter.ClippingChapter,
    "truncation": truncation_chapter.Passages,
    "answers": front.FrontPage,
    "context": context_chapter.WindowSection,
    "gradients": gradients_chapter.Passages,
    "reproduce": reproduce_chapter.ReproduceChapter,
    "matched": matched.Passages,
}


@dataclass(frozen=True)
class Row:
    shown: bool
    value: Markdown = Markdown("–")


@dataclass(frozen=True)
class Page:
    compared: bool
    runs: int
    first: Row
    second: Row


PAGE = Page(compared=True, runs=3, first=Row(shown=False), second=Row(shown=True, value=Markdown("1.5")))


def test_the_block_holds_the_boolean_fields_nested_as_the_values_are():
    assert conditions.metadata("chapter", PAGE) == (
        "\n---\nchapter:\n  compared: true\n  first:\n    shown: false\n  second:\n    shown: true\n---\n"
    )
    assert conditions.metadata("chapter", {"drawn": False}) == "\n---\nchapter:\n  drawn: false\n---\n"


def test_the_names_a_chapter_may_use_are_read_from_the_types():
    assert conditions.names("chapter", Page) == {"chapter.compared", "chapter.first.shown", "chapter.second.shown"}


def test_the_block_is_yaml_that_reads_back_as_the_flags():
    yaml = pytest.importorskip("yaml")
    block = conditions.metadata("chapter", PAGE).strip().strip("-")
    assert yaml.safe_load(block) == {
        "chapter": {"compared": True, "first": {"shown": False}, "second": {"shown": True}}
    }


def used_flags(text: str) -> set[str]:
    return set(re.findall(r'(?:when|unless)-meta="([^"]+)"', text))


def test_a_misspelt_flag_is_found():
    text = '::: {.content-visible when-meta="published.refrence.shown"}\nx\n:::\n'
    assert used_flags(text) - conditions.names("published", NAMESPACES["published"]) == {"published.refrence.shown"}


@pytest.mark.parametrize("chapter", sorted(p.name for p in REPORTS.glob("*.qmd")))
def test_every_flag_a_chapter_names_is_one_its_values_set(chapter):
    text = (REPORTS / chapter).read_text(encoding="utf-8")
    used = used_flags(text)
    for namespace in {name.split(".")[0] for name in used}:
        assert namespace in NAMESPACES, f"{chapter}: no value object sets the flags of {namespace!r}"
        assert f'conditions.metadata("{namespace}",' in text, f"{chapter} names {namespace} flags but never sets them"
        unknown = {n for n in used if n.startswith(f"{namespace}.")} - conditions.names(
            namespace, NAMESPACES[namespace]
        )
        assert unknown == set(), f"{chapter}: no such flag: {sorted(unknown)}"


def test_the_chapter_test_reads_a_page_as_quarto_shows_it():
    import bookcheck

    page = (
        "\n---\nch:\n  a: true\n  b:\n    c: false\n---\n\n"
        'One [yes]{.content-visible when-meta="ch.a"}[no]{.content-visible unless-meta="ch.a"} and '
        '[[−1, 2] inside]{.content-visible unless-meta="ch.b.c"}.\n\n'
        '::: {.content-visible when-meta="ch.b.c"}\nhidden\n::: {.callout}\nalso hidden\n:::\n:::\n\n'
        '::: {.content-hidden when-meta="ch.missing"}\nkept\n:::\n\n'
        'Nested: [outer [a]{.content-visible when-meta="ch.a"}[c]{.content-visible when-meta="ch.b.c"} end]'
        '{.content-visible when-meta="ch.a"} [gone [a]{.content-visible when-meta="ch.a"}]'
        '{.content-visible when-meta="ch.b.c"}[none]{.content-visible unless-meta="ch.b.c"}.\n'
    )
    text = bookcheck.shown(page)
    assert "One yes and [−1, 2] inside." in text
    assert "Nested: outer a end none." in text
    assert "hidden" not in text and "no]" not in text and "content-" not in text
    assert "kept" in text


def test_a_rendered_page_that_prints_nan_for_a_number_is_found():
    import bookcheck

    page = "<p>From <span>n − 1 = 4</span> the perplexity goes from nan to <b>NaN</b>; a nanometre is not one.</p>"
    assert [found.strip() for found in bookcheck.not_a_number(bookcheck.html_text(page))] == [
        "From n − 1 = 4 the perplexity goes from nan to NaN ; a nanometre is not one."
    ]
    assert bookcheck.not_a_number("the best width, n − 1 = 4, reaches –") == []


# A span of alternative text, innermost: "[text]{.content-visible ...}" with no bracket inside the text.
SPAN = re.compile(r"\[([^\[\]]*)\]\{\.content-(?:visible|hidden)")


def test_no_conditional_span_begins_or_ends_with_a_space():
    # Pandoc trims a span's edge spaces: "[trained. ]{...}[On" renders as "trained.On", and "0.5[ and ...]{...}" as
    # "0.5and". A space belongs outside the span; an optional clause starts with its punctuation instead.
    edged = [
        f"{chapter.name}:{number}: [{match.group(1)[:40]}...]"
        for chapter in sorted(REPORTS.glob("*.qmd"))
        for number, line in enumerate(chapter.read_text(encoding="utf-8").splitlines(), start=1)
        for match in SPAN.finditer(line)
        if match.group(1) != match.group(1).strip()
    ]
    assert not edged, edged
