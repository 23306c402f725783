from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.study_extra_table(
    snakemake.wildcards.kind,
    snakemake.params.record,
    snakemake.params.points,
    snakemake.input.summary,
    dict(snakemake.params.run_files),
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
    data_dir=snakemake.params.data_dir,
    cache_dir=snakemake.params.cache_dir,
)
