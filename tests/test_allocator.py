"""Freed memory stays in the process: blocks a step frees are kept for the next step, not given back."""

import ctypes
import platform

import pytest
import torch

from rnnbench.training import allocator

MiB = 2**20


class MallInfo2(ctypes.Structure):
    """glibc's struct mallinfo2 (2.33+): what the allocator holds, in bytes."""

    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def heap_info() -> MallInfo2:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    return libc.mallinfo2()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt and mallinfo2")
def test_freed_blocks_stay_in_the_heap_for_the_next_step():
    assert allocator.retain_freed_memory()
    before = heap_info()
    blocks = [torch.ones(30 * MiB // 4) for _ in range(3)]  # 3 x 30 MiB, as a step's scores and gradients
    held = heap_info()
    # Below the 32 MiB threshold: carved from the heap, not mapped one by one (glibc's default maps
    # any block above 128 KiB until a freed mapping raises its threshold).
    # In use in the heap (the heap may already hold free space from earlier work in this process, so it need
    # not grow).
    assert held.hblkhd - before.hblkhd < 30 * MiB
    assert held.uordblks - before.uordblks >= 60 * MiB
    del blocks
    # glibc's default trims a free heap top above twice its threshold (at most 64 MiB): 90 MiB would go
    # back to the kernel and be faulted in again by the next step.
    assert heap_info().arena >= held.arena


def test_other_c_libraries_are_left_alone(monkeypatch):
    monkeypatch.setattr(allocator.platform, "libc_ver", lambda: ("musl", "1.2"))
    assert allocator.retain_freed_memory() is False
