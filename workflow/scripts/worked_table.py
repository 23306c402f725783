from rnnbench import jobs
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.worked_table(
    snakemake.wildcards.name,
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
