from rnnbench import jobs
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.study_summary(
    snakemake.params.record,
    snakemake.params.points,
    snakemake.params.runs,
    list(snakemake.input.metrics),
    snakemake.output.table,
    record_file=snakemake.output.record,
    provenance_file=snakemake.output.provenance,
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
    baselines=next(iter(snakemake.input.baselines), None),
)
