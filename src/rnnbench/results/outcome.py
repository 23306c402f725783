"""How a run ended, decided once: it learned, it did not learn, or it diverged.

    diverged        rnnbench.training.divergence ended it (a non-finite loss or norm, a norm over divergence_norm, a loss
                    far above the uniform model's): no perplexity at all
    did not learn   it finished, but learned no more than counting does:
                      a language model whose test perplexity is not clearly below its corpus's unigram model's,
                      above LEARNED_FRACTION times it (the unigram model knows word frequencies and nothing else);
                      an agreement model whose accuracy is within noise of chance, fewer than CHANCE_Z binomial
                      standard errors sqrt(1/4 / n) above 1/2 over its n probes
    learned         the rest

A run that blew up and ended far above the unigram perplexity without tripping the divergence rules (a loss
that rose, then settled high) is "did not learn": a failure, never a result. Where blowing up is what a claim is
about (clipping), blew_up counts it with the runs that diverged. No ranking and no claim rests
on a run that is not "learned"; the book counts them.

Over seeds, a setting's runs are counted once (seed_counts): every mean or spread over seeds is taken over
the seeds that learned, and the table beside it says how many learned, how many failed, and how many of
those diverged. A setting none of whose seeds learned has no mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

OUTCOMES = ("learned", "did not learn", "diverged")
DIVERGED = OUTCOMES[2]
# A summary's outcome where the run could not be judged (no baseline): never counted as learned.
UNKNOWN = "unknown"
# A study summary's row, beside each run's own metrics, saying whether its training blew up (blew_up): 1 or 0.
BLEW_UP = "blew_up"
# The columns seed_counts gives, in the order a table lists them.
COUNT_COLUMNS = ("runs", "seeds_learned", "seeds_failed", "diverged_runs")

# "Clearly below": a quarter off the unigram perplexity. A count-based 5-gram is several times below the unigram
# model on real text (tables/baselines.csv), so a network within a quarter of it has used almost none of the
# context it reads: its rankings would be rankings of word-frequency models.
LEARNED_FRACTION = 0.75
# Three standard errors: a model at chance passes it once in 740 tries (one-sided normal tail).
CHANCE_Z = 3.0


def chance_threshold(n_probes: int) -> float:
    """The accuracy an agreement model must exceed over ``n_probes`` probes: 1/2 + CHANCE_Z sqrt(1/4 / n)."""
    return 0.5 + CHANCE_Z * math.sqrt(0.25 / n_probes)


def outcome(
    metrics: Mapping[str, Any],
    *,
    unigram_ppl: float | None = None,
    agreement_probes: int | None = None,
) -> str:
    """One of OUTCOMES for a finished run's metrics.json. An agreement run (it has ``agreement_accuracy``) is
    judged on accuracy over its ``agreement_probes``; any other on test perplexity against ``unigram_ppl``.
    Without the baseline a run cannot be judged: ValueError, not a guess."""
    if metrics.get("diverged"):
        return "diverged"
    accuracy = metrics.get("agreement_accuracy")
    if accuracy is not None:
        if not agreement_probes:
            raise ValueError("an agreement run is judged over its probes: give agreement_probes")
        return "learned" if accuracy > chance_threshold(agreement_probes) else "did not learn"
    test_ppl = metrics.get("test_ppl")
    if unigram_ppl is None or not math.isfinite(unigram_ppl):
        raise ValueError("a language model is judged against its corpus's unigram perplexity: give unigram_ppl")
    if test_ppl is None or not math.isfinite(test_ppl):
        return "did not learn"
    return "learned" if test_ppl < LEARNED_FRACTION * unigram_ppl else "did not learn"


def blew_up(metrics: Mapping[str, Any], *, unigram_ppl: float | None = None) -> bool:
    """Whether a finished run's training blew up: it diverged, or a language model ended with a test perplexity
    above its corpus's unigram model's, worse than a model that knows word frequencies alone (a loss that rose and
    settled high, which the divergence rules did not stop). A run that only learned slowly ends between the
    unigram's perplexity and the learned line, not above it. An agreement run blows up only by diverging.
    Without the baseline a language model cannot be judged: ValueError."""
    if metrics.get("diverged"):
        return True
    if metrics.get("agreement_accuracy") is not None:
        return False
    if unigram_ppl is None or not math.isfinite(unigram_ppl):
        raise ValueError("a language model is judged against its corpus's unigram perplexity: give unigram_ppl")
    test_ppl = metrics.get("test_ppl")
    return test_ppl is None or not math.isfinite(test_ppl) or test_ppl > unigram_ppl


def learned(outcomes: Iterable[str]) -> list[bool]:
    """Which runs learned, one flag per outcome: "did not learn", "diverged" and "unknown" are failures."""
    return [state == "learned" for state in outcomes]


def seed_counts(outcomes: Iterable[str]) -> dict[str, int]:
    """The outcomes of one setting's seeds, counted: runs, seeds_learned, seeds_failed (every run that did not
    learn, diverged or could not be judged) and diverged_runs (those of the failed that diverged)."""
    states = list(outcomes)
    unknown = sorted({s for s in states if s not in (*OUTCOMES, UNKNOWN)})
    if unknown:
        raise ValueError(f"outcome {unknown[0]!r} is not one of {', '.join((*OUTCOMES, UNKNOWN))}")
    n_learned = sum(learned(states))
    return {
        "runs": len(states),
        "seeds_learned": n_learned,
        "seeds_failed": len(states) - n_learned,
        "diverged_runs": sum(s == "diverged" for s in states),
    }


def require_outcome(summary: Any, what: str = "the study's summary") -> None:
    """A table that aggregates over seeds must know each run's outcome: without the column it cannot leave
    the failed runs out, so it stops instead of averaging them in."""
    if "outcome" not in summary.columns:
        raise ValueError(
            f"{what} has no 'outcome' column (columns: {', '.join(map(str, summary.columns))}): rebuild it with "
            "rule study_summary, which judges every run (rnnbench.results.outcome)"
        )
