from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.corpus_table(
    snakemake.params.corpus_keys,
    list(snakemake.input.stats),
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
