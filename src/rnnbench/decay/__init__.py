"""Gradient-decay curves measured on real networks, next to the bounds theory puts on them.

    networks   untrained Elman RNNs at a given spectral radius, the linear RNN, token windows of a corpus
    measure    ||dL_T/dh_t||, ||dL_T/dx_t|| for every t in one backward pass; forward perturbation of x_1
    rates      measured slope of log-norm vs distance beside its bounds (log ||diag(f') U||, Pascanu's),
               log rho(U) (the eigenvalue story's rate) and the mean slope f' along the trajectory
    passage    the chapter's 47-word passage: the blame for the last word reaching "partner"
    probe      a linear probe reading the head noun's number from the state d steps on, beside the gradient
               crossing d steps (agreement sentences)
    analysis   one analysis point: a network source (untrained spec or a run's model file) and a split in,
               the tidy curves and rates tables out

Everything here takes a model and tokens and returns tables; nothing reads or writes files.
"""

from rnnbench.decay.analysis import UNTRAINED_SETTINGS, analyse, decay_point, load_trained, network
from rnnbench.decay.measure import (
    OUTPUT_DISTANCES,
    OUTPUT_EVERY,
    QUANTILES,
    backward_decay,
    check_recurrent,
    direction,
    forward_decay,
    naive_backward_decay,
    states_from,
    summarise,
)
from rnnbench.decay.networks import (
    make_linear,
    sequences,
    set_spectral_radius,
    spectral_radius,
    untrained_lstm,
    untrained_rnn,
)
from rnnbench.decay.passage import PASSAGE, PASSAGE_TARGET, passage_decay, ptb_words
from rnnbench.decay.rates import (
    FIT_MAX,
    FIT_SKIP,
    JACOBIAN_STEPS,
    MAX_SLOPE,
    UNDERFLOW_MARGIN,
    bounds_and_prediction,
    fit_rate,
    forward_rates,
    rates,
    step_jacobian_norms,
    step_slopes,
)

__all__ = [
    "FIT_MAX",
    "FIT_SKIP",
    "JACOBIAN_STEPS",
    "OUTPUT_DISTANCES",
    "OUTPUT_EVERY",
    "MAX_SLOPE",
    "PASSAGE",
    "PASSAGE_TARGET",
    "QUANTILES",
    "UNDERFLOW_MARGIN",
    "UNTRAINED_SETTINGS",
    "analyse",
    "backward_decay",
    "bounds_and_prediction",
    "check_recurrent",
    "decay_point",
    "direction",
    "fit_rate",
    "forward_decay",
    "forward_rates",
    "load_trained",
    "make_linear",
    "naive_backward_decay",
    "network",
    "passage_decay",
    "ptb_words",
    "rates",
    "sequences",
    "set_spectral_radius",
    "spectral_radius",
    "states_from",
    "step_jacobian_norms",
    "step_slopes",
    "summarise",
    "untrained_lstm",
    "untrained_rnn",
]
