from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.worked_table(
    snakemake.wildcards.name,
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
