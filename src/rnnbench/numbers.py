"""How a number is written as text, once for every reader: the findings' value strings, the book's prose and table
cells, a figure's notes.

Three significant digits unless asked otherwise; whole digits kept where they carry the precision (5,266 rather than
5.27e+03); scientific notation below 0.001 and from a million up, as text (1.2 × 10⁻⁵), never Python's e-notation; a
true minus sign (−0.129), which a reader cannot mistake for a hyphen; NaN as an en dash.
"""

from __future__ import annotations

import math

MINUS = "−"  # U+2212
MISSING = "–"  # U+2013: a value that was not measured
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(value: float, digits: int = 1) -> tuple[str, int]:
    """A mantissa with ``digits`` decimals and its power of ten: (−7.1, −15) for −7.105e-15, as ("−7.1", −15)."""
    mantissa, exponent = f"{float(value):.{digits}e}".split("e")
    return mantissa.replace("-", MINUS), int(exponent)


def in_scientific_range(value: float) -> bool:
    """Whether a value is written in scientific notation: nonzero and below 0.001 or from a million up."""
    return value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e6)


def significant(value: float, digits: int = 3) -> str:
    """``digits`` significant digits as text, trailing zeros dropped as %g drops them: 0.20734 -> 0.207, −0.0386 ->
    −0.0386, 5266.4 -> 5,266, 7.105e-15 -> 7.11 × 10⁻¹⁵, 1e-05 -> 1 × 10⁻⁵, NaN -> –."""
    v = float(value)
    if math.isnan(v):
        return MISSING
    if math.isinf(v):
        return f"{MINUS}∞" if v < 0 else "∞"
    if in_scientific_range(v):
        mantissa, exponent = scientific(v, digits - 1)
        if "." in mantissa:  # significant digits, as %g writes them: 1 × 10⁻⁵, not 1.00 × 10⁻⁵
            mantissa = mantissa.rstrip("0").rstrip(".")
        return f"{mantissa} × 10{str(exponent).translate(SUPERSCRIPT)}"
    if abs(v) >= 10 ** (digits - 1):  # whole digits carry the precision
        return f"{v:,.0f}".replace("-", MINUS)
    return f"{v:.{digits}g}".replace("-", MINUS)


def signed(value: float, digits: int = 3, unit: str = "") -> str:
    """A difference with its sign always written: +0.0122, −14.9, +20%."""
    text = significant(value, digits)
    return (text if text.startswith(MINUS) or text == MISSING else f"+{text}") + unit


def interval(estimate_and_bounds, digits: int = 3, unit: str = "") -> str:
    """An estimate and its 95% interval (anything with ``estimate``, ``low`` and ``high``): +20% [+15.1%, +24.9%]."""
    iv = estimate_and_bounds
    return f"{signed(iv.estimate, digits, unit)} [{signed(iv.low, digits, unit)}, {signed(iv.high, digits, unit)}]"


def plural(n: int, noun: str) -> str:
    """A noun for a count: plural(1, "run") -> run, plural(3, "seed") -> seeds (English's regular plural only)."""
    return noun if int(n) == 1 else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """A count and its noun: counted(1, "run") -> 1 run, counted(1200, "step") -> 1,200 steps."""
    return f"{int(round(float(n))):,} {plural(n, noun)}"
