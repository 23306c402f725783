"""The Quarto book's code (reports/*.qmd): what its chapters read from a results folder, how they print it,
and the render.

    results         the reader API: where the results are, their tables, provenance, study and analysis records,
                    and the error a missing result raises
    format          numbers, words and tables as markdown for the HTML book and the Typst PDF
    figures         results figures staged inside the book, where both formats can embed them
    study_sections  one generated section per study, so a study added to the config appears with no edit
    answers         the first chapter's values: verdict words, deciding numbers, errata, the ledger (answers.qmd)
    findings        the verdicts appendix's values: the findings table, margins, evidence sections (verdicts.qmd)
    published       the comparison table shaped for the page: rows per corpus, best runs, the crossover
    published_chapter the published numbers chapter's values and the flags of its passages (published.qmd)
    conditions      which of a chapter's alternative Markdown passages its results call for (metadata flags)
    studies         what the studies chapter's ablation sections share: studies by role, seed counts, cells
    clipping        the clipping sections' values (studies.qmd)
    clipping_chapter the clipping chapter's values (clipping.qmd)
    truncation      the truncation sections' values (studies.qmd)
    windows         the window-against-recurrence section's values (studies.qmd)
    decay           the decay chapter's values and its per-analysis sections (decay.qmd)
    explorables     the HTML book's explorables: the data each one writes into its page
    quarto          renders the book of one results folder with Quarto

Only quarto runs a program (Quarto itself); the rest read finished results, and nothing here trains or imports torch.
A chapter imports the modules it needs, e.g. ``from rnnbench.book import format as fmt``.
"""
