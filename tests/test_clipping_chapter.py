"""The clipping chapter (reports/clipping.qmd) run on the book's test fixture (tests/test_report.py): its numbers are
the fixture's, its figure is placed, and each claim's words follow the verdict planted in the findings."""

from __future__ import annotations

import bookcheck
import pandas as pd
import pytest

from rnnbench.book import answers, clipping_chapter
from rnnbench.book import findings as book_findings
from rnnbench.book import results as res
from rnnbench.findings.policy import VERDICTS


def _chapter(fixture, monkeypatch, verdicts: dict[str, str] | None = None) -> str:
    monkeypatch.setenv(res.RESULTS_ENV, str(fixture.results))
    if verdicts:
        judged = clipping_chapter.findings

        def planted(results=None) -> pd.DataFrame:
            table = judged(results)
            for claim, verdict in verdicts.items():
                table.loc[table["id"] == claim, "verdict"] = verdict
            return table

        monkeypatch.setattr(clipping_chapter, "findings", planted)
    return bookcheck.run_chapter(fixture.book / "clipping.qmd", cwd=fixture.book).markdown()


def test_the_chapter_states_the_fixture_design_and_places_its_figure(fixture, monkeypatch):
    text = _chapter(fixture, monkeypatch)
    # smoke.yaml's clipping_ptb: 0.5, 5 and .inf times the reference's median norm, 0.4 in the fixture, at rates
    # 0.5 and 5, two seeds each
    assert "the thresholds are 0.5 and 5 times that median: 0.2 and 2." in text
    assert (
        "Each is crossed with the rates 0.5 and 5 beside unclipped runs at the same rates, with 2 seeds per setting"
        in text
    )
    # no unclipped fixture run diverges (the one diverged run is another study's), so no regime has a divergence
    assert "Without clipping, the runs that blew up were 0 of 2 at rate 0.5 and 0 of 2 at rate 5." in text
    assert "set to clip rare spikes, blew up in no run (no setting was in that regime there)" in text
    # every fixture run clips a quarter of its steps whatever its threshold: 5 x median stays in the rare-spike regime
    # it was set in, flagged at both rates; 0.5 x median clips ordinary steps, as set (run i learned at 20 - 0.5 i,
    # run 1 did not learn)
    named = (
        "contradicts the regime it was set in is named here with that share: 5 × median at rate 0.5, 25% of the steps"
    )
    assert f"{named} (rare spikes); 5 × median" in text
    # Adam's update is measured where Adam clips: 0.5 x and 2 x median in clipping_adam_ptb, 0.5 x in the agreement
    # study; the fixture's 2 x run is one that did not learn, so only the ordinary-step settings have a mean cosine
    assert "their settings clipped 25% of the steps (ordinary steps)" in text
    assert "](_staged/clipping){#fig-clipping-outcomes}" in text
    assert (fixture.book / "_staged" / "clipping.pdf").is_file()
    # Fisher's exact test on two runs a side, all against none: 1 / C(4, 2) = 1/6
    assert "With 2 seeds a side, the smallest one-sided p it can give" in text and "is 0.17 before" in text


@pytest.mark.parametrize("verdict", VERDICTS)
def test_each_claim_is_worded_by_its_planted_verdict(fixture, monkeypatch, verdict):
    others = [v for v in VERDICTS if v != verdict]
    planted = {"clip_divergence": verdict, "clip_quality": others[0], "clip_direction": verdict}
    planted["clip_vanishing"] = others[1]
    text = _chapter(fixture, monkeypatch, planted)

    def said(claim: str) -> str:
        """A claim that holds in part is said by its reading with the fixture's parts (mixed, partly decided...)."""
        found = book_findings.parts(claim, fixture.results)["verdict"]
        return str(answers.says(answers.reading(planted[claim], found)))

    divergence, quality = said("clip_divergence"), said("clip_quality")
    assert f"The chapter's claim that clipping is a remedy for divergence {divergence}." in text
    assert f"over every clipping study it {quality}." in text
    assert f"never changes which way the step points {said('clip_direction')} (@sec-clipping-update)" in text
    assert f"The claim {said('clip_vanishing')}." in text
    takeaway = (
        f"the chapter's claim that clipping is a remedy for divergence {divergence} on these runs, and the claim "
        f"that it costs nothing in quality {quality};"
    )
    assert takeaway in text
