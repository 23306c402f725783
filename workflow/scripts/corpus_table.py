from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.corpus_table(
    snakemake.params.corpus_keys,
    list(snakemake.input),
    snakemake.output[0],
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
