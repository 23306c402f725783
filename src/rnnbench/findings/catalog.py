"""Every empirical claim of the seeds that the studies and analyses can measure, in the chapter's order, then
the lessons'. Each quote is the seed's own words (tests/test_findings.py finds each one in its seed file).
"""

from __future__ import annotations

from rnnbench.findings import activation, clipping, decay, truncation, window
from rnnbench.findings.evidence import Evidence
from rnnbench.findings.registry import (
    CHAPTER,
    FAILS,
    HOLDS,
    LESSON_001,
    LESSON_003,
    LEVEL,
    Claim,
    Judged,
    Need,
    Part,
    num,
)
from rnnbench.results.ablations import SPEED_WINDOW


def _study(role: str) -> Need:
    return Need("study", role)


def _analysis(role: str) -> Need:
    return Need("analysis", role)


PCT = f"{LEVEL:.0%}"  # the rules' interval, as they print it
LESSON_REACH = "lesson_gradient_reach"  # a worked table (rnnbench.worked), built whenever tables.worked is on


def lesson_reach(ev: Evidence) -> Judged:
    """The lesson's own demonstration, run as it prints it: one untrained nn.RNN (seed 0), no seeds to spread."""
    if not ev.roles.worked:
        return Judged((), (), "tables.worked is false in this config: the lessons' worked tables are not built")
    reach = ev.table(LESSON_REACH).sort_values("length")
    values = reach["grad_token1_mean_abs"].to_numpy(dtype=float)
    falls = bool((values[1:] < values[:-1]).all())
    shown = ", ".join(f"T = {int(t)}: {v:.1e}" for t, v in zip(reach["length"], values, strict=True))
    rises = [int(t) for t, a, b in zip(reach["length"].iloc[1:], values[:-1], values[1:], strict=True) if not b < a]
    note = "" if falls else "does not fall at T = " + ", ".join(map(str, rises))
    ratio = f"; {num(values[0] / values[-1])}× smaller from T = {int(reach['length'].iloc[0])} to {int(reach['length'].iloc[-1])}"
    return Judged(
        (f"tables/{LESSON_REACH}.csv",), (Part("nn.RNN(8, 32)", HOLDS if falls else FAILS, shown + ratio, note),)
    )


CLAIMS: tuple[Claim, ...] = (
    Claim(
        "window_blind",
        CHAPTER,
        "So the model reads a sentence through a slot of fixed width. Everything outside falls away, exactly as it did for the counter.",
        (_study("window"),),
        "per window width n−1: agreement accuracy at head-verb distance n−1 minus at n, one value per seed",
        f"holds if every window's accuracy falls measurably from distance n−1 to n ({PCT} t-interval over seeds above 0)",
        window.blind,
    ),
    Claim(
        "recurrence_no_cliff",
        CHAPTER,
        "So the state at step $t$ depends on every word read so far. There is no window and no cliff.",
        (_study("recurrence"),),
        "per recurrence size: the drop in agreement accuracy between adjacent head-verb distances, one value per seed",
        f"holds if no adjacent drop is measurably above 0 ({PCT} t-intervals over seeds, Bonferroni over the pairs)",
        window.no_cliff,
    ),
    Claim(
        "widening_not_fix",
        CHAPTER,
        "Widening the window is not a fix. The hidden matrix $W_h$ has shape $(n-1)d \\times H$, so its size grows with every word you admit.",
        (_study("window_width"),),
        "parameters each added word of context adds; the study's metric, widest minus next-widest window, seed means",
        f"holds if every added word adds parameters and the widest window is not measurably better than the next (Welch {PCT} interval)",
        window.widening,
    ),
    Claim(
        "gradient_geometric",
        CHAPTER,
        "Gradients decay geometrically with distance.",
        (_analysis("trained_decay"),),
        "per trained run, final weights: least-squares fit of log ‖∂L/∂h‖ against distance, its slope and R²",
        f"holds if every fit has R² ≥ 0.9 and a slope measurably below 0 ({PCT} interval of the fit)",
        decay.geometric,
    ),
    Claim(
        "vanish_below_one",
        CHAPTER,
        "If every eigenvalue of $U$ satisfies $|\\lambda| < 1$, the product shrinks towards zero. Gradients vanish.",
        (_analysis("radius"),),
        "per untrained tanh network with ρ(U) < 1: the rate of ‖∂L/∂h‖, log of its per-step factor",
        f"holds if every such rate is measurably below 0 ({PCT} interval over seeds, or of the fit for one seed)",
        decay.vanish,
    ),
    Claim(
        "explode_above_one",
        CHAPTER,
        "If any eigenvalue satisfies $|\\lambda| > 1$, the product grows without bound. Gradients explode.",
        (_analysis("radius"),),
        "per untrained tanh network with ρ(U) > 1: the rate of ‖∂L/∂h‖, log of its per-step factor",
        f"holds if every such rate is measurably above 0 ({PCT} interval over seeds, or of the fit for one seed)",
        decay.explode,
    ),
    Claim(
        "lambda_not_held",
        CHAPTER,
        "Only $|\\lambda| = 1$ survives, and nothing in training holds it there.",
        (_analysis("trained_decay"),),
        "per trained setting, final weights: the rate of ‖∂L/∂h‖ (0 is |λ| = 1); ρ(U) at initialisation and at the end",
        f"holds if every trained setting's rate is measurably away from 0 ({PCT} interval over seeds, or of the fit for one seed)",
        decay.not_held,
    ),
    Claim(
        "forward_carries",
        CHAPTER,
        "So the network cannot be trained to use information from far back, even though it is perfectly capable of carrying it.",
        (_analysis("trained_decay"),),
        "per trained setting, final weights: the rate of the forward move of h per unit move of x_1 (exact JVP) minus the rate of ‖∂L/∂h‖, network by network",
        f"holds if the forward move fades measurably more slowly than the backward gradient ({PCT} t-interval over seeds)",
        decay.forward_carries,
    ),
    Claim(
        "sigmoid_quarter",
        CHAPTER,
        "A derivative capped at $0.25$ shrinks the gradient by at least a factor of four at every step.",
        (_analysis("activation"),),
        "per untrained sigmoid network: the measured per-step factor exp(rate) of ‖∂L/∂h‖",
        f"holds if no sigmoid network's per-step factor is measurably above 1/4 ({PCT} interval)",
        decay.sigmoid_quarter,
    ),
    Claim(
        "zero_centred_faster",
        CHAPTER,
        "States that average to zero train faster than states that average to $0.5$.",
        (_study("activation_training"),),
        f"per study: validation perplexity (or the study's metric) after the same training tokens, and the optimiser steps until the training loss's running mean over {SPEED_WINDOW} steps first reaches the highest level every learned run reaches; sigmoid minus tanh, seed means of learned runs",
        f"holds if the sigmoid network is measurably worse than the tanh network after equal training, and takes measurably more steps to that loss (Welch {PCT} interval each)",
        activation.zero_centred,
    ),
    Claim(
        "relu_dies",
        CHAPTER,
        "ReLU has its own failure: a unit whose input is always negative stops passing any gradient at all and never recovers.",
        (_study("activation_training"),),
        "per trained ReLU network: the share of hidden units whose derivative is zero at every step of the validation split, seeds of learned runs",
        f"holds if that share is measurably above 0 ({PCT} t-interval over seeds)",
        activation.relu_dies,
    ),
    Claim(
        "relu_no_ceiling",
        LESSON_001,
        "That rules out ReLU first, because it has no ceiling on the positive side.",
        (_study("activation_training"),),
        "per study: the ReLU runs that diverged, beside the tanh runs of the same recipe that did",
        "holds if every ReLU run diverged and no tanh run did",
        activation.relu_unbounded,
    ),
    Claim(
        "clip_direction",
        CHAPTER,
        "Clipping changes how far the step goes and never which way it points",
        (_study("clipping"),),
        "per corpus: the smallest mean cosine between clipped and unclipped update over learned norm-clipped runs that clipped a step",
        f"holds if that cosine is 1 (within {clipping.COSINE_TOLERANCE:g}) on every corpus",
        clipping.direction,
    ),
    Claim(
        "clip_divergence",
        CHAPTER,
        "Exploding gradients have a one line remedy.",
        (_study("clipping"),),
        "per corpus, rate and threshold where an unclipped run diverged: how many norm-clipped runs diverged, of their seeds",
        "holds if at every rate where an unclipped run diverged, no norm-clipped run diverged (every run counts, learned or not)",
        clipping.divergence,
    ),
    Claim(
        "clip_quality",
        CHAPTER,
        "which is why it costs nothing in quality.",
        (_study("clipping"),),
        "per corpus, rate where no unclipped run diverged, and threshold: the study's metric, clipped minus unclipped, seed means of learned runs (relative to unclipped)",
        f"holds if no threshold that clipped a step is measurably worse than no clipping (Welch {PCT} interval of the difference)",
        clipping.quality,
    ),
    Claim(
        "clip_vanishing",
        CHAPTER,
        "It does nothing whatever for vanishing gradients.",
        (_analysis("clipping_decay"),),
        "the rate of ‖∂L/∂h‖ in learned runs of a clipping study, clipped minus unclipped at the same learning rate",
        f"holds if no clipped setting's gradient decays measurably more slowly than the unclipped runs' (Welch {PCT} interval)",
        clipping.vanishing,
    ),
    Claim(
        "truncation_invisible",
        CHAPTER,
        "Any dependency spanning a segment boundary is invisible to training.",
        (_study("truncation_reach"),),
        "per truncation length k: agreement accuracy on head-verb distances beyond k, full-sentence BPTT minus k-truncated, seed means",
        f"holds if for every k full-sentence BPTT is measurably more accurate beyond k (Welch {PCT} interval above 0)",
        truncation.invisible,
    ),
    Claim(
        "sentence_cuts_reduce",
        CHAPTER,
        "Choosing the boundaries at sentence ends reduces the damage without removing it.",
        (_study("truncation_reach"), _study("truncation_sentence")),
        "per truncation length k trained both ways: agreement accuracy on head-verb distances beyond k, sentence-aligned cuts minus stream segments, and full-sentence BPTT minus sentence-aligned cuts, seed means",
        f"holds if at every such k the sentence cuts are measurably more accurate than stream segments and measurably less than full-sentence BPTT (Welch {PCT} intervals)",
        truncation.sentence_cuts,
    ),
    Claim(
        "truncation_cost",
        CHAPTER,
        "Unrolling a sequence of thousands of steps is expensive in memory and slow.",
        (_study("truncation_cost"),),
        "longest against shortest truncation: training tokens per second and the training job's peak memory, seed means",
        f"holds if the longest unrolling is measurably slower and measurably larger in peak memory (Welch {PCT} intervals)",
        truncation.cost,
    ),
    Claim(
        "recurrence_beats_window",
        LESSON_001,
        "What follows is the fix, and it comes with a property nobody expects from a fix: the network that applies it is smaller than the one that fails.",
        (_study("matched_window"), _study("matched_recurrence")),
        "per corpus, each window paired with the recurrence of the nearest parameter count (within 1.25×): the study metric, recurrence minus window, seed means",
        f"holds if at every matched pair the recurrence is measurably better (Welch {PCT} interval)",
        window.beats,
    ),
    Claim(
        "lesson_gradient_reach",
        LESSON_003,
        "Gradients vanish over long sequences, so plain RNNs forget early words.",
        (),
        "the lesson's own measurement: mean |∂y_T/∂x_1| of its untrained nn.RNN at each length T",
        "holds if it is smaller at every longer T",
        lesson_reach,
    ),
)

# role -> the claims that read it: what a study or an analysis of that role is evidence for.
ROLES: dict[str, tuple[str, ...]] = {}
for _claim in CLAIMS:
    for _need in _claim.needs:
        ROLES[_need.role] = (*ROLES.get(_need.role, ()), _claim.id)

__all__ = ["CLAIMS", "ROLES"]
