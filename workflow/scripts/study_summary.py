from rnnbench import jobs

jobs.log_to(snakemake.log[0])
jobs.study_summary(
    snakemake.wildcards.study,
    snakemake.params.points,
    snakemake.params.runs,
    list(snakemake.input),
    snakemake.output[0],
    about=snakemake.params.about,
    provenance={**snakemake.params.provenance, "config": snakemake.config},
)
