from rnnbench import jobs
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.activation_figure(
    {study: dict(files) for study, files in snakemake.params.studies.items()},
    {name: snakemake.output[name] for name in ("table", "png", "pdf", "table_provenance", "figure_provenance")},
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
)
