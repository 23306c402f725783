from rnnbench import jobs
from rnnbench.paths import FIGURE_FORMATS

jobs.log_to(snakemake.log[0])
jobs.book_figure(
    snakemake.wildcards.name,
    snakemake.input[0],
    list(snakemake.output)[: len(FIGURE_FORMATS)],
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
