"""The book's first chapter: every claim's plain title and question, the headline that decides its verdict (parts
planted by hand, and a planted results folder judged), and the verdict words the answers read from the findings
table (a planted findings table, its verdict flipped)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from planted import UNCLIPPED, clipping_folder, write_analysis

from rnnbench.book import answers
from rnnbench.book.decay import PASSAGE_WORDS
from rnnbench.findings import findings_tables
from rnnbench.findings.catalog import CLAIMS
from rnnbench.findings.evidence import Roles
from rnnbench.findings.headline import deciding, headline
from rnnbench.findings.registry import (
    BY_CONSTRUCTION,
    COLUMNS,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    PART_COLUMNS,
    PARTLY,
    QUESTIONS,
    VERDICTS,
    Claim,
    Part,
    combine,
)
from rnnbench.worked.claims import seed_claims

# --------------------------------------------------------------------------------------------------------------
# Titles and questions


def test_every_claim_has_a_plain_title_and_one_of_the_six_questions():
    assert len(QUESTIONS) == 6
    for c in CLAIMS:
        assert c.title.strip() and "_" not in c.title and c.title != c.id, c.id
        assert c.question in QUESTIONS, c.id
    assert len({c.title for c in CLAIMS}) == len(CLAIMS)
    # every question is answered by some claim, and the chapter's own grouping holds
    by_question = {q: {c.id for c in CLAIMS if c.question == q} for q in QUESTIONS}
    assert all(by_question.values())
    assert by_question["context"] == {"widening_not_fix", "window_blind"}
    assert by_question["matched"] == {"recurrence_beats_window", "recurrence_no_cliff"}
    assert by_question["clipping"] == {"clip_direction", "clip_divergence", "clip_quality", "clip_vanishing"}
    assert by_question["truncation"] == {"truncation_invisible", "sentence_cuts_reduce", "truncation_cost"}
    assert by_question["activation"] == {"sigmoid_quarter", "zero_centred_faster", "relu_dies", "relu_no_ceiling"}


def test_a_claim_with_a_question_not_of_the_six_or_a_code_title_is_refused():
    base = CLAIMS[0]
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    with pytest.raises(ValueError, match="question 'windows'"):
        Claim(**{**fields, "question": "windows"})
    with pytest.raises(ValueError, match="a title is plain words"):
        Claim(**{**fields, "title": base.id})


def test_every_arithmetic_claim_has_a_plain_title():
    table = seed_claims()
    assert table["title"].str.strip().astype(bool).all()
    assert not table["title"].str.contains("_|\\^").any()  # no formula, no code name


# --------------------------------------------------------------------------------------------------------------
# The headline: the part that decides the verdict


def _part(label, verdict, value, p_supports=math.nan, p_refutes=math.nan):
    """A part as settle() leaves it: decided by its tests (a stand-in here), with its Holm-adjusted p-values."""
    return Part(label, verdict, value, tests=("planted",), p_supports=p_supports, p_refutes=p_refutes)


READ = ("studies/window_study",)
WEAK = _part("window_study, n−1 = 4", HOLDS, "gap +0.19 [+0.10, +0.28] (p = 0.04, Holm)", p_supports=0.04)
STRONG = _part("window_study, n−1 = 2", HOLDS, "gap +0.40 [+0.31, +0.49] (p = 0.004, Holm)", p_supports=0.004)
SHORT = _part("window_study, n−1 = 8", FAILS, "gap +0.001 [−0.002, +0.004]", p_refutes=0.03)
CLEAR = _part("window_study, n−1 = 16", FAILS, "gap −0.05 [−0.07, −0.03]", p_refutes=0.002)
OPEN = _part("window_study, n−1 = 32", INCONCLUSIVE, "gap +0.1 [−0.3, +0.5]", p_supports=0.5, p_refutes=0.9)


def test_a_claim_that_holds_is_headed_by_its_weakest_supporting_part():
    parts = (STRONG, WEAK)
    assert combine(parts)[0] == HOLDS
    assert deciding(HOLDS, parts) == (WEAK,)  # p = 0.04 is nearer to not holding than p = 0.004
    # the study's name and the p-value are gone; the setting and the interval stay
    assert headline(HOLDS, parts, READ) == "n−1 = 4: gap +0.19 [+0.10, +0.28]"


def test_a_failing_part_is_the_headline_of_a_claim_that_fails():
    parts = (SHORT, CLEAR)
    assert combine(parts)[0] == FAILS
    assert deciding(FAILS, parts) == (CLEAR,)  # the clearest failure: p = 0.002 against the claim
    assert headline(FAILS, parts, READ) == "n−1 = 16: gap −0.05 [−0.07, −0.03]"


def test_a_claim_that_holds_in_part_is_headed_by_one_part_of_each_side():
    parts = (WEAK, STRONG, SHORT, OPEN)
    assert combine(parts)[0] == PARTLY
    assert deciding(PARTLY, parts) == (STRONG, SHORT)
    assert headline(PARTLY, parts, READ) == (
        "holds for n−1 = 2: gap +0.40 [+0.31, +0.49]; fails for n−1 = 8: gap +0.001 [−0.002, +0.004]"
    )
    # no part fails: the undecided one stands beside the one that holds
    assert deciding(PARTLY, (WEAK, OPEN)) == (WEAK, OPEN)


def test_the_headline_of_a_judged_claim_is_its_failing_parts_number(tmp_path):
    # clipping that costs a fifth of the perplexity (tests/test_findings.py): clip_quality fails
    roles = clipping_folder(tmp_path, [p * 1.2 for p in UNCLIPPED])
    table, parts, _ = findings_tables(tmp_path, Roles(studies=roles.studies, worked=False))
    assert list(table.columns) == list(COLUMNS)
    row = table.set_index("id").loc["clip_quality"]
    assert row.verdict == FAILS
    failing = parts[(parts["id"] == "clip_quality") & (parts["verdict"] == FAILS)]
    assert len(failing) == 1
    number = failing["value"].iloc[0].split(" (margin")[0].replace("test_ppl", "test perplexity")
    assert row.headline.endswith(number.split(", ", 1)[1]) and "test perplexity" in row.headline
    assert "clip_threshold_ptb" not in row.headline and "clipping_ptb" not in row.headline
    assert row.title == "Clipping costs nothing in quality" and row.question == "clipping"


# --------------------------------------------------------------------------------------------------------------
# The answers read their words from the verdict, and a claim that holds in part from its parts

# window_blind's parts as planted: (label, verdict, value). Its verdict is what combine() makes of them.
HOLDING = ("window_agreement, n−1 = 4", HOLDS, "accuracy at distance 4 − at 5: +0.19 [+0.10, +0.28] (p = 0.04, Holm)")
FAILING = ("window_agreement, n−1 = 8", FAILS, "accuracy at distance 8 − at 9: −0.02 [−0.04, −0.01]")
UNDECIDED = ("window_agreement, n−1 = 16", INCONCLUSIVE, "accuracy at distance 16 − at 17: +0.1 [−0.3, +0.5]")
PART_SETS = {HOLDS: (HOLDING,), FAILS: (FAILING,), INCONCLUSIVE: (UNDECIDED,)}


CHECK = "lesson_gradient_reach"  # the lesson's printout recomputed: a check, not a test


def _planted_findings(root, verdict, parts=None, check=HOLDS):
    """tables/findings.csv with every claim undecided but window_blind, which has ``verdict`` (and ``parts``, by
    default one part of that verdict), and the lesson's check, which has ``check``; one arithmetic claim right and
    one wrong."""
    parts = PART_SETS.get(verdict, ()) if parts is None else parts
    rows, part_rows = [], []
    for c in CLAIMS:
        if c.id == CHECK:
            rows.append({**dict.fromkeys(COLUMNS, ""), "id": c.id, "seed": c.seed, "title": c.title,
                         "question": c.question, "quote": c.quote, "evidence": "tables/lesson_gradient_reach.csv",
                         "verdict": check, "headline": "nn.RNN(8, 32): T = 5: 1.0e-02, T = 50: 1.0e-05"})  # fmt: skip
            continue
        decided = c.id == "window_blind"
        rows.append(
            {
                **dict.fromkeys(COLUMNS, ""),
                "id": c.id,
                "seed": c.seed,
                "title": c.title,
                "question": c.question,
                "quote": c.quote,
                "evidence": "studies/window_agreement" if decided else "",
                "verdict": verdict if decided else INCONCLUSIVE,
                "headline": "n−1 = 4: gap +0.19 [+0.10, +0.28]" if decided else "",
            }
        )
        for label, part_verdict, value in parts if decided else ():
            part_rows.append({**dict.fromkeys(PART_COLUMNS, ""), "id": c.id, "part": label, "verdict": part_verdict,
                              "value": value})  # fmt: skip
    tables = root / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(tables / "findings.csv", index=False)
    pd.DataFrame(part_rows, columns=list(PART_COLUMNS)).to_csv(tables / "findings_parts.csv", index=False)
    arithmetic = pd.DataFrame(
        [
            {"seed": "chapter", "where": "A", "title": "Four is two squared", "claim": "2^2 = 4", "claimed": "4",
             "computed": "4", "matches": True, "note": ""},
            {"seed": "lesson001", "where": "B", "title": "Nine is two cubed", "claim": "2^3 = 9", "claimed": "9",
             "computed": "8", "matches": False, "note": "2 x 2 x 2"},
        ]
    )  # fmt: skip
    arithmetic.to_csv(tables / "seed_claims.csv", index=False)
    arithmetic[~arithmetic["matches"]].to_csv(tables / "seed_discrepancies.csv", index=False)


@pytest.mark.parametrize(
    ("verdict", "words"),
    [(HOLDS, "holds"), (FAILS, "fails"), (INCONCLUSIVE, "is inconclusive")],
)
def test_the_answers_say_what_the_verdict_says(tmp_path, verdict, words):
    _planted_findings(tmp_path, verdict)
    found = answers.Answers(tmp_path)
    assert found.says("window_blind") == f"*{words}*"
    assert found.said("window_blind") == f"*{words}* (n−1 = 4: gap +0.19 \\[+0.10, +0.28\\])"
    assert found.said("relu_dies") == "*is inconclusive*"  # no number: no empty brackets
    # the question's two claims counted by reading: the planted one, and the widening one left inconclusive
    counted = {HOLDS: "1 holds and 1 is inconclusive", FAILS: "1 fails and 1 is inconclusive"}
    assert found.question_tally("context") == counted.get(verdict, "2 are inconclusive")
    errata = answers.errata(tmp_path)
    assert "**Nine is two cubed:** “The vanilla RNN” says 9, the computation gives 8 — 2 x 2 x 2." in errata
    # a measured claim is an erratum exactly when its verdict is fails
    assert ("**A window cannot see past its width:**" in errata) == (verdict == FAILS)
    ledger = answers.ledger({"B": "sec-b"}, tmp_path).set_index("claim")
    assert ledger.loc["A window cannot see past its width", "verdict"] == answers.cell(verdict)
    assert ledger.loc["Nine is two cubed", "verdict"] == "fails"
    assert ledger.loc["Nine is two cubed", "number"] == "8; the source: 9"
    assert list(ledger.loc[["Nine is two cubed", "Four is two squared"], "see"]) == ["@sec-b", "–"]
    # the chapter's table: one row per claim, its columns as wide as LEDGER_WIDTHS says
    lines = answers.ledger_table({"B": "sec-b"}, tmp_path).splitlines()
    assert len(lines) == 2 + len(CLAIMS) + 2
    assert [len(cell) for cell in lines[1].strip("|").split("|")] == list(answers.LEDGER_WIDTHS.values())


@pytest.mark.parametrize(
    ("parts", "reading", "words", "cell"),
    [
        ((HOLDING, FAILING), answers.MIXED, "holds in part and fails in part", "mixed"),
        ((HOLDING, FAILING, UNDECIDED), answers.MIXED, "holds in part and fails in part", "mixed"),
        ((HOLDING, UNDECIDED), answers.PARTLY_DECIDED, "holds in part, the rest undecided", "partly decided"),
        ((FAILING, UNDECIDED), answers.PARTLY_REFUTED, "fails in part, the rest undecided", "partly refuted"),
    ],
)
def test_a_claim_that_holds_in_part_is_read_from_its_parts(tmp_path, parts, reading, words, cell):
    assert combine([_part(label, v, value) for label, v, value in parts])[0] == PARTLY  # as the registry decides
    _planted_findings(tmp_path, PARTLY, parts)
    found = answers.Answers(tmp_path)
    assert found.reading("window_blind") == reading
    assert found.says("window_blind") == f"*{words}*"
    assert answers.ledger({}, tmp_path).set_index("claim").loc["A window cannot see past its width", "verdict"] == cell
    assert found.tally(["window_blind", "relu_dies"]) == f"1 is {cell} and 1 is inconclusive"
    # an erratum exactly where a part fails: that part's setting and number, without the study's name
    errata = answers.errata_items(tmp_path)["refuted in part"]
    if FAILING in parts:
        assert errata == [
            "- **A window cannot see past its width:** the chapter says so, and the measurements refute it for "
            "n−1 = 8: accuracy at distance 8 − at 9: −0.02 \\[−0.04, −0.01\\] (@sec-claim-window-blind)."
        ]
    else:
        assert errata == []


def test_the_lessons_check_is_counted_once_with_the_arithmetic_checks_not_in_the_tally_of_measured_verdicts(
    tmp_path,
):
    # every claim inconclusive but window_blind, which fails, and the lesson's check, which holds: the tally of
    # measured verdicts has no "holds" (the check is not among them), and the checks count it beside the arithmetic
    _planted_findings(tmp_path, FAILS)
    found = answers.Answers(tmp_path)
    assert CHECK not in set(found.measured["id"]) and list(found.checks["id"]) == [CHECK]
    assert len(found.measured) == len(CLAIMS) - 1
    assert found.tally() == f"1 fails and {len(CLAIMS) - 2} are inconclusive"
    assert "hold" not in found.tally()
    # the checks: "Four is two squared" right, "Nine is two cubed" wrong, and the lesson's check, which holds
    assert answers.checked(tmp_path) == (3, 2)
    # the ledger lists it once, after the arithmetic checks, marked as a check
    ledger = answers.ledger({}, tmp_path)
    assert (
        len(ledger) == len(CLAIMS) + 2 and list(ledger["claim"]).count("The lesson's network forgets early words") == 1
    )
    last = ledger.iloc[-1]
    assert (last["claim"], last["verdict"], last["see"]) == (
        "The lesson's network forgets early words",
        "holds (a check)",
        "@sec-claim-lesson-gradient-reach",
    )
    assert list(ledger["claim"])[-3:-1] == ["Four is two squared", "Nine is two cubed"]
    # a check is the ledger's: the question's tally counts its measured claims only
    assert found.question_tally("gradients") == "5 are inconclusive"  # the check holds, and is not among them
    # a check that fails is an erratum of the checks, not a claim the measurements refute
    _planted_findings(tmp_path / "wrong", HOLDS, check=FAILS)
    errata = answers.errata_items(tmp_path / "wrong")
    assert answers.checked(tmp_path / "wrong") == (3, 1)
    assert any("**The lesson's network forgets early words:**" in item for item in errata["arithmetic"])
    assert not any("forgets early words" in item for item in errata["refuted"])
    assert answers.Answers(tmp_path / "wrong").tally() == f"1 holds and {len(CLAIMS) - 2} are inconclusive"


def test_a_chapter_with_only_the_verdict_still_has_its_words():
    # a chapter that reads only findings.csv's verdict says "holds in part"; the readings are words of their own
    assert answers.says(PARTLY) == "holds in part"
    assert {answers.cell(r) for r in answers.READINGS} == {"mixed", "partly decided", "partly refuted"}
    assert answers.reading(HOLDS, [FAILS]) == HOLDS  # only a claim that holds in part is read from its parts
    assert answers.reading(PARTLY, [BY_CONSTRUCTION, INCONCLUSIVE]) == answers.PARTLY_DECIDED


def _planted_passage(root, distance):
    """One passage analysis: the evidence word "partner" ``distance`` tokens back, at two snapshots."""
    rows = [{"run_id": "r", "family": "rnn", "hidden": 8, "seed": 1, "snapshot": snap, "position": 7,
             "word": "partner", "token": "partner", "distance": distance, "h_norm": 1e-5, "h_relative": 1e-5,
             "x_norm": 1e-5, "x_relative": 1e-5, "evidence": True} for snap in ("0", "final")]  # fmt: skip
    write_analysis(root, "decay_passage", {"kind": "passage", "network": "trained"}, {"passage": rows})


@pytest.mark.parametrize(("distance", "listed"), [(39, True), (PASSAGE_WORDS, False)])
def test_the_passage_is_an_erratum_where_its_measured_distance_is_not_the_chapters(tmp_path, distance, listed):
    _planted_findings(tmp_path, HOLDS)
    _planted_passage(tmp_path, distance)
    assert answers.passage_distance(tmp_path) == distance
    items = answers.errata_items(tmp_path)["passage"]
    assert bool(items) == listed
    if listed:
        assert "“partner” 47 words back" in items[0] and "39 tokens back" in items[0]


def test_without_a_passage_analysis_no_distance_is_claimed(tmp_path):
    _planted_findings(tmp_path, HOLDS)
    assert answers.passage_distance(tmp_path) is None
    assert answers.errata_items(tmp_path)["passage"] == []


@pytest.mark.parametrize(("metric", "best"), [("valid_ppl", ("tanh", "default", 100.0)),
                                              ("agreement_accuracy", ("relu", "identity", 300.0))])  # fmt: skip
def test_the_best_activation_is_the_best_mean_of_the_runs_that_learned(metric, best):
    runs = pd.DataFrame(
        [
            {"study": "s", "activation": "tanh", "start": "default", "outcome": "learned", "value": v, "metric": metric}
            for v in (90.0, 110.0)
        ]
        + [{"study": "s", "activation": "relu", "start": "identity", "outcome": "learned", "value": 300.0,
            "metric": metric},
           {"study": "s", "activation": "relu", "start": "default", "outcome": "diverged", "value": 1.0,
            "metric": metric}]
    )  # fmt: skip
    assert answers.best_activation(runs, "s") == best  # the diverged run's value is never a mean
    assert answers.best_activation(runs, "other") is None


def test_every_verdict_has_words_and_a_count_agrees_in_number():
    assert {v: bool(answers.says(v)) for v in VERDICTS} == dict.fromkeys(VERDICTS, True)
    assert set(answers.ORDER) == set(answers.SAYS) == set(answers.CELLS) == set(answers.COUNTED)  # none left out
    assert answers.tally([HOLDS, HOLDS, FAILS, INCONCLUSIVE]) == "2 hold, 1 fails and 1 is inconclusive"
    assert answers.tally([answers.MIXED, answers.MIXED, HOLDS]) == "1 holds and 2 are mixed"
    with pytest.raises(ValueError, match="verdict 'maybe'"):
        answers.says("maybe")


def test_the_appendix_label_of_a_claim_is_its_slug():
    assert answers.claim_label("clip_direction") == "sec-claim-clip-direction"
