from rnnbench import jobs
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.benchmark_table(
    snakemake.params.run_ids,
    list(snakemake.input.benchmarks),
    list(snakemake.input.metrics),
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
