from rnnbench import jobs
from rnnbench.config.locations import job_folders
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.decay_analysis(
    snakemake.params.record,
    snakemake.params.points,
    dict(snakemake.output.items()),
    **job_folders(snakemake.config),
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
