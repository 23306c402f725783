from rnnbench import jobs
from rnnbench.paths import FIGURE_FORMATS

jobs.log_to(snakemake.log[0])
jobs.study_figure(
    snakemake.input.summary,
    snakemake.input.study,
    list(snakemake.output)[: len(FIGURE_FORMATS)],
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
