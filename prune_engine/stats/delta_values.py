"""How one statistic of a Delta log becomes a TRUE bound: a reader per column type, twice.

:mod:`prune_engine.stats.delta` states the rules (its module doc: timestamps cut to the
millisecond and their zones, strings cut by writers, decimals that may have travelled through
float64, floats written as floats before a widening to double, impossible values); they are
written here once per type, in two forms that give the same answers:

- the reference, value by value (:func:`reader`): a raw JSON value as Python's ``json`` reads it
  (numbers with a fraction or an exponent as :class:`~decimal.Decimal`, so their text is kept)
  becomes the bound, None (unknown) or a :class:`Bad` (present but unusable: a warning);
- the bulk twin (:func:`read_column`): the same column of many files, as Arrow's JSON reader
  parsed it with :func:`json_type` (integers int64, floats and decimals float64, strings, dates
  and timestamps as text), computed with Arrow and numpy. Arrow's reader converts nothing
  silently (a string where a number is expected refuses the file, which is then read by the
  reference), so a value it hands over is one the reference would read the same way. Where
  a rule needs more than the parsed value, the twin calls the reference for those values: a
  decimal's text (its digits and exponent say whether it can be a float64 of delta-rs, see
  :func:`needs_text`), a string max long enough to have been cut, a date or timestamp not
  in the plain ISO form ``YYYY-MM-DD[THH:MM:SS[.ffffff][Z|+HH:MM]]``.

A bound is in its "space": int64 for every integer type, float64 for float and double,
microseconds (int64) for timestamps, the column's type otherwise; :func:`bound_array` makes
the column's type of it.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal, DecimalException
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from prune_engine.expr.like import successor

__all__ = ["Bad", "EXACT_DECIMAL_DIGITS", "FLOAT64_DIGITS", "Reader", "TYPE_CHANGES",
           "ZONE_SLACK", "bound_array", "is_count", "json_type", "needs_text", "read_column",
           "reader", "replaced", "space_type", "was_float"]

#: field-metadata key of a Delta column's type history (type widening)
TYPE_CHANGES = b"delta.typeChanges"
#: up to this many decimal digits, a decimal survives float64 exactly
EXACT_DECIMAL_DIGITS = 15
#: a float64's shortest decimal text has at most this many significant digits
FLOAT64_DIGITS = 17
#: a timestamp text whose zone is in doubt may be off by up to this (UTC-18:00 to UTC+18:00)
ZONE_SLACK = dt.timedelta(hours=18)

_INT64_MAX = 2 ** 63 - 1
_INT64_MIN = -2 ** 63
_EPOCH = dt.datetime(1970, 1, 1)
_US = dt.timedelta(microseconds=1)
_SLACK_US = ZONE_SLACK // _US
#: the range of Delta (and Spark) timestamps, in microseconds: 0001-01-01 to 9999-12-31
_FIRST_US = (dt.datetime.min - _EPOCH) // _US
_LAST_US = (dt.datetime.max - _EPOCH) // _US
_DECIMALS = Context(prec=120)  # room for any decimal(38) bound and its margin, exactly
_FLOAT64_ERROR = _DECIMALS.power(Decimal(2), -50)  # generously, a float64's relative error
_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "+Infinity": math.inf,
                "-Infinity": -math.inf}
_INT_RANGES = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}
#: the plain ISO forms Arrow's casts read as Python's ``fromisoformat`` does; year 0, which
#: Arrow takes and Python does not, is left out (a text of this form that Arrow does not read,
#: such as February 30, is read by value, as every other form)
_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"
_DATE = f"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}$"
_TIMESTAMP = (f"^{_YEAR}-[0-9]{{2}}-[0-9]{{2}}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
              r"(?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?$")
_OFFSET = "[+-][0-9]{2}:[0-9]{2}$"


class Bad:
    """A value present in the log that cannot be used (the wrong kind, or impossible)."""

    def __init__(self, why: str):
        self.why = why


#: reads one raw JSON value of the log as a bound: the value, None (unknown) or a Bad
Reader = Callable[[object, bool], object]


def is_count(value) -> bool:
    """Whether a raw JSON value is a count: an integer from 0 to int64's max (no file holds
    more rows, and Arrow holds no more)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _INT64_MAX


# ------------------------------------------------------------------------------ by value


def _integer(bits: int) -> Reader:
    low, high = -2 ** (bits - 1), 2 ** (bits - 1) - 1

    def read(raw, lower):
        if isinstance(raw, int) and not isinstance(raw, bool) and low <= raw <= high:
            return raw
        return Bad("not an integer of its type")
    return read


def _boolean(raw, lower):
    return raw if isinstance(raw, bool) else Bad("not a boolean")


def _number(raw):
    """A JSON number (or Spark's "NaN" / "Infinity" words) as the nearest double."""
    if isinstance(raw, bool):
        return Bad("not a number")
    if isinstance(raw, (int, Decimal)):
        try:
            value = float(raw)
        except OverflowError:
            return Bad("a number beyond double")
        return value if math.isfinite(value) else Bad("a number beyond double")
    if isinstance(raw, float):  # the NaN / Infinity tokens
        return raw
    if isinstance(raw, str) and raw in _FLOAT_WORDS:
        return _FLOAT_WORDS[raw]
    return Bad("not a number")


def _signed_zero(value: float, lower: bool) -> float:
    return (-0.0 if lower else 0.0) if value == 0 else value


def _float32(raw, lower):
    value = _number(raw)
    if isinstance(value, Bad) or math.isnan(value):
        return value if isinstance(value, Bad) else None  # a NaN bound: unknown
    with np.errstate(over="ignore"):
        single = np.float32(value)
        if math.isinf(single) and not math.isinf(value):
            return Bad("a number beyond float")
        step = np.nextafter(single, np.float32(-np.inf if lower else np.inf))
    return _signed_zero(float(step), lower)


def _float64(was_float: bool) -> Reader:
    """A double bound; ``was_float``: the column was a float once, so the value may be a
    float's (see the module doc of :mod:`prune_engine.stats.delta`)."""

    def read(raw, lower):
        value = _number(raw)
        if isinstance(value, Bad) or math.isnan(value):
            return value if isinstance(value, Bad) else None  # a NaN bound: unknown
        if was_float:
            with np.errstate(over="ignore"):
                single = np.float32(value)
                if math.isfinite(single):
                    step = float(np.nextafter(single, np.float32(-np.inf if lower else np.inf)))
                    value = min(value, step) if lower else max(value, step)
        return _signed_zero(value, lower)
    return read


def _decimal(typ: pa.DataType) -> Reader:
    unit = Decimal(1).scaleb(-typ.scale)
    limit = Decimal(10 ** typ.precision - 1).scaleb(-typ.scale, context=_DECIMALS)
    lowest = _DECIMALS.minus(limit)

    def read(raw, lower):
        if isinstance(raw, bool) or not isinstance(raw, (int, Decimal)):
            return Bad("not a decimal number")
        if isinstance(raw, int):
            if raw == (_INT64_MIN if lower else _INT64_MAX):
                return None  # maybe saturated by delta-rs: no bound on that side
            value, exact = Decimal(raw), True
        else:
            value = raw
            shape = value.as_tuple()
            exact = typ.precision <= EXACT_DECIMAL_DIGITS or (
                len(shape.digits) > FLOAT64_DIGITS and -shape.exponent <= typ.scale)
        try:
            if not exact:  # maybe a float64 of the value: widen by its error
                error = _DECIMALS.multiply(_DECIMALS.abs(value), _FLOAT64_ERROR)
                margin = _DECIMALS.add(error, 2 * unit)
                value = _DECIMALS.subtract(value, margin) if lower else \
                    _DECIMALS.add(value, margin)
            value = value.quantize(unit, rounding=ROUND_FLOOR if lower else ROUND_CEILING,
                                   context=_DECIMALS)
        except DecimalException:
            return Bad("a decimal out of range")
        if (lower and value > limit) or (not lower and value < lowest):
            return Bad("a decimal out of its type's range")
        return max(value, lowest) if lower else min(value, limit)
    return read


def _string(cut_at: int) -> Reader:
    def read(raw, lower):
        if not isinstance(raw, str):
            return Bad("not a string")
        try:
            raw.encode("utf-8")
        except UnicodeEncodeError:
            return Bad("not valid UTF-8")
        if lower or len(raw) < cut_at:
            return raw
        return successor(raw[:-1])  # maybe cut: above every string with its verbatim prefix
    return read


def _date(raw, lower):
    if not isinstance(raw, str):
        return Bad("not a date")
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        return Bad("not a date")


def _timestamp(zoned: bool) -> Reader:
    """Microseconds since the epoch (see the module doc of :mod:`prune_engine.stats.delta`
    for zones and milliseconds)."""

    def read(raw, lower):
        if not isinstance(raw, str):
            return Bad("not a timestamp")
        try:
            when = dt.datetime.fromisoformat(raw)
        except ValueError:
            return Bad("not a timestamp")
        micros = (when.replace(tzinfo=None) - _EPOCH) // _US
        offset = when.utcoffset()
        if zoned and offset is not None:  # an instant
            micros -= offset // _US
        elif zoned or offset:  # the writer's session zone is in doubt
            if abs(offset or dt.timedelta(0)) > ZONE_SLACK:
                return Bad("a timestamp with an impossible zone offset")
            micros += (-1 if lower else 1) * _SLACK_US
        if not lower:
            micros += 999  # cut down to the millisecond
        return min(max(micros, _FIRST_US), _LAST_US)
    return read


def was_float(field: pa.Field) -> bool:
    """Whether the column's type history (type widening) holds a float, or cannot be read."""
    text = (field.metadata or {}).get(TYPE_CHANGES)
    if text is None:
        return False
    try:
        changes = json.loads(text)
        return any(change.get("fromType") == "float" and not change.get("fieldPath")
                   for change in changes)
    except (ValueError, RecursionError, TypeError, AttributeError):
        return True


def reader(field: pa.Field, cut_at: int) -> Reader | None:
    """How the log's bounds of a leaf are read, value by value; None when they are not
    trusted at all."""
    typ = field.type
    if typ in _INT_RANGES:
        return _integer(_INT_RANGES[typ])
    if pa.types.is_boolean(typ):
        return _boolean
    if typ == pa.float32():
        return _float32
    if typ == pa.float64():
        return _float64(was_float(field))
    if pa.types.is_decimal(typ):
        return _decimal(typ)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return _string(cut_at)
    if typ == pa.date32():
        return _date
    if pa.types.is_timestamp(typ):
        return _timestamp(typ.tz is not None)
    return None  # binary and anything else: no trusted bounds


def space_type(typ: pa.DataType) -> pa.DataType:
    """The type a leaf's bounds are computed in (see the module doc)."""
    if typ in _INT_RANGES or pa.types.is_timestamp(typ):
        return pa.int64()
    if pa.types.is_floating(typ):
        return pa.float64()
    if pa.types.is_large_string(typ):
        return pa.string()
    return typ


def bound_array(values: pa.Array, typ: pa.DataType) -> pa.Array:
    """Bounds in their space (see the module doc) as the column's type ``typ``."""
    if not pa.types.is_timestamp(typ):
        return values if values.type == typ else values.cast(typ)
    micros = values.cast(pa.timestamp("us", typ.tz))
    try:
        return micros.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # another unit that cannot hold them
        return pa.nulls(len(values), typ)


# ------------------------------------------------------------------------------ in bulk


def json_type(field: pa.Field) -> pa.DataType | None:
    """The type Arrow's JSON reader parses a leaf's bounds as (None: not read): exactly the
    JSON kind the reference accepts, so that a value of another kind refuses the file."""
    typ = field.type
    if typ in _INT_RANGES:
        return pa.int64()
    if pa.types.is_boolean(typ):
        return pa.bool_()
    if typ in (pa.float32(), pa.float64()) or pa.types.is_decimal(typ):
        return pa.float64()  # a decimal's value is then read from its text
    if (pa.types.is_string(typ) or pa.types.is_large_string(typ) or typ == pa.date32()
            or pa.types.is_timestamp(typ)):
        return pa.string()
    return None


def needs_text(field: pa.Field) -> bool:
    """Whether :func:`read_column` needs the leaf's values as Python's ``json`` reads them
    (``texts``: a number with a fraction as a Decimal, which keeps its text), not only as
    Arrow parsed them."""
    return pa.types.is_decimal(field.type)


def read_column(field: pa.Field, cut_at: int, raw: pa.Array, lower: bool,
                texts: list | None = None) -> tuple[pa.Array, list[tuple[int, str]]]:
    """The bounds (in their space) of one leaf for many files, from ``raw`` (its values as
    :func:`json_type` parsed them; ``texts``: the same values as Python's ``json`` reads them,
    needed where :func:`needs_text` says so), and the files whose value is a :class:`Bad`
    (index, why). The same answers as :func:`reader` value by value."""
    typ = field.type
    read = reader(field, cut_at)
    if read is None:
        return pa.nulls(len(raw), space_type(typ)), []
    if texts is not None:
        return _by_value(read, texts, lower, space_type(typ))
    if typ in _INT_RANGES:
        return _integers(raw, _INT_RANGES[typ])
    if pa.types.is_boolean(typ):
        return raw, []
    if pa.types.is_floating(typ):
        return _floats(raw, lower, typ == pa.float32(), typ == pa.float32() or was_float(field))
    if pa.types.is_timestamp(typ):
        return _timestamps(raw, lower, typ.tz is not None, read)
    if typ == pa.date32():
        return _patterned(raw, _DATE, pa.date32(), read, lower)
    return _strings(raw, lower, cut_at, read)


def _by_value(read: Reader, values: list, lower: bool, space: pa.DataType
              ) -> tuple[pa.Array, list[tuple[int, str]]]:
    out, bad = [], []
    for i, raw in enumerate(values):
        value = None if raw is None else read(raw, lower)
        if type(value) is Bad:
            bad.append((i, value.why))
            value = None
        out.append(value)
    return pa.array(out, space), bad


def replaced(base: pa.Array, rows: np.ndarray, values: pa.Array) -> pa.Array:
    """``base`` with its ``rows`` replaced by ``values`` (of the same type)."""
    if not len(rows):
        return base
    index = np.arange(len(base), dtype=np.int64)
    index[rows] = len(base) + np.arange(len(rows), dtype=np.int64)
    return pa.concat_arrays([base, values]).take(pa.array(index))


def _valid(values: pa.Array) -> np.ndarray:
    return np.asarray(values.is_valid().to_numpy(zero_copy_only=False))


def _integers(raw: pa.Array, bits: int) -> tuple[pa.Array, list[tuple[int, str]]]:
    if bits == 64:
        return raw, []
    values = np.asarray(pc.fill_null(raw, 0).to_numpy(zero_copy_only=False))
    out = (values < -2 ** (bits - 1)) | (values > 2 ** (bits - 1) - 1)
    if not out.any():
        return raw, []
    rows = np.flatnonzero(out & _valid(raw))
    return (pa.array(values, pa.int64(), mask=~_valid(raw) | out),
            [(int(i), "not an integer of its type") for i in rows])


def _floats(raw: pa.Array, lower: bool, single: bool, step: bool
            ) -> tuple[pa.Array, list[tuple[int, str]]]:
    """:func:`_float32` (``single``) or :func:`_float64` (``step``: was a float) in bulk."""
    values = np.asarray(pc.fill_null(raw, 0.0).to_numpy(zero_copy_only=False), np.float64)
    known = _valid(raw) & ~np.isnan(values)  # a NaN bound: unknown
    bad = np.zeros(len(values), bool)
    towards = np.float32(-np.inf if lower else np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        if step:
            floats = values.astype(np.float32)
            stepped = np.nextafter(floats, towards).astype(np.float64)
            if single:
                bad = known & np.isinf(floats) & ~np.isinf(values)
                values = stepped
            else:
                finite = np.isfinite(floats)
                values = np.where(finite, np.minimum(values, stepped) if lower
                                  else np.maximum(values, stepped), values)
    values = np.where(values == 0, -0.0 if lower else 0.0, values)
    rows = np.flatnonzero(bad)
    return (pa.array(values, pa.float64(), mask=~(known & ~bad)),
            [(int(i), "a number beyond float") for i in rows])


def _strings(raw: pa.Array, lower: bool, cut_at: int, read: Reader
             ) -> tuple[pa.Array, list[tuple[int, str]]]:
    if lower:
        return raw, []
    long = np.asarray(pc.fill_null(pc.greater_equal(pc.utf8_length(raw), cut_at), False)
                      .to_numpy(zero_copy_only=False))
    rows = np.flatnonzero(long)
    if not len(rows):
        return raw, []
    maxs = [read(s, False) for s in raw.take(pa.array(rows)).to_pylist()]
    return replaced(raw, rows, pa.array(maxs, pa.string())), []


def _patterned(raw: pa.Array, pattern: str, typ: pa.DataType, read: Reader, lower: bool,
               ) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Texts of the plain form ``pattern`` cast by Arrow to ``typ``, the others (and all,
    should the cast refuse one) read by value."""
    plain = pc.fill_null(pc.match_substring_regex(raw, pattern), False)
    try:
        values = pc.if_else(plain, raw, pa.scalar(None, pa.string())).cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values, plain = pa.nulls(len(raw), typ), pa.array(np.zeros(len(raw), bool))
    return _rest_by_value(raw, values, plain, read, lower, typ)


def _rest_by_value(raw: pa.Array, values: pa.Array, done: pa.Array, read: Reader, lower: bool,
                   typ: pa.DataType) -> tuple[pa.Array, list[tuple[int, str]]]:
    """``values`` where ``done``; elsewhere each present value of ``raw`` read by value."""
    rows = np.flatnonzero(_valid(raw) & ~np.asarray(done.to_numpy(zero_copy_only=False)))
    if not len(rows):
        return values, []
    rest, bad = _by_value(read, raw.take(pa.array(rows)).to_pylist(), lower, typ)
    return replaced(values, rows, rest), [(int(rows[i]), why) for i, why in bad]


def _timestamps(raw: pa.Array, lower: bool, zoned: bool, read: Reader
                ) -> tuple[pa.Array, list[tuple[int, str]]]:
    """:func:`_timestamp` in bulk, for texts of the plain ISO form (``_TIMESTAMP``): the wall
    clock cast by Arrow, the zone (``Z``, ``+HH:MM`` or none) read from the text's end."""
    n = len(raw)
    plain = pc.fill_null(pc.match_substring_regex(raw, _TIMESTAMP), False)
    utc = pc.and_(plain, pc.ends_with(raw, "Z"))
    offset = pc.and_(plain, pc.match_substring_regex(raw, _OFFSET))
    wall = pc.if_else(utc, pc.utf8_slice_codeunits(raw, 0, -1),
                      pc.if_else(offset, pc.utf8_slice_codeunits(raw, 0, -6), raw))
    try:
        wall = pc.if_else(plain, wall, pa.scalar(None, pa.string())).cast(
            pa.timestamp("us")).cast(pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # a date Arrow refuses
        return _rest_by_value(raw, pa.nulls(n, pa.int64()), pa.array(np.zeros(n, bool)),
                              read, lower, pa.int64())
    micros = np.asarray(pc.fill_null(wall, 0).to_numpy(zero_copy_only=False), np.int64)
    has_offset = _mask(offset)
    has_zone = _mask(utc) | has_offset
    minutes = np.zeros(n, np.int64)
    if has_offset.any():
        sign = np.where(_mask(pc.ends_with(pc.utf8_slice_codeunits(raw, -6, -5), "-")), -1, 1)
        minutes = sign * (_digits(raw, -5, -3) * 60 + _digits(raw, -2, None))
        minutes = np.where(has_offset, minutes, 0)
    shift = minutes * 60_000_000
    bad = np.zeros(n, bool)
    if zoned:  # an instant where the text has a zone, else the zone is in doubt
        micros = np.where(has_zone, micros - shift, micros + (-_SLACK_US if lower
                                                               else _SLACK_US))
    else:  # a wall clock: in doubt where the text has another offset than zero
        doubt = shift != 0
        bad = doubt & (np.abs(shift) > _SLACK_US)
        micros = np.where(doubt, micros + (-_SLACK_US if lower else _SLACK_US), micros)
    if not lower:
        micros = micros + 999  # cut down to the millisecond
    micros = np.clip(micros, _FIRST_US, _LAST_US)
    values, rest_bad = _rest_by_value(raw, pa.array(micros, pa.int64(), mask=~_mask(plain) | bad),
                                      plain, read, lower, pa.int64())
    return values, [(int(i), "a timestamp with an impossible zone offset")
                    for i in np.flatnonzero(bad)] + rest_bad


def _mask(values: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(values, False).to_numpy(zero_copy_only=False))


def _digits(texts: pa.Array, start: int, stop: int | None) -> np.ndarray:
    """The number written at ``[start, stop)`` of each text (0 where it is no number)."""
    part = pc.utf8_slice_codeunits(texts, start, stop)
    numbers = pc.if_else(pc.match_substring_regex(part, "^[0-9]+$"), part, "0").cast(pa.int64())
    return np.asarray(pc.fill_null(numbers, 0).to_numpy(zero_copy_only=False), np.int64)
