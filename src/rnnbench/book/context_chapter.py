"""The values of "What more context buys" (reports/context.qmd) and of the front chapter's first answer, and which of
their alternative sentences the results call for (rnnbench.book.conditions): the window studies on the Penn
Treebank and on the agreement corpus, and the agreement windows read within and past their width.

    window_section(results)   WindowSection: flags, then the numbers as the sentences print them

A width none of whose seeds learned has no mean, and a study with fewer than two such widths has nothing to compare:
the chapter then says so, instead of printing a number that is not one. Reads results only; no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rnnbench.book import context
from rnnbench.book.format import NONE, Markdown, fixed, integer, sig, words
from rnnbench.numbers import MISSING


@dataclass(frozen=True)
class WindowSection:
    ptb_measured: bool  # at least two widths of the Penn Treebank's window study have a seed that learned
    agreement_measured: bool  # the same of the agreement corpus's window study
    blind_measured: bool  # at least one agreement window has heads past its width, read by a seed that learned
    best_is_widest: bool  # on the Penn Treebank the widest width measured has the best mean
    # the Penn Treebank's window study
    ptb_hidden: Markdown
    ptb_widths: Markdown
    ptb_seeds: int
    ptb_see: Markdown  # where a reader sees the widths: the chapter's figure, or the study's table
    ptb_study: str
    ptb_figure: str | None
    narrow_ppl: Markdown  # n−1 = 1
    best_width: Markdown
    best_ppl: Markdown
    next_width: Markdown  # the second widest with a mean, and the widest
    next_ppl: Markdown
    widest_width: Markdown
    widest_ppl: Markdown
    # the agreement corpus's window study: accuracy over all distances at its two widest widths
    agreement_next_width: Markdown
    agreement_next: Markdown
    agreement_widest_width: Markdown
    agreement_widest: Markdown
    # the agreement windows, within their width and past it
    blind_widths: Markdown
    blind_within: Markdown
    blind_beyond: Markdown
    blind_low: Markdown  # how much less accurately a window reads a head past its width than inside it: least
    blind_high: Markdown  # and most
    blind_see: Markdown
    blind_study: str
    blind_figure: str | None


def window_section(results: str | Path | None = None) -> WindowSection:
    ptb, agreement = context.widening("ptb", results), context.widening("agreement", results)
    blind = context.blind_windows(results)
    none = context.Widening.NONE
    narrow, best, nxt, widest = (ptb.narrowest, ptb.best, ptb.next_widest, ptb.widest) if ptb else (none,) * 4
    a_next, a_widest = (agreement.next_widest, agreement.widest) if agreement else (none, none)
    compared = blind.compared if blind else []
    return WindowSection(
        ptb_measured=math.isfinite(nxt[1]),
        agreement_measured=math.isfinite(a_next[1]),
        blind_measured=bool(compared),
        best_is_widest=math.isfinite(nxt[1]) and best[0] == widest[0],
        ptb_hidden=integer(ptb.hidden) if ptb and ptb.hidden else NONE,
        ptb_widths=words(integer(w) for w in ptb.widths) if ptb else NONE,
        ptb_seeds=ptb.seeds if ptb else 0,
        ptb_see=Markdown(ptb.see if ptb else MISSING),
        ptb_study=ptb.study if ptb else "",
        ptb_figure=ptb.figure if ptb else None,
        narrow_ppl=sig(narrow[1]),
        best_width=integer(best[0]),
        best_ppl=sig(best[1]),
        next_width=integer(nxt[0]),
        next_ppl=fixed(nxt[1], 1),
        widest_width=integer(widest[0]),
        widest_ppl=fixed(widest[1], 1),
        agreement_next_width=integer(a_next[0]),
        agreement_next=fixed(a_next[1], 3),
        agreement_widest_width=integer(a_widest[0]),
        agreement_widest=fixed(a_widest[1], 3),
        blind_widths=words(integer(w) for w, _, _ in compared) or NONE,
        blind_within=words(fixed(a, 2) for _, a, _ in compared) or NONE,
        blind_beyond=words(fixed(b, 2) for _, _, b in compared) or NONE,
        blind_low=fixed(blind.smallest_fall if blind else math.nan, 2),
        blind_high=fixed(blind.largest_fall if blind else math.nan, 2),
        blind_see=Markdown(blind.see if blind else MISSING),
        blind_study=blind.study if blind else "",
        blind_figure=blind.figure if blind else None,
    )
