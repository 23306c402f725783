"""What the book's first chapter reads (reports/answers.qmd) and its appendix of verdicts (reports/verdicts.qmd):
each claim's verdict as words, the number behind it, the seeds' errors and one ledger of every claim.

    says(verdict)             the words a sentence says of a claim with that verdict ("holds in part")
    cell(verdict)             the same, short, for a table cell
    tally(verdicts)           "8 hold, 7 hold in part and 5 are inconclusive": a count of claims by verdict
    Answers(results)          tables/findings.csv by claim: .says(claim), .said(claim) (the words and the number),
                              .title(claim), .question(key) (its claims, in the chapter's order)
    errata(results)           Markdown list items: every arithmetic claim the computation contradicts
                              (tables/seed_discrepancies.csv), then every claim the measurements refute
    ledger(sections)          every claim, measured then arithmetic: title, seed, number, verdict, where to see it
    ledger_table(sections)    that as the chapter's table, its columns' widths set
    claim_label(claim)        the appendix's label of a claim's section (sec-claim-<slug>)
    seed_name(seed)           how the book names a seed ("the chapter", "“The vanilla RNN”")

Every verdict word comes from the verdict here and every number from the tables; the sentences around them are
the chapter's. No torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from rnnbench.book import findings
from rnnbench.book import format as fmt
from rnnbench.book.results import table
from rnnbench.findings.registry import (
    BY_CONSTRUCTION,
    CHAPTER,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    LESSON_001,
    LESSON_003,
    NOT_SHOWN,
    PARTLY,
    QUESTIONS,
    VERDICTS,
)

# What a sentence says of one claim ("the claim that ... holds in part").
SAYS = {
    HOLDS: "holds",
    FAILS: "fails",
    PARTLY: "holds in part",
    INCONCLUSIVE: "is inconclusive",
    NOT_SHOWN: "is not shown here",
    BY_CONSTRUCTION: "is true by construction",
}
# A table cell's word for it.
CELLS = {
    HOLDS: "holds",
    FAILS: "fails",
    PARTLY: "in part",
    INCONCLUSIVE: "inconclusive",
    NOT_SHOWN: "not shown",
    BY_CONSTRUCTION: "by construction",
}
# A count of claims: (one claim, several claims).
COUNTED = {
    HOLDS: ("holds", "hold"),
    FAILS: ("fails", "fail"),
    PARTLY: ("holds in part", "hold in part"),
    INCONCLUSIVE: ("is inconclusive", "are inconclusive"),
    NOT_SHOWN: ("is not shown", "are not shown"),
    BY_CONSTRUCTION: ("is true by construction", "are true by construction"),
}
# The seeds by name: the findings name them by file, the arithmetic checks by key.
SEED_NAMES = {
    CHAPTER: "the chapter",
    LESSON_001: "“The vanilla RNN”",
    LESSON_003: "“Recurrent Neural Networks”",
    "chapter": "the chapter",
    "lesson001": "“The vanilla RNN”",
    "lesson003": "“Recurrent Neural Networks”",
}


def _known(verdict: str) -> str:
    if verdict not in VERDICTS:
        raise ValueError(f"verdict {verdict!r}; known: {', '.join(VERDICTS)}")
    return verdict


def says(verdict: str) -> fmt.Markdown:
    return fmt.Markdown(SAYS[_known(verdict)])


def cell(verdict: str) -> fmt.Markdown:
    return fmt.Markdown(CELLS[_known(verdict)])


def tally(verdicts: Iterable[str]) -> fmt.Markdown:
    """How many claims have each verdict, in VERDICTS order: "3 hold, 1 holds in part and 2 are inconclusive"."""
    verdicts = [_known(v) for v in verdicts]
    counts = [(v, verdicts.count(v)) for v in VERDICTS if v in verdicts]
    return fmt.words([f"{fmt.integer(n)} {COUNTED[v][n != 1]}" for v, n in counts])


def seed_name(seed: str, *, start: bool = False) -> str:
    """A seed as the book names it, capitalised at the start of a sentence."""
    name = SEED_NAMES.get(seed, seed)
    return name[0].upper() + name[1:] if start else name


def claim_label(claim: str) -> str:
    return f"sec-claim-{fmt.label_slug(claim)}"


class Answers:
    """tables/findings.csv (rule findings_table), read once, by claim."""

    def __init__(self, results: str | Path | None = None):
        self.table = findings.findings(results)
        self.by_id = self.table.set_index("id")

    def _row(self, claim: str) -> pd.Series:
        if claim not in self.by_id.index:
            raise KeyError(f"tables/findings.csv has no claim {claim!r}; rebuild it with `snakemake results`")
        return self.by_id.loc[claim]

    def verdict(self, claim: str) -> str:
        return _known(self._row(claim)["verdict"])

    def says(self, claim: str) -> fmt.Markdown:
        """The verdict's words, in italics for a reader to find in a sentence of numbers: "*holds in part*"."""
        return fmt.Markdown(f"*{says(self.verdict(claim))}*")

    def number(self, claim: str) -> fmt.Markdown:
        """The number that decides the verdict (the table's headline), escaped for prose; empty where none."""
        return fmt.escape(self._row(claim)["headline"])

    def said(self, claim: str) -> fmt.Markdown:
        """The verdict's words and its number: "*holds* (n−1 = 4: accuracy ... +0.187 [+0.0952, +0.279])"."""
        number = self.number(claim)
        return fmt.Markdown(f"{self.says(claim)} ({number})" if number else self.says(claim))

    def title(self, claim: str) -> fmt.Markdown:
        return fmt.escape(self._row(claim)["title"])

    def question(self, key: str) -> list[str]:
        """The claims answering one of the chapter's questions, in the catalog's order."""
        if key not in QUESTIONS:
            raise KeyError(f"question {key!r}; known: {', '.join(QUESTIONS)}")
        return list(self.table.loc[self.table["question"] == key, "id"])

    def tally(self, claims: Iterable[str] | None = None) -> fmt.Markdown:
        """How many of ``claims`` (every claim) have each verdict."""
        claims = list(self.table["id"]) if claims is None else list(claims)
        return tally(self.verdict(c) for c in claims)

    def ordered(self) -> pd.DataFrame:
        """The table in the chapter's order: by question, then as the catalog lists them."""
        rank = {q: i for i, q in enumerate(QUESTIONS)}
        return self.table.sort_values("question", key=lambda s: s.map(rank), kind="stable")


def _sentence_case(text: str) -> str:
    text = str(text).strip().rstrip(".")
    return text[0].upper() + text[1:] if text else text


def errata(results: str | Path | None = None) -> fmt.Markdown:
    """One list item per place the checks found a seed wrong: an arithmetic claim with the seed's number beside the
    computed one (tables/seed_discrepancies.csv), then a measured claim whose verdict is fails, with the number that
    refutes it and the appendix section that shows it. "None." where the seeds are wrong nowhere."""
    items = []
    wrong = table("seed_discrepancies", results, text=["claimed", "computed", "title", "note"]).fillna("")
    for row in wrong.itertuples():
        note = str(row.note).strip().rstrip(".")
        items.append(
            f"- **{fmt.escape(_sentence_case(row.title))}:** {seed_name(row.seed)} says {fmt.escape(row.claimed)}, "
            f"the computation gives {fmt.escape(row.computed)}" + (f" — {fmt.escape(note)}." if note else ".")
        )
    found = Answers(results).ordered()
    for row in found[found["verdict"] == FAILS].itertuples():
        items.append(
            f"- **{fmt.escape(_sentence_case(row.title))}:** {seed_name(row.seed)} says so, and the measurements "
            f"refute it: {fmt.escape(row.headline)} (@{claim_label(row.id)})."
        )
    return fmt.Markdown("\n".join(items) if items else "None: every check agrees with the seeds.")


def ledger(sections: Mapping[str, str], results: str | Path | None = None) -> pd.DataFrame:
    """Every claim: the measured ones (tables/findings.csv) in the chapter's order, then the arithmetic ones
    (tables/seed_claims.csv). Columns claim (its title), seed, number (the headline; the computed value, and the
    seed's beside it where they differ), verdict (a cell word), see (a measured claim's appendix section, an
    arithmetic one's section as ``sections`` maps the seed's section to a label; "" where it maps none)."""
    rows = [
        {
            "claim": fmt.escape(row.title),
            "seed": seed_name(row.seed),
            "number": fmt.escape(row.headline) if row.headline else fmt.Markdown("–"),
            "verdict": cell(row.verdict),
            "see": fmt.Markdown(f"@{claim_label(row.id)}"),
        }
        for row in Answers(results).ordered().itertuples()
    ]
    for row in table("seed_claims", results, text=["claimed", "computed", "title"]).itertuples():
        number = row.computed if row.matches else f"{row.computed}; the seed: {row.claimed}"
        label = sections.get(row.where)
        rows.append(
            {
                "claim": fmt.escape(row.title),
                "seed": seed_name(row.seed),
                "number": fmt.escape(number),
                "verdict": cell(HOLDS if row.matches else FAILS),
                "see": fmt.Markdown(f"@{label}" if label else "–"),
            }
        )
    return pd.DataFrame(rows, columns=["claim", "seed", "number", "verdict", "see"])


# The ledger's columns' shares of the page width (the dashes under its header): the deciding number takes what a
# verdict word and a section reference, each kept on one line, leave.
LEDGER_WIDTHS = {"claim": 24, "seed": 12, "number": 42, "verdict": 11, "see": 11}
LEDGER_HEADERS = {"number": "the number that decides it"}


def ledger_table(sections: Mapping[str, str], results: str | Path | None = None) -> fmt.Markdown:
    """The ledger as a pipe table whose columns take LEDGER_WIDTHS of the page, every cell left-aligned."""
    frame = ledger(sections, results)
    lines = fmt.markdown_table(frame, headers=LEDGER_HEADERS).split("\n")
    lines[1] = "|" + "|".join(":" + "-" * (LEDGER_WIDTHS[c] - 1) for c in frame.columns) + "|"
    return fmt.Markdown("\n".join(lines))
