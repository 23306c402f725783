"""What the book's first chapter reads (reports/answers.qmd) and its appendix of verdicts (reports/verdicts.qmd):
each claim's verdict as words, the number behind it, the sources' errors and one ledger of every claim.

    says(verdict)             the words a sentence says of a claim with that verdict or reading ("holds")
    cell(verdict)             the same, short, for a table cell
    reading(verdict, parts)   a claim's verdict read with its parts: a claim that holds in part is MIXED (some parts
                              hold, some fail), PARTLY_DECIDED (some hold, the rest undecided) or PARTLY_REFUTED
                              (some fail, the rest undecided)
    tally(verdicts)           "8 hold, 7 are mixed and 5 are inconclusive": a count of claims by verdict or reading
    Answers(results)          tables/findings.csv by claim: .says(claim), .said(claim) (the words and the number),
                              .reading(claim), .title(claim), .question(key) (its claims, in the chapter's order),
                              .verdicts(key) (each claim of a question as "title: verdict"), .measured (the claims
                              tested, the rows .tally counts) and .checks (a source's printout recomputed on one
                              network: rnnbench.findings.catalog.CHECKS, counted with the arithmetic checks)
    checked(results)          how many checks (the arithmetic ones and the findings' checks) have a verdict, and how
                              many of them agree with the source
    best_activation(runs, s)  the activation and start with the best mean in one activation study
    errata_items(results)     every place the checks found a source wrong, by kind (ERRATA_KINDS): arithmetic the
                              computation contradicts, claims the measurements refute, failing parts of claims
                              that hold in part, the chapter's passage measured
    errata(results)           those as Markdown list items
    ledger(sections)          every claim, measured then the checks (arithmetic, then the findings' checks, marked so):
                              title, source, number, verdict, where to see it
    ledger_table(sections)    that as the chapter's table, its columns' widths set
    claim_label(claim)        the appendix's label of a claim's section (sec-claim-<slug>)
    seed_name(seed)           how the book names a source text ("the chapter", "“The vanilla RNN”")

The chapter, the lessons and their files are the book's *sources*; a seed is a random seed. Every verdict word
comes from the verdict (and its parts' verdicts) here and every number from the tables; the sentences around them
are the chapter's. No torch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from rnnbench.book import decay, findings
from rnnbench.book import format as fmt
from rnnbench.book.results import study_about, table
from rnnbench.findings.catalog import CHECKS
from rnnbench.findings.headline import number as part_number
from rnnbench.findings.headline import setting as part_setting
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
from rnnbench.metrics import LOWER_IS_BETTER

# A claim that holds in part, read with its parts' verdicts (a part true by construction counts as holding; one
# not shown is left out): some hold and some fail; some hold, the rest undecided; some fail, the rest undecided.
MIXED, PARTLY_DECIDED, PARTLY_REFUTED = "mixed", "partly decided", "partly refuted"
READINGS = (MIXED, PARTLY_DECIDED, PARTLY_REFUTED)

# What a sentence says of one claim ("the claim that ... holds in part, the rest undecided"). PARTLY stays for a
# chapter that has only the verdict; a claim read with its parts says its reading.
SAYS = {
    HOLDS: "holds",
    FAILS: "fails",
    PARTLY: "holds in part",
    INCONCLUSIVE: "is inconclusive",
    NOT_SHOWN: "is not shown here",
    BY_CONSTRUCTION: "is true by construction",
    MIXED: "holds in part and fails in part",
    PARTLY_DECIDED: "holds in part, the rest undecided",
    PARTLY_REFUTED: "fails in part, the rest undecided",
}
# A table cell's word for it: the words the chapter defines.
CELLS = {
    HOLDS: "holds",
    FAILS: "fails",
    PARTLY: "in part",
    INCONCLUSIVE: "inconclusive",
    NOT_SHOWN: "not shown",
    BY_CONSTRUCTION: "by construction",
    MIXED: "mixed",
    PARTLY_DECIDED: "partly decided",
    PARTLY_REFUTED: "partly refuted",
}
# A count of claims: (one claim, several claims).
COUNTED = {
    HOLDS: ("holds", "hold"),
    FAILS: ("fails", "fail"),
    PARTLY: ("holds in part", "hold in part"),
    INCONCLUSIVE: ("is inconclusive", "are inconclusive"),
    NOT_SHOWN: ("is not shown", "are not shown"),
    BY_CONSTRUCTION: ("is true by construction", "are true by construction"),
    MIXED: ("is mixed", "are mixed"),
    PARTLY_DECIDED: ("is partly decided", "are partly decided"),
    PARTLY_REFUTED: ("is partly refuted", "are partly refuted"),
}
# A finding that is a check, where a cell or a list names its verdict: "holds (a check)".
CHECK_MARK = fmt.Markdown("a check")
ORDER = (HOLDS, MIXED, PARTLY_DECIDED, PARTLY, PARTLY_REFUTED, FAILS, INCONCLUSIVE, NOT_SHOWN, BY_CONSTRUCTION)
# The sources by name: the findings name them by file, the arithmetic checks by key.
SEED_NAMES = {
    CHAPTER: "the chapter",
    LESSON_001: "“The vanilla RNN”",
    LESSON_003: "“Recurrent Neural Networks”",
    "chapter": "the chapter",
    "lesson001": "“The vanilla RNN”",
    "lesson003": "“Recurrent Neural Networks”",
}


def _known(verdict: str) -> str:
    if verdict not in VERDICTS and verdict not in READINGS:
        raise ValueError(f"verdict {verdict!r}; known: {', '.join((*VERDICTS, *READINGS))}")
    return verdict


def says(verdict: str) -> fmt.Markdown:
    return fmt.Markdown(SAYS[_known(verdict)])


def cell(verdict: str) -> fmt.Markdown:
    return fmt.Markdown(CELLS[_known(verdict)])


def reading(verdict: str, part_verdicts: Iterable[str]) -> str:
    """The verdict, or for a claim that holds in part what its parts' verdicts make of it (READINGS)."""
    if _known(verdict) != PARTLY:
        return verdict
    found = set(part_verdicts)
    holds, fails = bool(found & {HOLDS, BY_CONSTRUCTION}), FAILS in found
    if holds and fails:
        return MIXED
    if fails:
        return PARTLY_REFUTED
    return PARTLY_DECIDED


def tally(verdicts: Iterable[str]) -> fmt.Markdown:
    """How many claims have each verdict or reading, in ORDER: "3 hold, 1 is mixed and 2 are inconclusive"."""
    verdicts = [_known(v) for v in verdicts]
    counts = [(v, verdicts.count(v)) for v in ORDER if v in verdicts]
    return fmt.words([f"{fmt.integer(n)} {COUNTED[v][n != 1]}" for v, n in counts])


def seed_name(seed: str, *, start: bool = False) -> str:
    """A source as the book names it, capitalised at the start of a sentence."""
    name = SEED_NAMES.get(seed, seed)
    return name[0].upper() + name[1:] if start else name


def claim_label(claim: str) -> str:
    return f"sec-claim-{fmt.label_slug(claim)}"


class Answers:
    """tables/findings.csv (rule findings_table), read once, by claim; its parts (tables/findings_parts.csv) read
    where a claim holds in part, to tell how."""

    def __init__(self, results: str | Path | None = None):
        self.results = results
        self.table = findings.findings(results)
        self.by_id = self.table.set_index("id")
        is_check = self.table["id"].isin(CHECKS)
        self.measured = self.table[~is_check]  # the claims tested: what the tally of verdicts counts
        self.checks = self.table[is_check]  # a source's printout recomputed: counted with the arithmetic checks

    def is_check(self, claim: str) -> bool:
        return claim in CHECKS

    def _row(self, claim: str) -> pd.Series:
        if claim not in self.by_id.index:
            raise KeyError(f"tables/findings.csv has no claim {claim!r}; rebuild it with `snakemake results`")
        return self.by_id.loc[claim]

    def verdict(self, claim: str) -> str:
        return _known(self._row(claim)["verdict"])

    def parts(self, claim: str) -> pd.DataFrame:
        """The claim's parts (tables/findings_parts.csv), indexed by label."""
        return findings.parts(claim, self.results)

    def reading(self, claim: str) -> str:
        verdict = self.verdict(claim)
        return reading(verdict, self.parts(claim)["verdict"]) if verdict == PARTLY else verdict

    def says(self, claim: str) -> fmt.Markdown:
        """The reading's words, in italics for a reader to find in a sentence of numbers: "*holds*"."""
        return fmt.Markdown(f"*{says(self.reading(claim))}*")

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

    def question_tally(self, key: str) -> fmt.Markdown:
        """How many of a question's measured claims have each reading ("1 holds and 3 are inconclusive"); a
        check of a lesson's printout is the ledger's, not counted here."""
        measured = [c for c in self.question(key) if not self.is_check(c)]
        return self.tally(measured) if measured else fmt.Markdown("none is measured")

    def cell(self, claim: str) -> fmt.Markdown:
        """The claim's reading as a cell word, a check's marked so: "holds (a check)"."""
        word = cell(self.reading(claim))
        return fmt.Markdown(f"{word} ({CHECK_MARK})" if self.is_check(claim) else word)

    def tally(self, claims: Iterable[str] | None = None) -> fmt.Markdown:
        """How many of ``claims`` (every measured claim: never a check) have each verdict, a claim that holds in
        part by its reading."""
        claims = list(self.measured["id"]) if claims is None else list(claims)
        return tally(self.reading(c) for c in claims)

    def ordered(self) -> pd.DataFrame:
        """The table in the chapter's order: by question, then as the catalog lists them."""
        rank = {q: i for i, q in enumerate(QUESTIONS)}
        return self.table.sort_values("question", key=lambda s: s.map(rank), kind="stable")


def best_activation(runs: pd.DataFrame, study: str | None) -> tuple[str, str, float] | None:
    """The (activation, start, mean) with the best mean of its metric over the runs that learned in ``study``
    (tables/activation.csv's rows, rnnbench.book.activation.runs); None where no run learned."""
    learned = runs[(runs["study"] == study) & (runs["outcome"] == "learned")]
    if learned.empty:
        return None
    means = learned.groupby(["activation", "start"])["value"].mean()
    best = means.idxmin() if learned["metric"].iloc[0] in LOWER_IS_BETTER else means.idxmax()
    return best[0], best[1], float(means[best])


def checked(results: str | Path | None = None) -> tuple[int, int]:
    """(how many checks have a verdict, how many agree with the source): every arithmetic claim
    (tables/seed_claims.csv) and every finding that is a check with a verdict of holds or fails."""
    arithmetic = table("seed_claims", results, text=["claimed", "computed"])
    checks = Answers(results).checks
    decided = checks[checks["verdict"].isin((HOLDS, FAILS))]
    right = int(arithmetic["matches"].sum()) + int((decided["verdict"] == HOLDS).sum())
    return len(arithmetic) + len(decided), right


def _sentence_case(text: str) -> str:
    text = str(text).strip().rstrip(".")
    return text[0].upper() + text[1:] if text else text


# The kinds of erratum, in the list's order.
ERRATA_KINDS = ("arithmetic", "passage", "refuted", "refuted in part")


def _failing_parts(row, parts: pd.DataFrame, results: str | Path | None = None) -> str:
    """A claim's failing parts as "setting: number" (headline.setting and headline.number: no study names)."""
    read = [r.strip() for r in str(row.evidence).split(";") if r.strip()]
    failing = parts[parts["verdict"] == FAILS]
    settings = [part_setting(str(label), read) for label in failing.index]
    said = []
    for (label, part), where in zip(failing.iterrows(), settings, strict=True):
        # Two parts alike but for what they read (one design against another): each named by its study's description.
        if settings.count(where) > 1:
            source = str(part.get("source", ""))  # "" in a table from before the column: read the label
            names = [r.split("/", 1)[-1] for r in read if r.startswith("studies/")]
            studies = [n for n in names if (n == source if source else n in str(label))]
            where = f"{where} ({study_about(studies[0], results)['description']})" if studies else where
        value = part_number(SimpleNamespace(verdict=part["verdict"], value=part["value"], note=part["note"]))
        # why the interval refutes it ("measurably short of the margin"): an interval across zero can, against a margin
        reason = re.sub(r"\s*\(p = [^)]*\)", "", str(part["note"] or "")).strip()
        value = f"{value}, {reason}" if value and reason else value
        said.append(f"{where}: {value}" if where and value else where or value)
    return "; ".join(said)


def passage_distance(results: str | Path | None = None) -> int | None:
    """How many tokens back the chapter's passage puts its evidence word, as the passage analysis measured it
    (rnnbench.book.decay.passage_rows); None where no analysis reads the passage."""
    rows = decay.passage_rows(results)
    distances = sorted(set(rows["distance"].astype(int))) if len(rows) else []
    return distances[0] if len(distances) == 1 else None


def errata_items(results: str | Path | None = None) -> dict[str, list[str]]:
    """Markdown list items per kind (ERRATA_KINDS): an arithmetic claim the computation contradicts, the source's
    number beside the computed one (tables/seed_discrepancies.csv), and a finding that is a check and fails, with
    the number that contradicts the source's printout; a measured claim whose verdict is fails, with
    the number that refutes it; a claim that holds in part with the parts that fail, each with its setting and
    number; the chapter's passage, where the measured distance of its evidence word is not the chapter's."""
    items: dict[str, list[str]] = {kind: [] for kind in ERRATA_KINDS}
    wrong = table("seed_discrepancies", results, text=["claimed", "computed", "title", "note"]).fillna("")
    for row in wrong.itertuples():
        note = str(row.note).strip().rstrip(".")
        items["arithmetic"].append(
            f"- **{fmt.escape(_sentence_case(row.title))}:** {seed_name(row.seed)} says {fmt.with_math(row.claimed)}, "
            f"the computation gives {fmt.with_math(row.computed)}" + (f" — {fmt.with_math(note)}." if note else ".")
        )
    found = Answers(results)
    for row in found.ordered().itertuples():
        title = fmt.escape(_sentence_case(row.title))
        if found.is_check(row.id):
            if row.verdict == FAILS:
                items["arithmetic"].append(
                    f"- **{title}:** {seed_name(row.seed)} says so, and the computation contradicts it: "
                    f"{fmt.escape(row.headline)} (@{claim_label(row.id)})."
                )
        elif row.verdict == FAILS:
            items["refuted"].append(
                f"- **{title}:** {seed_name(row.seed)} says so, and the measurements refute it: "
                f"{fmt.escape(row.headline)} (@{claim_label(row.id)})."
            )
        elif row.verdict == PARTLY and found.reading(row.id) in (MIXED, PARTLY_REFUTED):
            items["refuted in part"].append(
                f"- **{title}:** {seed_name(row.seed)} says so, and the measurements refute it "
                f"for {fmt.escape(_failing_parts(row, found.parts(row.id), results))} (@{claim_label(row.id)})."
            )
    measured = passage_distance(results)
    if measured is not None and measured != decay.PASSAGE_WORDS:
        word = fmt.escape(decay.passage_rows(results)["word"].iloc[0])
        items["passage"].append(
            f"- **The forty-seven word example:** the chapter puts the evidence “{word}” "
            f"{fmt.integer(decay.PASSAGE_WORDS)} words back; in the passage as printed it is "
            f"{fmt.integer(measured)} tokens back in the Penn Treebank's tokenisation (@sec-gradient-decay-passage)."
        )
    return items


def errata(results: str | Path | None = None) -> fmt.Markdown:
    """errata_items as one Markdown list, in ERRATA_KINDS order; "None." where the sources are wrong nowhere."""
    items = [item for kind in ERRATA_KINDS for item in errata_items(results)[kind]]
    return fmt.Markdown("\n".join(items) if items else "None: every check agrees with the sources.")


def ledger(sections: Mapping[str, str], results: str | Path | None = None) -> pd.DataFrame:
    """Every claim: the measured ones (tables/findings.csv) in the chapter's order, then the checks: the arithmetic
    ones (tables/seed_claims.csv), then the findings that are checks, their verdicts marked so. Columns claim (its
    title), source, number (the headline; the computed value, and the source's beside it where they differ), verdict
    (a cell word, a claim that holds in part by its reading), see (a finding's appendix section, an arithmetic
    one's section as ``sections`` maps the source's section to a label; "" where it maps none)."""
    found = Answers(results)
    ordered = found.ordered()

    def finding_row(row) -> dict:
        return {
            "claim": fmt.escape(row.title),
            "source": seed_name(row.seed),
            "number": fmt.escape(row.headline) if row.headline else fmt.NONE,
            "verdict": found.cell(row.id),
            "see": fmt.Markdown(f"@{claim_label(row.id)}"),
        }

    rows = [finding_row(row) for row in ordered.itertuples() if not found.is_check(row.id)]
    for row in table("seed_claims", results, text=["claimed", "computed", "title"]).itertuples():
        number = row.computed if row.matches else f"{row.computed}; the source: {row.claimed}"
        label = sections.get(row.where)
        rows.append(
            {
                "claim": fmt.escape(row.title),
                "source": seed_name(row.seed),
                "number": fmt.with_math(number),
                "verdict": cell(HOLDS if row.matches else FAILS),
                "see": fmt.Markdown(f"@{label}" if label else "–"),
            }
        )
    rows.extend(finding_row(row) for row in ordered.itertuples() if found.is_check(row.id))
    return pd.DataFrame(rows, columns=["claim", "source", "number", "verdict", "see"])


# The ledger's columns' shares of the page width (the dashes under its header): the deciding number takes what a
# verdict word and a section reference, each kept on one line, leave.
LEDGER_WIDTHS = {"claim": 24, "source": 12, "number": 40, "verdict": 13, "see": 11}
LEDGER_HEADERS = {"number": "the number that decides it"}


def ledger_table(sections: Mapping[str, str], results: str | Path | None = None) -> fmt.Markdown:
    """The ledger as a pipe table whose columns take LEDGER_WIDTHS of the page, every cell left-aligned."""
    frame = ledger(sections, results)
    lines = fmt.markdown_table(frame, headers=LEDGER_HEADERS).split("\n")
    lines[1] = "|" + "|".join(":" + "-" * (LEDGER_WIDTHS[c] - 1) for c in frame.columns) + "|"
    return fmt.Markdown("\n".join(lines))
