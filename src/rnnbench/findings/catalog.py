"""Every empirical claim of the seeds that the studies and analyses can measure, in the chapter's order, then
the lessons'. Each quote is the seed's own words (tests/test_findings.py finds each one in its seed file).
"""

from __future__ import annotations

from rnnbench.findings import activation, carrying, clipping, decay, truncation, window
from rnnbench.findings.evidence import Evidence
from rnnbench.findings.policy import LEVEL, MARGINS
from rnnbench.findings.registry import CHAPTER, FAILS, HOLDS, LESSON_001, LESSON_003, Claim, Judged, Need, Part
from rnnbench.numbers import significant
from rnnbench.results.ablations import SPEED_WINDOW
from rnnbench.results.matching import TOLERANCE


def _study(role: str) -> Need:
    return Need("study", role)


def _analysis(role: str) -> Need:
    return Need("analysis", role)


PCT = f"{LEVEL:.0%}"  # the rules' level, as they print it
HOLM = f"at {PCT}, Holm-corrected over the claim's tests"


def _margin(quantity: str) -> str:
    return f"margin {MARGINS[quantity]}"


LESSON_REACH = "lesson_gradient_reach"  # a worked table (rnnbench.worked), built whenever tables.worked is on


def lesson_reach(ev: Evidence) -> Judged:
    """The lesson's own demonstration, run as it prints it: one untrained nn.RNN (seed 0), no seeds to spread: a
    check of what the lesson prints, not a test of RNNs in general (the radius analyses are that)."""
    if not ev.roles.worked:
        return Judged((), (), "tables.worked is false in this config: the lessons' worked tables are not built")
    reach = ev.table(LESSON_REACH).sort_values("length")
    values = reach["grad_token1_mean_abs"].to_numpy(dtype=float)
    falls = bool((values[1:] < values[:-1]).all())
    shown = ", ".join(f"T = {int(t)}: {v:.1e}" for t, v in zip(reach["length"], values, strict=True))
    rises = [int(t) for t, a, b in zip(reach["length"].iloc[1:], values[:-1], values[1:], strict=True) if not b < a]
    note = "" if falls else "does not fall at T = " + ", ".join(map(str, rises))
    ratio = f"; {significant(values[0] / values[-1])}× smaller from T = {int(reach['length'].iloc[0])} to {int(reach['length'].iloc[-1])}"
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
        f"holds if every window's accuracy falls measurably from distance n−1 to n (one-sided t over seeds, {HOLM}); fails where the fall is measurably short of the accuracy {_margin('accuracy')}",
        window.blind,
        title="A window cannot see past its width",
        question="context",
    ),
    Claim(
        "recurrence_no_cliff",
        CHAPTER,
        "So the state at step $t$ depends on every word read so far. There is no window and no cliff.",
        (_study("recurrence"),),
        "per recurrence size: the drop in agreement accuracy between adjacent head-verb distances, one value per seed",
        f"holds if every adjacent drop is measurably below the accuracy {_margin('accuracy')} (one-sided equivalence test over seeds, {HOLM}, every pair of every size); fails where a drop is measurably above 0",
        window.no_cliff,
        title="A recurrence has no cliff at any distance",
        question="matched",
    ),
    Claim(
        "widening_not_fix",
        CHAPTER,
        "Widening the window is not a fix. The hidden matrix $W_h$ has shape $(n-1)d \\times H$, so its size grows with every word you admit.",
        (_study("window_width"),),
        "parameters each added word of context adds (true by construction); the study's metric, widest minus next-widest window, seed means",
        f"holds if the widest window is better than the next by less than the metric's margin (one-sided equivalence test, Welch, {HOLM}); fails where it is measurably better",
        window.widening,
        title="Widening the window is no fix",
        question="context",
    ),
    Claim(
        "gradient_geometric",
        CHAPTER,
        "Gradients decay geometrically with distance.",
        (_analysis("trained_decay"),),
        "per trained setting, final weights: the rate (slope of log ‖∂L/∂h‖ against distance) over seeds, and each network's R²",
        f"holds if every network's log-norm is a straight line (R² ≥ {decay.GEOMETRIC_R2}) and each setting's rate is measurably below 0 (t over seeds, {HOLM}); fails where the rate is measurably short of the rate {_margin('decay rate')}",
        decay.geometric,
        title="Gradients decay geometrically with distance",
        question="gradients",
    ),
    Claim(
        "vanish_below_one",
        CHAPTER,
        "If every eigenvalue of $U$ satisfies $|\\lambda| < 1$, the product shrinks towards zero. Gradients vanish.",
        (_analysis("radius"),),
        "per untrained tanh setting with ρ(U) < 1: the rate of ‖∂L/∂h‖ (log of its per-step factor), over seeds",
        f"holds if every such rate is measurably below 0 (t over seeds, {HOLM}); fails where it is measurably above −{MARGINS['decay rate'].size:g}",
        decay.vanish,
        title="Below an eigenvalue of one, gradients vanish",
        question="gradients",
    ),
    Claim(
        "explode_above_one",
        CHAPTER,
        "If any eigenvalue satisfies $|\\lambda| > 1$, the product grows without bound. Gradients explode.",
        (_analysis("radius"),),
        "per tanh setting with ρ(U) > 1, untrained (U rescaled) and trained (final weights): the rate of ‖∂L/∂h‖, over seeds",
        f"holds if every such rate is measurably above 0 (t over seeds, {HOLM}); fails where it is measurably below +{MARGINS['decay rate'].size:g}",
        decay.explode,
        title="Above an eigenvalue of one, gradients explode",
        question="gradients",
    ),
    Claim(
        "lambda_not_held",
        CHAPTER,
        "Only $|\\lambda| = 1$ survives, and nothing in training holds it there.",
        (_analysis("trained_decay"),),
        "per trained setting, final weights: the rate of ‖∂L/∂h‖ (0 is |λ| = 1); ρ(U) at initialisation and at the end",
        f"holds if every trained setting's rate is measurably away from 0 (two-sided t over seeds, {HOLM}); fails where it is measurably within the rate {_margin('decay rate')} of 0 (two one-sided tests)",
        decay.not_held,
        title="Nothing in training holds the eigenvalue at one",
        question="gradients",
    ),
    Claim(
        "forward_carries",
        CHAPTER,
        "So the network cannot be trained to use information from far back, even though it is perfectly capable of carrying it.",
        (_analysis(carrying.ROLE),),
        f"the carrying half only: per network trained with full backpropagation through time that learned, final weights: a linear probe's held-out accuracy reading the head noun's number from the state, on sentences whose nearest noun has the other number, at the farthest distance where the gradient crossing it has fallen {carrying.FALL:g}-fold or more, minus chance; the same probe on shuffled labels as control; over seeds. That training cannot use it is not measured: these networks learned the dependency",
        f'holds if the state carries the head\'s number there: that accuracy measurably above chance and the shuffled control measurably no more than the accuracy {_margin("accuracy")} above chance (one-sided: a label-blind probe may score below chance, never above it; t over seeds, {HOLM}); fails where the accuracy is measurably within the margin of chance, or the control measurably above it; the half "cannot be trained" is a part not shown',
        carrying.forward_carries,
        title="The state carries the head's number where the gradient has faded",
        question="gradients",
    ),
    Claim(
        "sigmoid_quarter",
        CHAPTER,
        "A derivative capped at $0.25$ shrinks the gradient by at least a factor of four at every step.",
        (_analysis("activation"),),
        "per untrained sigmoid setting: the per-step factor exp(rate) of ‖∂L/∂h‖, over seeds",
        f"holds if each setting's rate is measurably below log(1/4) + {MARGINS['decay rate'].size:g} (one-sided equivalence test, {HOLM}); fails where it is measurably above log(1/4)",
        decay.sigmoid_quarter,
        title="The sigmoid shrinks the gradient fourfold a step",
        question="activation",
    ),
    Claim(
        "zero_centred_faster",
        CHAPTER,
        "States that average to zero train faster than states that average to $0.5$.",
        (_study("activation_training"),),
        f"per study: validation perplexity (or the study's metric) after the same training tokens, and the optimiser steps until the training loss's running mean over {SPEED_WINDOW} steps first reaches the highest level every learned run reaches; sigmoid minus tanh, seed means of learned runs",
        f"holds if the sigmoid network is measurably worse than the tanh network after equal training, and takes measurably more steps to that loss (one-sided Welch, {HOLM}); fails where either is measurably short of its margin ({MARGINS['perplexity']} of perplexity, {MARGINS['optimiser steps']} of steps)",
        activation.zero_centred,
        title="Zero-centred states train faster",
        question="activation",
    ),
    Claim(
        "relu_dies",
        CHAPTER,
        "ReLU has its own failure: a unit whose input is always negative stops passing any gradient at all and never recovers.",
        (_study("activation_training"),),
        "per trained ReLU network: the share of hidden units whose derivative is zero at every step of the validation split, seeds of learned runs",
        f"holds if that share is measurably above 0 (one-sided t over seeds, {HOLM}); fails where it is measurably below {MARGINS['share of units'].size:g}",
        activation.relu_dies,
        title="ReLU units die and never recover",
        question="activation",
    ),
    Claim(
        "relu_no_ceiling",
        LESSON_001,
        "That rules out ReLU first, because it has no ceiling on the positive side.",
        (_study("activation_training"),),
        "per study: how many ReLU runs diverged, beside how many tanh runs of the same recipe did",
        f"holds if ReLU runs diverge measurably more often (one-sided Fisher's exact test, {HOLM}); fails where they diverge measurably less often",
        activation.relu_unbounded,
        title="ReLU, with no ceiling, blows up",
        question="activation",
    ),
    Claim(
        "clip_direction",
        CHAPTER,
        "Clipping changes how far the step goes and never which way it points",
        (_study("clipping"),),
        "the clipped gradient's direction (true by construction); per stateful optimiser setting: the mean over clipped steps of the cosine between the update taken from the clipped gradient and the one the unclipped gradient would give at the same state, over seeds",
        f"holds if every setting's mean cosine is measurably above 1 − {MARGINS['update cosine'].size:g} (one-sided equivalence test, {HOLM}); fails where it is measurably below 1 and not within the margin",
        clipping.direction,
        title="Clipping keeps the step's direction",
        question="clipping",
    ),
    Claim(
        "clip_divergence",
        CHAPTER,
        "Exploding gradients have a one line remedy.",
        (_study("clipping"),),
        "per corpus, rate and threshold where an unclipped run diverged: how many unclipped and how many norm-clipped runs diverged (every run counts, learned or not)",
        f"holds if at every such rate and threshold unclipped runs diverge measurably more often (one-sided Fisher's exact test, {HOLM}); fails where they diverge measurably less often",
        clipping.divergence,
        title="Clipping stops exploding gradients",
        question="clipping",
    ),
    Claim(
        "clip_quality",
        CHAPTER,
        "which is why it costs nothing in quality.",
        (_study("clipping"),),
        "per corpus, rate where no unclipped run diverged, and threshold: the study's metric, clipped minus unclipped, seed means of learned runs (relative to unclipped)",
        f"holds if every threshold that clipped a step is worse than no clipping by less than the {_margin('perplexity')} (one-sided equivalence test, Welch, {HOLM}); fails where it is measurably worse",
        clipping.quality,
        title="Clipping costs nothing in quality",
        question="clipping",
    ),
    Claim(
        "clip_vanishing",
        CHAPTER,
        "It does nothing whatever for vanishing gradients.",
        (_analysis("clipping_decay"),),
        "the rate of ‖∂L/∂h‖ in learned runs of a clipping study, clipped minus unclipped at the same learning rate",
        f"holds if every clipped setting's rate exceeds the unclipped runs' by less than the rate {_margin('decay rate')} (one-sided equivalence test, Welch, {HOLM}); fails where its gradient decays measurably more slowly",
        clipping.vanishing,
        title="Clipping does nothing for vanishing gradients",
        question="clipping",
    ),
    Claim(
        "truncation_invisible",
        CHAPTER,
        "Any dependency spanning a segment boundary is invisible to training.",
        (_study("truncation_reach"),),
        "per study and truncation length k: agreement accuracy within reach of k minus beyond it, runs cut every k steps minus full-sentence BPTT on the same probes (the interaction); sentence cuts split by block and paired by seed, stream segments split by distance",
        f"holds if at every k the cut runs lose measurably more from within reach to beyond it than full-sentence BPTT does (one-sided t over seeds, {HOLM}); fails where that excess is measurably short of the accuracy {_margin('accuracy')}",
        truncation.invisible,
        title="Training cannot see across a truncation boundary",
        question="truncation",
    ),
    Claim(
        "sentence_cuts_reduce",
        CHAPTER,
        "Choosing the boundaries at sentence ends reduces the damage without removing it.",
        (_study("truncation_reach"), _study("truncation_sentence")),
        "per truncation length k trained both ways: the interaction (gap within reach minus beyond, cut runs minus the full-sentence runs of their own study, split by distance), stream segments minus sentence cuts; and the sentence cuts' own",
        f"holds if at every such k the sentence cuts' interaction is measurably smaller than the stream segments' and measurably above 0 (one-sided t, {HOLM}); fails where either is measurably short of the accuracy {_margin('accuracy')}",
        truncation.sentence_cuts,
        title="Cutting at sentence ends reduces the damage but does not remove it",
        question="truncation",
    ),
    Claim(
        "truncation_cost",
        CHAPTER,
        "Unrolling a sequence of thousands of steps is expensive in memory and slow.",
        (_study("truncation_cost"),),
        "longest against shortest truncation: training tokens per second and the training job's peak memory, seed means",
        f"holds if the longest unrolling is measurably slower and measurably larger in peak memory (one-sided Welch, {HOLM}); fails where a gap is measurably short of its margin ({MARGINS['tokens per second']} each)",
        truncation.cost,
        title="Long unrolling is slow and takes memory",
        question="truncation",
    ),
    Claim(
        "recurrence_beats_window",
        LESSON_001,
        "What follows is the fix, and it comes with a property nobody expects from a fix: the network that applies it is smaller than the one that fails.",
        (_study("matched_window"), _study("matched_recurrence")),
        f"per corpus, each window paired with the recurrence of the nearest parameter count (matched within {TOLERANCE}×): the study metric, recurrence minus window, seed means",
        f"holds if at every matched pair the recurrence is measurably better (one-sided Welch, {HOLM}); fails where its gain is measurably short of the metric's margin",
        window.beats,
        title="A recurrence beats a window of its size",
        question="matched",
    ),
    Claim(
        "lesson_gradient_reach",
        LESSON_003,
        "Gradients vanish over long sequences, so plain RNNs forget early words.",
        (),
        "the lesson's own measurement: mean |∂y_T/∂x_1| of its untrained nn.RNN at each length T",
        "holds if it is smaller at every longer T (one network, as the lesson prints it: a check, not a test)",
        lesson_reach,
        title="The lesson's network forgets early words",
        question="gradients",
        check=True,
    ),
)

# The claims that are checks of a source's printout, not tests: the book counts them with the arithmetic checks.
CHECKS: frozenset[str] = frozenset(c.id for c in CLAIMS if c.check)

# role -> the claims that read it: what a study or an analysis of that role is evidence for.
ROLES: dict[str, tuple[str, ...]] = {}
for _claim in CLAIMS:
    for _need in _claim.needs:
        ROLES[_need.role] = (*ROLES.get(_need.role, ()), _claim.id)

__all__ = ["CHECKS", "CLAIMS", "ROLES"]
