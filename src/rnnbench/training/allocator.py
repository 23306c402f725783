"""Keep the memory a training step frees for the next step, instead of handing it back to the kernel.

A step allocates and frees the same large blocks every time (a 700 x 10,000 score matrix is 28 MB; each
gradient of a 10,000-word layer is 8 MB). glibc's malloc returns such blocks to the kernel when they are
freed (blocks above its mmap threshold are unmapped; a free top of a heap above the trim threshold is cut
off), and the next step page-faults them back in, zero-filled. On PTB shapes the plain word_language_model
loop takes 3,600-14,000 page faults a step that way, and 580-820 with this setting (the `faults` column of
`benchmarks/bench_train_e2e.py`). Raising the thresholds keeps the blocks in the process: the heap grows to
the step's peak once and stays there, which is the resident size the step needs anyway.

Only glibc has these knobs (mallopt); elsewhere this does nothing and says so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
import sys

# mallopt parameters, from glibc's <malloc.h>
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

MMAP_THRESHOLD = 32 * 2**20  # glibc's largest allowed value on 64-bit; larger blocks are still mapped
TRIM_THRESHOLD = 2**30  # keep up to 1 GiB of free heap top


def retain_freed_memory() -> bool:
    """Set glibc's malloc to keep freed blocks for reuse; True if it was applied (glibc on Linux)."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    # Both are set: setting either one alone turns off glibc's adaptive thresholds, and with the trim
    # threshold alone every large block is mapped afresh (measured: twice the faults of the default).
    settings = ((_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return all(libc.mallopt(param, value) == 1 for param, value in settings)  # mallopt: 1 = set, 0 = refused
