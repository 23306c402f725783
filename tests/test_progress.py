"""How far a run had come by each epoch, from its epochs.csv."""

import pandas as pd
import pytest

from rnnbench.results.progress import training_progress


def test_the_tokens_an_epoch_read_are_summed_as_training_counted_them():
    # the rate times the seconds would say 1,001 and 1,499: the count is what the epochs.csv says
    epochs = pd.DataFrame(
        {"epoch": [1, 2], "seconds": [4.0, 6.0], "tokens": [1000, 1500], "tokens_per_second": [250.25, 249.8333]}
    )
    progress = training_progress(epochs)
    assert progress["tokens_seen"].tolist() == [1000, 2500]
    assert progress["seconds_trained"].tolist() == [4.0, 10.0]


def test_an_epochs_table_without_the_count_reads_it_off_the_rate():
    """Runs trained before epochs.csv counted tokens (the reference runs): 250 tokens/s for 4 s is 1,000 tokens."""
    epochs = pd.DataFrame({"epoch": [1, 2], "seconds": [4.0, 6.0], "tokens_per_second": [250.0, 250.0]})
    assert training_progress(epochs)["tokens_seen"].tolist() == [1000, 2500]
    with pytest.raises(ValueError, match="tokens_per_second"):
        training_progress(epochs.drop(columns="tokens_per_second"))
