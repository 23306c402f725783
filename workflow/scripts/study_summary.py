from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.study_summary(
    snakemake.params.record,
    snakemake.params.points,
    snakemake.params.runs,
    list(snakemake.input.metrics),
    snakemake.output.table,
    record_file=snakemake.output.record,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
    baselines=next(iter(snakemake.input.baselines), None),
)
