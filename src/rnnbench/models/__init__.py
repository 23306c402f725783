"""Language models: Bengio's feed-forward n-gram LM, the Elman RNN LM, and an LSTM for contrast."""

from rnnbench.models.base import LanguageModel, ModelConfig, RecurrentLM, unroll
from rnnbench.models.ff import FeedForwardLM
from rnnbench.models.lstm import LSTMLM, LSTMCell
from rnnbench.models.output import IGNORE_INDEX, AdaptiveSoftmax, FullSoftmax
from rnnbench.models.rnn import ElmanCell, ElmanLM

__all__ = [
    "IGNORE_INDEX",
    "LSTMLM",
    "AdaptiveSoftmax",
    "ElmanCell",
    "ElmanLM",
    "FeedForwardLM",
    "FullSoftmax",
    "LSTMCell",
    "LanguageModel",
    "ModelConfig",
    "RecurrentLM",
    "build_model",
    "unroll",
]


def build_model(cfg: ModelConfig) -> LanguageModel:
    """The language model of ``cfg.family``: here, above the families, so that they import base and nothing
    imports them back."""
    families: dict[str, type[LanguageModel]] = {"ff": FeedForwardLM, "rnn": ElmanLM, "lstm": LSTMLM}
    return families[cfg.family](cfg)
