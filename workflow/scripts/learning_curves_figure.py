from rnnbench import jobs
from rnnbench.paths import FIGURE_FORMATS

jobs.log_to(snakemake.log[0])
jobs.learning_curves_figure(
    snakemake.input.table,
    [snakemake.output[fmt] for fmt in FIGURE_FORMATS],
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
