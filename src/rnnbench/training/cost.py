"""What a run costs, counted by the run itself: its CPU time and peak resident memory over every call that trained
it (a resumed run's earlier calls up to their last checkpoint, then this one).

The run counts its own CPU time: Snakemake's benchmark samples a job's process every 30 s after its first 15 s and
keeps the last sample, which leaves out up to 30 s of a job's CPU time.
"""

from __future__ import annotations

import resource
import sys
import time


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (getrusage: kilobytes on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def cost_so_far(cpu_start: float, earlier_cpu: float, earlier_peak: float) -> tuple[float, float]:
    """(CPU seconds, peak memory in MB) of the run up to now: the earlier calls' ``earlier_cpu`` and ``earlier_peak``,
    and this call's from ``cpu_start`` (its ``time.process_time()`` when it began)."""
    return earlier_cpu + time.process_time() - cpu_start, max(earlier_peak, peak_rss_mb())
