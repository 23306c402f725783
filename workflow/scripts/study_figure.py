from rnnbench import jobs
from rnnbench.paths import FIGURE_FORMATS

jobs.log_to(snakemake.log[0])
jobs.study_figure(
    snakemake.input[0],
    list(snakemake.output)[: len(FIGURE_FORMATS)],
    x=snakemake.params.x,
    metric=snakemake.params.metric,
    hue=snakemake.params.hue,
    title=snakemake.params.title,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
