from rnnbench import jobs
from rnnbench.paths import FIGURE_FORMATS

jobs.log_to(snakemake.log[0])
jobs.comparison_figure(
    snakemake.input.table,
    [snakemake.output[fmt] for fmt in FIGURE_FORMATS],
    title=snakemake.params.title,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
