from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.findings_table(
    snakemake.params.results,
    snakemake.params.roles,
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
