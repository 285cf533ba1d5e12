"""Value domains: how the values of one Arrow type are read, compared and met by literals.

Every column type the engine reasons about maps to a :class:`Domain`:

==============  =======================================  ==================================
domain          Arrow types                              bounds are compared as
==============  =======================================  ==================================
IntDomain       int8..int64, uint8..uint64                numpy, native dtype
FloatDomain     float32, float64                          numpy, native dtype (NaN aside)
BoolDomain      bool                                      numpy bool
TemporalDomain  date32, date64, timestamp (any unit, tz)  numpy int (days / ms / the unit)
DecimalDomain   decimal128/256                            numpy int64 (p <= 18) or Arrow
ArrowDomain     string, large_string, binary, ...         uint64 words (:mod:`.strings`)
==============  =======================================  ==================================

A literal meets a domain through :meth:`Domain.coerce`, which says exactly where the literal
falls among the domain's values (:class:`Coerced`): on a value, strictly between two adjacent
values (``int_col = 2.5``), near a value whose engine rounding is unclear (a double literal
against a float32 column: both neighbours are possible), outside the domain, NaN or NULL.
The comparison planner turns that into tests that are exact where the domain is exact and
conservative where engines differ.
"""

from __future__ import annotations

import abc
import datetime as _dt
import decimal
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine._arrow_types import DAY_NS, UNIT_NS, is_string_type, unit_ns
from prune_engine.errors import TypeMismatchError
from prune_engine.evaluate import membership, strings

OPS_NUMPY = {
    "=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
    ">": np.greater, ">=": np.greater_equal,
}
OPS_ARROW = {
    "=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
    ">": pc.greater, ">=": pc.greater_equal,
}


@dataclass(frozen=True)
class Coerced:
    """Where a literal falls in a domain.

    kind: ``exact`` (equals ``lo``), ``between`` (strictly between adjacent values ``lo`` and
    ``hi``; equals neither), ``fuzzy`` (engines may round it to ``lo`` or ``hi``), ``below`` /
    ``above`` (outside every value of the domain), ``nan``, ``null``.
    ``lo``/``hi`` are plain Python numbers (or str/bytes) in the domain's integer or value space;
    they may lie outside the type's range, which the planner checks.
    """

    kind: str
    lo: Any = None
    hi: Any = None


def bool_numpy(arr) -> np.ndarray:
    """An Arrow boolean array as a numpy bool array, nulls read as False."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if arr.null_count:
        arr = pc.fill_null(arr, False)
    return arr.to_numpy(zero_copy_only=False)


def validity(arr: pa.Array) -> np.ndarray | None:
    """The validity of ``arr`` as a numpy bool array, or None when it has no nulls."""
    if arr.null_count == 0:
        return None
    if arr.null_count == len(arr):
        return np.zeros(len(arr), dtype=bool)
    buf = arr.buffers()[0]
    bits = np.frombuffer(buf, dtype=np.uint8)
    start = arr.offset
    return np.unpackbits(bits, bitorder="little", count=start + len(arr))[start:].view(bool)


def _fixed_values(arr: pa.Array, dtype) -> np.ndarray:
    """The value buffer of a fixed-width array as numpy, zero-copy (garbage under nulls)."""
    buf = arr.buffers()[1]
    return np.frombuffer(buf, dtype=dtype, count=arr.offset + len(arr))[arr.offset:]


class Domain(abc.ABC):
    """How one Arrow type's values are viewed, compared and met by literals."""

    nan_capable = False

    def __init__(self, type_: pa.DataType):
        self.type = type_

    # reading bounds --------------------------------------------------------------------
    def view(self, arr: pa.Array):
        """``(values, valid)``: values comparable with :meth:`compare`; valid None = all valid."""
        return _fixed_values(arr, self.dtype), validity(arr)

    # comparing ---------------------------------------------------------------------------
    def scalar(self, v):
        """A coerced value (from :meth:`coerce`) in the form :meth:`compare` takes."""
        return self.dtype.type(v)

    def compare(self, values, op: str, scalar) -> np.ndarray:
        return OPS_NUMPY[op](values, scalar)

    def compare_arrays(self, a, op: str, b) -> np.ndarray:
        return OPS_NUMPY[op](a, b)

    def sorted_set(self, values: list):
        """Sorted distinct values for set tests (IN lists)."""
        return np.unique(np.array([self.scalar(v) for v in values], dtype=self.dtype))

    def isin(self, values, sorted_set) -> np.ndarray:
        """For each value: is it in ``sorted_set``?"""
        return membership.contains(sorted_set, values)

    def any_in_range(self, lo, hi, sorted_set, lo_known=None, hi_known=None) -> np.ndarray:
        """For each container: does ``sorted_set`` hold a value in ``[lo, hi]``? An unknown
        bound (``*_known`` False; None = all known) reads as the set's own end, so that the
        known one still decides."""
        return membership.any_in_range(lo, hi, sorted_set, lo_known, hi_known)

    # literals -----------------------------------------------------------------------------
    _limits: tuple[Any, Any] = (None, None)

    @property
    def limits(self) -> tuple[Any, Any]:
        """The smallest and largest value of the domain (None = unbounded, e.g. strings)."""
        return self._limits

    @abc.abstractmethod
    def coerce(self, value: Any) -> Coerced:
        """Where ``value`` falls among this domain's values."""

    def mismatch(self, value) -> TypeMismatchError:
        return TypeMismatchError(
            f"cannot compare a {self.type} column with {type(value).__name__} literal {value!r}")


# ------------------------------------------------------------------------------------------
# numbers


def _number(value, domain: Domain):
    """A literal as an exact number (int, Fraction) or a float, else a type error."""
    if isinstance(value, bool):
        raise domain.mismatch(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, decimal.Decimal):
        if value.is_nan():
            return math.nan
        if value.is_infinite():
            return math.inf if value > 0 else -math.inf
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            d = decimal.Decimal(text)
        except decimal.InvalidOperation:
            raise domain.mismatch(value) from None
        return _number(d, domain) if (d.is_finite() or "e" in text.lower()) else float(text)
    raise domain.mismatch(value)


def _exact_or_between(x) -> Coerced:
    """An exact number (int/Fraction) against an integer grid."""
    if isinstance(x, int):
        return Coerced("exact", x, x)
    if x.denominator == 1:
        return Coerced("exact", int(x), int(x))
    lo = math.floor(x)
    return Coerced("between", lo, lo + 1)


def _double_on_grid(x: float, per_unit: int, always_fuzzy: bool = False) -> Coerced:
    """A double literal against an integer grid of ``per_unit`` steps per 1.0.

    Engines compare such a column with a double by converting the column's values to double,
    which rounds them: every grid value within one ulp of ``x`` may compare equal. Integers
    below 2**53 convert exactly (and those above round to 2**53 or more), so there the literal
    is exact (or strictly between two values); 2**53 itself is where 2**53 + 1 rounds to.
    """
    if not always_fuzzy and abs(x) < 2.0**53:
        return _exact_or_between(Fraction(x) * per_unit)
    ulp = Fraction(math.ulp(x))
    return Coerced("fuzzy", math.floor((Fraction(x) - ulp) * per_unit), math.ceil((Fraction(x) + ulp) * per_unit))


_UNSIGNED = {pa.uint8().id, pa.uint16().id, pa.uint32().id, pa.uint64().id}

def _integer_limits(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _coerce_on_grid(x, per_unit: int, double_always_fuzzy: bool) -> Coerced:
    """A number against an integer grid of ``per_unit`` steps per 1.0 (ints, decimals);
    NaN and +inf lie above every grid value, -inf below."""
    if isinstance(x, float):
        if math.isnan(x) or x == math.inf:
            return Coerced("above")
        if x == -math.inf:
            return Coerced("below")
        return _double_on_grid(x, per_unit, double_always_fuzzy)
    if isinstance(x, int):  # (the common case, without Fraction's cost)
        return Coerced("exact", x * per_unit, x * per_unit)
    return _exact_or_between(Fraction(x) * per_unit)


class IntDomain(Domain):
    def __init__(self, type_):
        super().__init__(type_)
        self.dtype = np.dtype(f"{'u' if type_.id in _UNSIGNED else ''}int{type_.bit_width}")
        self._limits = _integer_limits(self.dtype)

    def coerce(self, value):
        if type(value) is int:  # (what _number and _coerce_on_grid make of it, in one step)
            return Coerced("exact", value, value)
        return _coerce_on_grid(_number(value, self), 1, double_always_fuzzy=False)


class FloatDomain(Domain):
    nan_capable = True

    def __init__(self, type_):
        super().__init__(type_)
        self.dtype = np.dtype(np.float32 if pa.types.is_float32(type_) else np.float64)

    def coerce(self, value):
        x = _number(value, self)
        if isinstance(x, float):
            if math.isnan(x):
                return Coerced("nan")
            if self.dtype == np.float64 or math.isinf(x):
                return Coerced("exact", x, x)
        exact = Fraction(x)
        big = float(np.finfo(self.dtype).max)
        if abs(exact) > big:
            return Coerced("fuzzy", big, math.inf) if exact > 0 else Coerced("fuzzy", -math.inf, -big)
        f = self.dtype.type(float(exact))  # a neighbour of the exact value (or the value)
        if self.dtype == np.float64:
            # engines cast a decimal or integer literal to the nearest double: exactly f
            return Coerced("exact", float(f), float(f))
        if Fraction(float(f)) == exact:
            return Coerced("exact", float(f), float(f))
        toward = self.dtype.type(np.inf if Fraction(float(f)) < exact else -np.inf)
        other = np.nextafter(f, toward)
        lo, hi = sorted((float(f), float(other)))
        # engines may compare in the column's precision (rounding the literal to lo or hi)
        # or in a wider one (the literal lies strictly between): allow both
        return Coerced("fuzzy", lo, hi)

    def sorted_set(self, values):
        return np.unique(np.array(values, dtype=self.dtype))


class BoolDomain(Domain):
    dtype = np.dtype(bool)

    def view(self, arr):
        if arr.null_count:
            vals = pc.fill_null(arr, False)
        else:
            vals = arr
        return vals.to_numpy(zero_copy_only=False), validity(arr)

    _limits = (False, True)

    def coerce(self, value):
        if isinstance(value, (bool, np.bool_)):
            return Coerced("exact", bool(value), bool(value))
        if isinstance(value, str) and value.strip().lower() in ("true", "false", "t", "f"):
            b = value.strip().lower().startswith("t")
            return Coerced("exact", b, b)
        raise self.mismatch(value)


# ------------------------------------------------------------------------------------------
# dates and timestamps: all literals become exact UTC nanoseconds first

#: nanoseconds per unit of an Arrow timestamp
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_TS_RE = re.compile(
    r"^\s*(\d{4,})-(\d{1,2})-(\d{1,2})(\s*\(BC\))?"
    r"(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*$",
    re.IGNORECASE,
)


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date, for any year (0 is 1 BC), as
    engines read dates past 9999 (DuckDB's ``DATE '5881580-07-10'``).

    >>> days_from_civil(1970, 1, 1), days_from_civil(2000, 3, 1), days_from_civil(294247, 1, 10)
    (0, 11017, 106751991)
    """
    if not (1 <= month <= 12 and 1 <= day <= _month_days(year, month)):
        raise ValueError(f"no such date: {year:04d}-{month:02d}-{day:02d}")
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _month_days(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def civil_from_days(days: int) -> tuple[int, int, int]:
    """The (year, month, day) of a day number (0 = 1970-01-01): the inverse of
    :func:`days_from_civil`.

    >>> civil_from_days(106751991)
    (294247, 1, 10)
    """
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) // 5 + 1


def date_value(days: int):
    """A date literal's value: a ``datetime.date`` where Python has one (years 1 to 9999),
    else its ISO text (``'5881580-07-10'``, ``'0044-03-15 (BC)'``)."""
    year, month, day = civil_from_days(days)
    if 1 <= year <= 9999:
        return _dt.date(year, month, day)
    if year >= 1:
        return f"{year:04d}-{month:02d}-{day:02d}"
    return f"{1 - year:04d}-{month:02d}-{day:02d} (BC)"


class TimestampText(NamedTuple):
    """Date or timestamp text as written (see :func:`read_timestamp_text`)."""

    #: the written date, in days since 1970-01-01
    days: int
    #: the written time of day in nanoseconds; None when only a date was written
    time_ns: int | None
    #: the written zone's offset east of UTC in seconds; None when no zone was written
    offset_s: int | None

    @property
    def utc_ns(self) -> int:
        """The instant in UTC epoch nanoseconds (no zone written reads as UTC)."""
        return self.days * DAY_NS + (self.time_ns or 0) - (self.offset_s or 0) * 10**9

    def read_as(self, type_: pa.DataType | None) -> "TimestampText":
        """The text as a value of ``type_`` reads it: a zoned timestamp keeps the written zone
        (the instant), a zone-less timestamp or a date drops it, as DuckDB, PostgreSQL and
        Spark do (``CAST('2024-01-01 10:00+01:00' AS TIMESTAMP)`` is 10:00).

        >>> read_timestamp_text("2024-01-01 10:00+01:00").read_as(pa.timestamp("us")).offset_s
        >>> read_timestamp_text("2024-01-01 10:00+01:00").read_as(pa.timestamp("us", "UTC")).offset_s
        3600
        """
        if type_ is not None and pa.types.is_timestamp(type_) and type_.tz is not None:
            return self
        return self._replace(offset_s=None)


def read_timestamp_text(text: str) -> TimestampText:
    """The one reader of date and timestamp text, for the pruning and the row filter alike.

    ``YYYY-MM-DD``, where the year may have more than four digits and DuckDB's ``(BC)`` may
    follow the date (``0001 (BC)`` is year 0); then optionally ``[ T]HH:MM[:SS[.f]]`` with up to
    nine fraction digits (exact to the nanosecond); then optionally a zone: ``Z``, ``UTC``,
    ``+HH``, ``+HHMM`` or ``+HH:MM`` (or ``-``). Anything else is a ValueError.

    >>> read_timestamp_text("0044-03-15 (BC) 10:00:00.000000001+01:00")
    TimestampText(days=-735160, time_ns=36000000000001, offset_s=3600)
    >>> read_timestamp_text("12345-06-07")
    TimestampText(days=3789548, time_ns=None, offset_s=None)
    """
    m = _TS_RE.match(text)
    if not m:
        raise ValueError(f"not a date or timestamp: {text!r}")
    y, mo, d, bc, hh, mm, ss, frac, zone = m.groups()
    year = 1 - int(y) if bc else int(y)
    days = days_from_civil(year, int(mo), int(d))
    time_ns = None
    if hh is not None:
        if int(hh) > 23 or int(mm) > 59 or int(ss or 0) > 59:
            raise ValueError(f"no such time of day: {text!r}")
        time_ns = (int(hh) * 3600 + int(mm) * 60 + int(ss or 0)) * 10**9
        if frac:
            time_ns += int(frac.ljust(9, "0"))
    offset_s = None
    if zone:
        offset_s = 0
        if zone.upper() not in ("Z", "UTC"):
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            offset_s = sign * (int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60)
    return TimestampText(days, time_ns, offset_s)


def read_text_as(text: str | TimestampText, literal_type: pa.DataType | None,
                 target_type: pa.DataType) -> TimestampText:
    """The text (or the text already read) of a literal typed ``literal_type`` (None: untyped) that meets a value of
    ``target_type`` (a column's type, or a cast's): read as the literal's own type when that is
    a date or timestamp (``TIMESTAMPTZ '...'``), else as the target's, to which engines cast
    untyped text (:meth:`TimestampText.read_as`). A ValueError for text that is no date or
    timestamp.

    >>> read_text_as("2024-01-01 10:00+01:00", None, pa.timestamp("us")).utc_ns % DAY_NS // 3600_000_000_000
    10
    >>> read_text_as("2024-01-01 10:00+01:00", pa.timestamp("us", "UTC"), pa.date32()).utc_ns % DAY_NS // 3600_000_000_000
    9
    """
    own = literal_type is not None and (pa.types.is_timestamp(literal_type) or pa.types.is_date(literal_type))
    written = text if isinstance(text, TimestampText) else read_timestamp_text(text)
    return written.read_as(literal_type if own else target_type)


def parse_instant_ns(text: str) -> int:
    """Parse an ISO date or timestamp (optional zone; none = UTC) to UTC epoch nanoseconds.
    Years may have more than four digits, and DuckDB's ``(BC)`` may follow the date
    (:func:`read_timestamp_text`).

    >>> parse_instant_ns("1970-01-01 00:00:01.5+01:00")
    -3598500000000
    >>> parse_instant_ns("0001-12-31 (BC) 23:59:59") == parse_instant_ns("0001-01-01") - 10**9
    True
    """
    return read_timestamp_text(text).utc_ns


def instant_ns(value: Any) -> int:
    """A date/timestamp literal (date, datetime, ISO text, text already read, Arrow scalar) as
    UTC nanoseconds; a value without a zone is read as UTC."""
    if isinstance(value, pa.Scalar):
        t = value.type
        if pa.types.is_timestamp(t):
            return value.value * UNIT_NS[t.unit]
        if pa.types.is_date32(t):
            return value.value * DAY_NS
        if pa.types.is_date64(t):
            return value.value * 10**6
        value = value.as_py()
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
        delta = aware - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    if isinstance(value, _dt.date):
        return (value - _dt.date(1970, 1, 1)).days * DAY_NS
    if isinstance(value, str):
        return parse_instant_ns(value)
    if isinstance(value, TimestampText):
        return value.utc_ns
    raise TypeError(value)


class TemporalDomain(Domain):
    """date32 (days), date64 (ms) and timestamps (their unit); instants compared in UTC."""

    def __init__(self, type_):
        super().__init__(type_)
        self.dtype = np.dtype(np.int32 if pa.types.is_date32(type_) else np.int64)
        self.unit_ns = unit_ns(type_)
        self._limits = _integer_limits(self.dtype)

    def coerce(self, value):
        try:
            ns = instant_ns(value)
        except (TypeError, ValueError, OverflowError):
            raise self.mismatch(value) from None
        return _exact_or_between(Fraction(ns, self.unit_ns))


# ------------------------------------------------------------------------------------------
# decimals


class DecimalDomain(Domain):
    """Decimals compared by their unscaled integers: numpy int64 up to precision 18, else Arrow."""

    def __init__(self, type_):
        super().__init__(type_)
        self.scale = type_.scale
        self.small = type_.precision <= 18 and pa.types.is_decimal128(type_)
        self.dtype = np.dtype(np.int64)
        top = 10**type_.precision - 1
        self._limits = (-top, top)

    def view(self, arr):
        if self.small:
            words = _fixed_values_words(arr)
            return words, validity(arr)
        return arr, validity(arr)

    def scalar(self, v):
        if self.small:
            return np.int64(v)
        return pa.scalar(unscaled_to_decimal(v, self.scale), self.type)

    def compare(self, values, op, scalar):
        if self.small:
            return OPS_NUMPY[op](values, scalar)
        return bool_numpy(OPS_ARROW[op](values, scalar))

    def compare_arrays(self, a, op, b):
        if self.small:
            return OPS_NUMPY[op](a, b)
        return bool_numpy(OPS_ARROW[op](a, b))

    def sorted_set(self, values):
        if self.small:
            return np.unique(np.array(values, dtype=np.int64))
        return sorted(set(values))

    def isin(self, values, sorted_set):
        if self.small:
            return super().isin(values, sorted_set)
        items = pa.array([self.scalar(v) for v in sorted_set], self.type)
        return bool_numpy(pc.is_in(values, value_set=items))

    def any_in_range(self, lo, hi, sorted_set, lo_known=None, hi_known=None):
        if self.small:
            return super().any_in_range(lo, hi, sorted_set, lo_known, hi_known)
        test = _wide_decimal_any_in_range(self, lo, hi, sorted_set)
        for known in (lo_known, hi_known):  # wide decimals: an unknown bound keeps
            if known is not None:
                test |= ~known
        return test

    def coerce(self, value):
        # a double against a decimal: engines compare in double, rounding the decimal values
        return _coerce_on_grid(_number(value, self), 10**self.scale, double_always_fuzzy=True)


#: exact decimal arithmetic for up to 76 digits (decimal256), never the default 28
EXACT_DECIMAL = decimal.Context(prec=100, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def unscaled_to_decimal(unscaled: int, scale: int) -> decimal.Decimal:
    """``unscaled * 10**-scale`` exactly."""
    return decimal.Decimal(int(unscaled)).scaleb(-scale, context=EXACT_DECIMAL)


def _fixed_values_words(arr: pa.Array) -> np.ndarray:
    """decimal128 values of precision <= 18 as int64 (the low word; the high word is its sign)."""
    buf = arr.buffers()[1]
    words = np.frombuffer(buf, dtype=np.int64, count=2 * (arr.offset + len(arr)))
    return words[2 * arr.offset::2]


# ------------------------------------------------------------------------------------------
# strings and binary (byte order = UTF-8 code point order), compared as words: see .strings


def as_bytes(value) -> bytes:
    """A string or binary literal as the bytes it compares by."""
    if isinstance(value, pa.Scalar):
        value = value.as_py()
    return value.encode() if isinstance(value, str) else bytes(value)


class ArrowDomain(Domain):
    """Strings and binary compared by bytes, through :class:`~.strings.KeyedStrings` (numpy
    words). Fixed-size binary bounds are read as binary, so that literals of any length
    compare with them by bytes (``X'ff'`` against ``binary(4)``). Coerced values are bytes."""

    def __init__(self, type_):
        super().__init__(type_)
        self.is_text = is_string_type(type_)
        self.value_type = pa.binary() if pa.types.is_fixed_size_binary(type_) else type_

    def view(self, arr):
        if arr.type != self.value_type:
            arr = arr.cast(self.value_type)
        return strings.KeyedStrings(arr), validity(arr)

    def scalar(self, v):
        return as_bytes(v)

    def compare(self, values, op, scalar):
        return strings.compare_literal(values, op, scalar)

    def compare_arrays(self, a, op, b):
        return strings.compare_columns(a, op, b)

    def sorted_set(self, values):
        return strings.Members(sorted({as_bytes(v) for v in values}))

    def isin(self, values, sorted_set):
        return strings.isin(values, sorted_set)

    def any_in_range(self, lo, hi, sorted_set, lo_known=None, hi_known=None):
        return strings.any_in_range(lo, hi, sorted_set, lo_known, hi_known)

    def coerce(self, value):
        if self.is_text:
            if isinstance(value, str):
                return Coerced("exact", value, value)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            return Coerced("exact", bytes(value), bytes(value))
        elif isinstance(value, str):
            return Coerced("exact", value.encode(), value.encode())
        raise self.mismatch(value)


def _wide_decimal_any_in_range(domain: DecimalDomain, lo, hi, sorted_set) -> np.ndarray:
    """``any v in sorted_set: lo <= v <= hi`` for Arrow-backed decimal bounds (beyond 18
    digits): one binary search per container over the set, run by numpy over Python objects."""
    items = [unscaled_to_decimal(v.as_py() if isinstance(v, pa.Scalar) else v, domain.scale)
             for v in sorted_set]
    out = np.zeros(len(lo), dtype=bool)
    if not items:
        return out
    ok = ~(np.asarray(lo.is_null()) | np.asarray(hi.is_null()))
    lo_obj = lo.filter(pa.array(ok)).to_numpy(zero_copy_only=False)
    hi_obj = hi.filter(pa.array(ok)).to_numpy(zero_copy_only=False)
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    idx = np.searchsorted(arr, lo_obj, side="left")
    found = idx < len(arr)
    cand = arr[np.minimum(idx, len(arr) - 1)]
    out[ok] = found & (cand <= hi_obj)
    return out


def domain_of(type_: pa.DataType) -> Domain | None:
    """The domain for an Arrow type, or None when the engine does not reason about it."""
    if pa.types.is_integer(type_):
        return IntDomain(type_)
    if pa.types.is_float32(type_) or pa.types.is_float64(type_):
        return FloatDomain(type_)
    if pa.types.is_boolean(type_):
        return BoolDomain(type_)
    if pa.types.is_date32(type_) or pa.types.is_date64(type_) or pa.types.is_timestamp(type_):
        return TemporalDomain(type_)
    if pa.types.is_decimal(type_):
        return DecimalDomain(type_)
    if (pa.types.is_string(type_) or pa.types.is_large_string(type_) or pa.types.is_binary(type_)
            or pa.types.is_large_binary(type_) or pa.types.is_fixed_size_binary(type_)):
        return ArrowDomain(type_)
    return None
