from rnnbench import jobs
from rnnbench.provenance import job_fields

jobs.log_to(snakemake.log[0])
jobs.findings_table(
    snakemake.params.results,
    snakemake.params.roles,
    snakemake.output.table,
    provenance_file=snakemake.output.provenance,
    provenance=job_fields(snakemake.config, snakemake.rule, snakemake.scriptdir),
    parts_out=snakemake.output.parts,
    parts_provenance_file=snakemake.output.provenance_parts,
)
