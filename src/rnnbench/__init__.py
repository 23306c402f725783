"""rnnbench: measured answers to the questions a chapter on recurrent networks raises."""

__version__ = "0.1.0"
