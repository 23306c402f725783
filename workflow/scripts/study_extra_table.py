from rnnbench import jobs
from rnnbench.config.locations import job_folders
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.study_extra_table(
    snakemake.wildcards.kind,
    snakemake.params.record,
    snakemake.params.points,
    snakemake.input.summary,
    dict(snakemake.params.run_files),
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
    **job_folders(snakemake.config),
)
