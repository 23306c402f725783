from rnnbench import jobs
from rnnbench.paths import FIGURE_FORMATS
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.clipping_figure(
    dict(zip(snakemake.input.summaries, snakemake.input.records, strict=True)),
    [snakemake.output[fmt] for fmt in FIGURE_FORMATS],
    provenance_file=snakemake.output.provenance,
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
