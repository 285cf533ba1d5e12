"""stats_from_delta reads the log's statistics in bulk (Arrow's JSON reader, columns at once)
and gives exactly what the reference reader gives value by value, file by file.

The reference is the same code with the bulk reader switched off (``parse_objects`` parsing
no file: every file then goes through the reference readers of ``delta_values.reader``, value
by value). Randomized logs
(hypothesis, the project's derandomized profile) mix good statistics of every Delta type with
the odd ones writers and corruption produce: numbers spelled every way JSON allows (and some
it does not), values of the wrong kind, out of range, impossible counts, a min above its max,
zones, long strings, escapes, deletion vectors, texts that are not one JSON object (blank,
``null``, two objects, a line break inside, cut short). Both readings must agree on every
bound (bit for bit: -0.0 is not 0.0), count, row count, problem and warning, and a text that
cannot be framed must never shift another file's statistics.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import subprocess
import sys
import tempfile
import warnings
from types import SimpleNamespace

import deltalake
import numpy as np
import pyarrow as pa
import pytest
from deltalake import DeltaTable
from hypothesis import given, settings, strategies as st

import prune_engine as pe
from prune_engine.stats import delta as delta_module
from prune_engine.stats.delta_log import parse_objects
from tests.stats.delta_logs import field, widened

FEATURES = ["timestampNtz", "typeWidening", "deletionVectors"]
FIELDS = [field("b", "boolean"), field("i8", "byte"), field("i16", "short"),
          field("i32", "integer"), field("i64", "long"), field("f", "float"),
          field("d", "double"), field("dw", "double", widened(("float", "double"))),
          field("dec", "decimal(10,2)"), field("dec38", "decimal(38,10)"),
          field("s", "string"), field("day", "date"), field("ts", "timestamp"),
          field("tsn", "timestamp_ntz"), field("bin", "binary"),
          field("st", {"type": "struct", "fields": [field("a", "long"), field("z", "string")]}),
          field("arr", {"type": "array", "elementType": "long", "containsNull": True})]
LEAVES = {"b": "bool", "i8": "int", "i16": "int", "i32": "int", "i64": "int", "f": "float",
          "d": "float", "dw": "float", "dec": "decimal", "dec38": "decimal", "s": "string",
          "day": "date", "ts": "timestamp", "tsn": "timestamp", "bin": "string"}


def _write(root: str, stats: list, vectors: list | None = None,
           fields: list | None = None) -> str:
    """A log whose version 0 adds one file per entry of ``stats`` (its ``stats`` text, or
    anything else put there as is), with the deletion vectors ``vectors`` (None: none)."""
    os.makedirs(os.path.join(root, "_delta_log"), exist_ok=True)
    lines = [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                           "readerFeatures": FEATURES, "writerFeatures": FEATURES}},
             {"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}},
                           "schemaString": json.dumps({"type": "struct",
                                                       "fields": fields or FIELDS}),
                           "partitionColumns": [], "configuration": {}, "createdTime": 0}}]
    for i, text in enumerate(stats):
        add = {"path": f"f{i}.parquet", "partitionValues": {}, "size": 1,
               "modificationTime": 0, "dataChange": True, "stats": text}
        if vectors and vectors[i] is not None:
            add["deletionVector"] = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb",
                                     "offset": 1, "sizeInBytes": 36,
                                     "cardinality": vectors[i]}
        lines.append({"add": add})
    with open(os.path.join(root, "_delta_log", f"{0:020d}.json"), "w", encoding="utf-8") as out:
        out.write("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n")
    return root


def _shown(value):
    """A value with its float signs visible (repr tells -0.0 from 0.0)."""
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return repr(value)


def _read(root: str):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stats = pe.stats_from_delta(root)
    return (_shown(stats.table.to_pylist()), stats.table.schema, stats.metadata,
            [str(w.message) for w in caught])


class _Opened:
    """What stats_from_delta asks of deltalake's table, for a log deltalake itself refuses
    (its own parser of the statistics refuses a count of the wrong kind, for one): the schema
    deltalake gives for the log's fields (from a clean log of them) and the log's paths."""

    def __init__(self, root: str, version=None):
        with open(os.path.join(root, "_delta_log", f"{0:020d}.json"), encoding="utf-8") as log:
            lines = [json.loads(line) for line in log]
        self.fields = next(a["metaData"]["schemaString"] for a in lines if "metaData" in a)
        self.paths = pa.table({"path": [a["add"]["path"] for a in lines if "add" in a]})

    def version(self) -> int:
        return 0

    def schema(self):
        return _deltalake_schema(self.fields)

    def metadata(self):
        return SimpleNamespace(partition_columns=[], configuration={})

    def get_add_actions(self, flatten: bool) -> pa.Table:
        return self.paths


def _adds(root: str) -> int:
    with open(os.path.join(root, "_delta_log", f"{0:020d}.json"), encoding="utf-8") as log:
        return sum('"add"' in line for line in log)


@functools.lru_cache(maxsize=4)
def _deltalake_schema(fields: str) -> deltalake.Schema:
    with tempfile.TemporaryDirectory() as root:
        return DeltaTable(_write(root, ["{}"], fields=json.loads(fields)["fields"])).schema()


def _both(root: str, opened=None) -> tuple:
    """The statistics read in bulk and by the reference, and how many files the bulk reading
    left to the reference (``opened``: what stands for deltalake's table, if not itself)."""
    parsed = []

    def counted(texts, schema):
        rows, table = parse_objects(texts, schema)
        parsed.append(len(rows))
        return rows, table

    def nothing(texts, schema):  # no file parsed in bulk: each read by the reference
        return np.zeros(0, np.int64), schema.empty_table()

    readings = []
    for parse in (counted, nothing):
        with pytest.MonkeyPatch.context() as m:
            if opened is not None:
                m.setattr(deltalake, "DeltaTable", opened)
            m.setattr(delta_module, "parse_objects", parse)
            readings.append(_read(root))
    return readings[0], readings[1], _adds(root) - sum(parsed)


# ------------------------------------------------------------------------------ values
# Per kind of column: values of the JSON kind Arrow is told to expect (edge values, and values
# the reference finds bad: out of range, impossible dates), and values of another kind (which
# make Arrow refuse the file: it then goes to the reference).

EDGE_INTS = ["0", "-0", "127", "128", "-128", "-129", "32767", "32768", "2147483647",
             "2147483648", "-2147483649", "9223372036854775807", "-9223372036854775808"]
RIGHT_KIND = {
    "bool": st.sampled_from(["true", "false", "null"]),
    "int": st.one_of(st.integers(-2 ** 63, 2 ** 63 - 1).map(str),
                     st.integers(-300, 300).map(str), st.sampled_from(EDGE_INTS)),
    "float": st.one_of(
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.floats(width=32, allow_nan=False, allow_infinity=False).map(repr),
        st.integers(-2 ** 80, 2 ** 80).map(str),
        st.decimals(allow_nan=False, allow_infinity=False, places=30).map(str),
        st.sampled_from(["0", "-0", "-0.0", "0.0", "1e-400", "-1e-400", "3.4028235e38",
                         "3.4028236e38", "-3.5e38", "1.401298464324817e-45", "1E5", "1e+5",
                         "NaN", "Infinity", "-Infinity", "null"])),
    "decimal": st.one_of(
        st.decimals(allow_nan=False, allow_infinity=False, places=2).map(str),
        st.decimals(allow_nan=False, allow_infinity=False, places=12).map(str),
        st.integers(-10 ** 40, 10 ** 40).map(str),
        st.floats(allow_nan=False, allow_infinity=False).map(repr),
        st.sampled_from(["1.50", "1.500000000000000000", "1.5E+3", "1.5e-3", "-0.00",
                         "9223372036854775807", "-9223372036854775808", "99999999.99",
                         "100000000.00", "12345678901234567890.1234567890", "null"])),
    "string": st.one_of(
        st.tuples(st.text(st.characters(codec="utf-8"), max_size=40), st.booleans()).map(
            lambda t: json.dumps(t[0], ensure_ascii=t[1])),
        st.sampled_from(['"\\ud83d\\ude00"', '"a\\u0000b"', '"NaN"', '"Inf"', '"null"',
                         '"' + "x" * 40 + '"', '"' + "\U0010ffff" * 20 + '"', '""', "null",
                         '"tab\\there"', '"\\"quoted\\""'])),
    "date": st.one_of(
        st.dates().map(lambda d: json.dumps(d.isoformat())),
        st.sampled_from(['"20240102"', '"2024-02-30"', '"0000-01-01"', '"2024-1-2"',
                         '"2024-01-02T00:00:00"', '"2024-W01-1"', '"9999-12-31"',
                         '"0001-01-01"', "null"])),
}
OTHER_KIND = {"bool": st.sampled_from(["0", '"true"']),
       "int": st.sampled_from(["1.0", "1e3", '"5"', "true", "[1]", "{}", "9223372036854775808",
                               "-9223372036854775809", str(2 ** 70)]),
       "float": st.sampled_from(["1e400", "-1e400", '"NaN"', '"Infinity"', '"+Infinity"',
                                 "true", '"1.5"', "-NaN", "Inf", "-Inf"]),
       "decimal": st.sampled_from(['"1.5"', "true", "1e400", "NaN"]),
       "string": st.sampled_from(['"\\ud800"', "5", "true", "[]"]),
       "date": st.sampled_from(["20240102", "true"]),
       "timestamp": st.sampled_from(["1.5", "false"])}


@st.composite
def timestamps(draw):
    when = draw(st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)))
    digits = draw(st.sampled_from([0, 1, 3, 3, 6, 7]))
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{when.microsecond:06d}{draw(st.integers(0, 9))}"[:digits]
    zone = draw(st.sampled_from(["", "Z", "Z", "+00:00", "-00:00", "+05:30", "-18:00",
                                 "+18:01", "+23:59", "+05:30:15", "+0530"]))
    separator = draw(st.sampled_from(["T", "T", "T", " "]))
    return json.dumps((text + zone).replace("T", separator, 1))


RIGHT_KIND["timestamp"] = st.one_of(timestamps(), st.sampled_from(
    ['"2024-01-02T24:00:00"', '"2024-01-02T23:59:60Z"', '"0000-01-02T00:00:00Z"',
     '"2024-02-30T00:00:00"', '"garbage"', '"2024-01-02"', "null"]))
RIGHT_KIND["count"] = st.one_of(st.integers(0, 12).map(str), st.sampled_from(
    ["-1", "null", "9223372036854775807"]))
OTHER_KIND["count"] = st.sampled_from(["1.0", '"2"', "true", "9223372036854775808", "1e2"])


@st.composite
def objects(draw) -> str:
    """A file's statistics text: an object of any mix of members; three files in four hold
    only values of the kinds Arrow is told to expect (edge values, and values the reference
    finds bad), the others some of another kind too."""
    clean = draw(st.integers(0, 3)) > 0

    def value(kind: str) -> str:
        odd = not clean and draw(st.integers(0, 20)) == 0
        return draw(OTHER_KIND[kind] if odd else RIGHT_KIND[kind])

    def one(right: list, other: list):
        return draw(st.sampled_from(right if clean else right + other))

    members = []
    records = one(["10", "10", "0", "-5", "null", None], ['"3"', "1.0"])
    if records is not None:
        members.append(f'"numRecords": {records}')
    tight = one([None, None, "true", "false"], ["null", '"yes"'])
    if tight is not None:
        members.append(f'"tightBounds": {tight}')
    for key in ("minValues", "maxValues", "nullCount"):
        form = one(["object"] * 8 + ["absent", "null"], ["number"])
        if form == "absent":
            continue
        if form != "object":
            members.append(f'"{key}": {"null" if form == "null" else "5"}')
            continue
        inner = []
        for name, kind in LEAVES.items():
            if draw(st.integers(0, 4)) == 0:
                continue
            inner.append(f"{json.dumps(name)}: {value('count' if key == 'nullCount' else kind)}")
        if draw(st.booleans()):
            a, z = (("count", "count") if key == "nullCount" else ("int", "string"))
            inner.append('"st": ' + one(["{" + f'"a": {value(a)}, "z": {value(z)}' + "}"] * 4
                                        + ["null", "{}"], ["5"]))
        if key == "nullCount" and draw(st.booleans()):
            inner.append(f'"arr": {value("count")}')
        if not clean and draw(st.integers(0, 5)) == 0:  # a column twice: the last wins
            inner.append(inner[0] if inner else '"i64": 1')
        members.append(f'"{key}": {{' + ", ".join(inner) + "}")
    if draw(st.integers(0, 9)) == 0:
        members.append('"extra": {"deep": [1, {"x": "y"}], "n": -0.5e3, "s": "\\u00e9"}')
    return "{" + ", ".join(members) + "}"


@st.composite
def texts(draw):
    """A stats value as an add action carries it: mostly an object's text, sometimes broken
    or not text at all."""
    text = draw(objects())
    how = draw(st.sampled_from(["as is"] * 40 + [
        "cut", "newline", "carriage return", "blank", "null", "two objects", "array",
        "leading space", "trailing garbage", "absent", "number", "object", "spaced"]))
    if how == "cut":
        return text[:draw(st.integers(0, len(text)))]
    if how == "newline":
        at = draw(st.integers(0, len(text)))
        return text[:at] + "\n" + text[at:]
    if how == "carriage return":
        at = draw(st.integers(0, len(text)))
        return text[:at] + "\r" + text[at:]
    return {"blank": "  \t ", "null": "null", "two objects": text + " " + text,
            "array": "[" + text + "]", "leading space": " " + text,
            "trailing garbage": text + " x", "absent": None, "number": 5,
            "object": {"numRecords": 3}, "spaced": text.replace(":", " : ")}.get(how, text)


VECTORS = st.one_of(st.none(), st.none(), st.integers(0, 12), st.just(-1))


#: the columns without decimals: a table with decimals has its bulk files' texts read by
#: Python's ``json`` too, which would hide a text Arrow reads and Python does not
NO_DECIMALS = [f for f in FIELDS
               if not (isinstance(f["type"], str) and f["type"].startswith("decimal"))]


@settings(max_examples=60)
@given(files=st.lists(st.tuples(texts(), VECTORS), min_size=1, max_size=14),
       decimals=st.booleans())
def test_bulk_reading_is_the_reference_reading(tmp_path_factory, files, decimals):
    root = _write(str(tmp_path_factory.mktemp("bulk") / "t"), [t for t, _ in files],
                  [v for _, v in files], None if decimals else NO_DECIMALS)
    bulk, reference, _ = _both(root, _Opened)
    assert bulk == reference


# ------------------------------------------------------------------------------ framing


GOOD = ('{"numRecords": 3, "minValues": {"i64": 1, "s": "a"}, "maxValues": {"i64": 9, '
        '"s": "k"}, "nullCount": {"i64": 0, "s": 1}}')


@pytest.mark.parametrize("bad", [
    "  ", "null", "", '{} {"numRecords": 99}', '{"numRecords": 1}\n{"numRecords": 99}',
    '{"numRecords": 1}\r{"numRecords": 99}', '{"numRecords": 1}}{"numRecords": 99',
    '{"minValues": {"i64": "x"}}', '{"numRecords": 1, "numRecords": 2}', "[1]",
    '{"numRecords": -NaN}', '{"minValues": {"d": Inf}}', '{"tightBounds": null}',
    '{"tight\\u0042ounds": null, "nullCount": {"i64": 2}}', "{", '{"a": "\\ud800"}'])
def test_a_text_that_cannot_be_framed_shifts_no_other_file(tmp_path, bad):
    """Each odd text among good ones: the good files keep their own statistics, read in bulk
    (only the odd file is left to the reference), and all agree with the reference."""
    others = [GOOD.replace("9", str(k)) for k in range(2, 9)]
    root = _write(str(tmp_path / "t"), others[:3] + [bad] + others[3:], fields=NO_DECIMALS)
    bulk, reference, slow = _both(root, _Opened)
    assert bulk == reference
    assert slow <= 1
    maxs = [row["max_values"]["i64"] for row in bulk[0]]
    assert maxs[:3] + maxs[4:] == [repr(k) for k in range(2, 9)]


def test_every_good_file_is_read_in_bulk(tmp_path):
    """Statistics as writers shape them never reach the reference (which would cost per
    value): every type, nested structs, Spark's and delta-rs's number forms."""
    good = ('{"numRecords": 10, "tightBounds": true, "minValues": {"b": false, "i8": -128, '
            '"i16": 3, "i32": 4, "i64": -9223372036854775808, "f": 0.1, "d": -0.0, '
            '"dw": 3.4, "dec": 1.50, "dec38": 12345678901234567890.1234567890, '
            '"s": "caf\\u00e9", "day": "2024-02-29", "ts": "2024-01-02T03:04:05.123Z", '
            '"tsn": "2024-01-02T03:04:05.123", "bin": "x", "st": {"a": 1, "z": "a"}}, '
            '"maxValues": {"b": true, "i8": 127, "i16": 3, "i32": 4, '
            '"i64": 9223372036854775807, "f": 3.4028235e38, "d": 1e308, "dw": 3.4, '
            '"dec": 99999999.99, "dec38": 1.5E+23, "s": "' + "z" * 40 + '", '
            '"day": "9999-12-31", "ts": "2024-01-02T09:04:06+05:30", '
            '"tsn": "2024-01-02T03:04:05.123456Z", "bin": "y", "st": {"a": 2, "z": "b"}}, '
            '"nullCount": {"b": 0, "i8": 10, "i16": 1, "i32": 0, "i64": 0, "f": 0, "d": 0, '
            '"dw": 0, "dec": 0, "dec38": 0, "s": 0, "day": 0, "ts": 0, "tsn": 0, "bin": 2, '
            '"st": {"a": 0, "z": 1}, "arr": 3}}')
    root = _write(str(tmp_path / "t"), [good] * 5, [None, 2, None, 0, None])
    bulk, reference, slow = _both(root)
    assert bulk == reference and slow == 0 and not bulk[3]
    assert bulk[0][1]["min_values"]["dec38"] == "Decimal('12345678901234567890.1234567890')"


def test_columns_sharing_a_physical_name_are_read_by_the_reference(tmp_path):
    """Two columns mapped to one physical name cannot be laid out for Arrow's reader: every
    file goes to the reference, which reads both from the one name."""
    mapped = [field("x", "long", {"delta.columnMapping.id": 1,
                                  "delta.columnMapping.physicalName": "col-1"}),
              field("y", "long", {"delta.columnMapping.id": 2,
                                  "delta.columnMapping.physicalName": "col-1"})]
    root = _write(str(tmp_path / "t"), ['{"numRecords": 2, "minValues": {"col-1": 4}}'] * 3,
                  fields=mapped)
    bulk, reference, slow = _both(root)
    assert bulk == reference and slow == 3
    assert [r["min_values"] for r in bulk[0]] == [{"x": "4", "y": "4"}] * 3


# ------------------------------------------------------------------------------ the log


PATHS = ["a.parquet", "b.parquet", "c%20d.parquet", "e/f.parquet"]
STATS_VALUES = st.one_of(st.sampled_from(['{"numRecords": 1}', "{}", "", "not json", None]),
                         st.text(max_size=12), st.integers(0, 3), st.just({"numRecords": 2}))
CARDINALITIES = st.one_of(st.none(), st.integers(-1, 5), st.sampled_from(
    ["2", 1.5, True, 2 ** 64, "absent"]))


@st.composite
def log_lines(draw) -> bytes:
    """A line of a commit: an add (of a few paths, stats and deletion vectors of any shape),
    a remove, commit info, or a corrupt line."""
    kind = draw(st.sampled_from(["add"] * 6 + ["remove", "info", "corrupt"]))
    if kind == "corrupt":
        return draw(st.sampled_from([
            b"{not json", b'{"add": 5}', b'{"add": {"path": 3}}', b'{"add": null}',
            b'{"add": {"path": "a.parquet", "stats": "\xff"}}', b"[1, 2]", b"",
            b'{"add": {"path": "\\ud800.parquet"}}', b'{"add": {"path": "b.parquet"}} x',
            '{"add": {"path": "a.parquet", "stats": "{\\"s\\": \\"\u2028\\"}"}}'.encode(),
            b'{"add": {"path": "a.parquet"}, "add": {"path": "b.parquet"}}']))
    if kind == "info":
        return b'{"commitInfo": {"operation": "WRITE", "n": [1, {"x": null}]}}'
    path = draw(st.sampled_from(PATHS))
    if kind == "remove":
        return json.dumps({"remove": {"path": path, "deletionTimestamp": 1}}).encode()
    add = {"path": path, "size": 1, "dataChange": True}
    stats = draw(STATS_VALUES)
    if stats is not None:
        add["stats"] = stats
    cardinality = draw(CARDINALITIES)
    if cardinality is not None:
        add["deletionVector"] = {"storageType": "u", "pathOrInlineDv": "x", "sizeInBytes": 1}
        if cardinality != "absent":
            add["deletionVector"]["cardinality"] = cardinality
    elif draw(st.integers(0, 9)) == 0:
        add["deletionVector"] = draw(st.sampled_from([None, "x", 5, []]))
    return json.dumps({"add": add}).encode()


def _added(root: str, version: int) -> dict:
    from prune_engine.stats.delta_log import live_adds
    return {p: (a.stats, a.deletion_vector) for p, a in live_adds(root, version, PATHS).items()}


@settings(max_examples=80)
@given(commits=st.lists(st.lists(log_lines(), max_size=8), min_size=1, max_size=4),
       newline=st.sampled_from([b"\n", b"\r\n"]))
def test_the_log_read_by_arrow_is_the_log_read_line_by_line(tmp_path_factory, commits,
                                                           newline):
    """The adds Arrow's JSON reader finds in the commits are those the line reader finds
    (the newest add of a path holds; a corrupt line loses only itself)."""
    from prune_engine.stats import delta_log
    root = str(tmp_path_factory.mktemp("log") / "t")
    os.makedirs(os.path.join(root, "_delta_log"))
    for version, lines in enumerate(commits):
        with open(os.path.join(root, "_delta_log", f"{version:020d}.json"), "wb") as out:
            out.write(newline.join(lines) + newline)
    for version in range(len(commits)):
        by_arrow = _added(root, version)
        with pytest.MonkeyPatch.context() as m:
            m.setattr(delta_log, "read_json_lines", lambda data, schema: None)
            assert _added(root, version) == by_arrow


# ------------------------------------------------------------------------------ regressions


def test_counts_beyond_int64_are_impossible_not_a_crash(tmp_path):
    """A row or null count past int64 (no file holds that many rows) is unknown with a
    warning; the reference reader used to hand it to Arrow and crash with OverflowError."""
    texts = ['{"numRecords": -5, "nullCount": {"i64": 9223372036854775808}}',
             '{"numRecords": 18446744073709551616, "minValues": {"i64": 1}}',
             '{"numRecords": 3, "minValues": {"i64": 1}, "maxValues": {"i64": 2}}']
    root = _write(str(tmp_path / "t"), texts)
    bulk, reference, slow = _both(root, _Opened)
    assert bulk == reference and slow == 2
    rows, _, metadata, warned = bulk
    assert [r["num_records"] for r in rows] == ["None", "None", "3"]
    assert rows[0]["null_count"]["i64"] == "None" and len(warned) == 2
    assert sorted(p.rsplit("/", 1)[-1] for p in metadata["untrusted_statistics"]) == \
        ["f0.parquet", "f1.parquet"]


def test_a_line_separator_inside_a_statistic_keeps_its_line(tmp_path):
    """U+2028 is a character like any other inside a JSON string, and a Delta commit is one
    action per ``\\n``-ended line: a string min holding it is read (the line reader used to
    split lines at it, lose the add, and refuse the table)."""
    value = "a\u2028b"
    stats = json.dumps({"numRecords": 1, "minValues": {"s": value}, "maxValues": {"s": value},
                        "nullCount": {"s": 0}}, ensure_ascii=False)
    root = _write(str(tmp_path / "t"), [stats])
    with open(os.path.join(root, "_delta_log", f"{0:020d}.json"), "rb") as log:
        assert "\u2028".encode() in log.read()  # written raw, as delta-rs and Spark write it
    for bulk_off in (False, True):
        with pytest.MonkeyPatch.context() as m:
            if bulk_off:
                from prune_engine.stats import delta_log
                m.setattr(delta_log, "read_json_lines", lambda data, schema: None)
            stats_table = pe.stats_from_delta(root)
        assert stats_table.column("min_values").to_pylist()[0]["s"] == value
        assert stats_table.column("max_values").to_pylist()[0]["s"] == value


def _checkpoint(root: str, adds: pa.Array) -> None:
    """A log whose only file is checkpoint 0, holding the ``add`` column ``adds``."""
    import pyarrow.parquet as pq
    os.makedirs(os.path.join(root, "_delta_log"))
    pq.write_table(pa.table({"add": adds}),
                   os.path.join(root, "_delta_log", f"{0:020d}.checkpoint.parquet"))


def test_a_checkpoint_with_text_that_is_not_utf8(tmp_path):
    """Parquet's reader does not check UTF-8: an add whose stats are not UTF-8 is handed back
    as its bytes (not a JSON string, so unknown), the others as written (the reader used to
    raise UnicodeDecodeError)."""
    from prune_engine.stats.delta_log import live_adds
    stats = pa.array([b'{"numRecords": 1}', b'{"numRecords": \xff}', b'{"numRecords": 3}'],
                     pa.binary()).view(pa.string())
    vectors = pa.array([None, None, {"cardinality": 1}], pa.struct([("cardinality", pa.int64())]))
    adds = pa.StructArray.from_arrays([pa.array(["a", "b", "c"]), stats, vectors],
                                      names=["path", "stats", "deletionVector"])
    _checkpoint(str(tmp_path / "t"), adds)
    found = live_adds(str(tmp_path / "t"), 0, ["a", "b", "c"])
    assert {p: (a.stats, a.deletion_vector) for p, a in found.items()} == {
        "a": ('{"numRecords": 1}', None), "b": (b'{"numRecords": \xff}', None),
        "c": ('{"numRecords": 3}', {"cardinality": 1})}


def test_a_checkpoint_whose_columns_have_other_types(tmp_path):
    """Columns not of the protocol's types (stats as integers, a cardinality as text) are
    read value by value and handed back as written, for the reader of statistics to judge."""
    from prune_engine.stats.delta_log import live_adds
    adds = pa.StructArray.from_arrays(
        [pa.array(["a", "b", None]), pa.array([5, None, 7]),
         pa.array([{"cardinality": "two"}, None, None], pa.struct([("cardinality", pa.string())]))],
        names=["path", "stats", "deletionVector"])
    _checkpoint(str(tmp_path / "t"), adds)
    found = live_adds(str(tmp_path / "t"), 0, ["a", "b"])
    assert {p: (a.stats, a.deletion_vector) for p, a in found.items()} == {
        "a": (5, {"cardinality": "two"}), "b": (None, None)}


def test_a_null_line_does_not_crash_the_reader(tmp_path):
    """Arrow's JSON reader kills the process (SIGSEGV, pyarrow 26) on a line ``null`` at the
    start of one of its blocks: such a text never reaches it (a commit whose first line is
    ``null`` is read line by line, a stats text ``null`` by the reference). Run in a child
    process, so that a crash fails this test instead of ending the run."""
    root = tmp_path / "t"
    (root / "_delta_log").mkdir(parents=True)
    add = json.dumps({"add": {"path": "a.parquet", "stats": "null"}})
    (root / "_delta_log" / f"{0:020d}.json").write_text("null\n" + add + "\n\rnull\n")
    code = f"""
import pyarrow as pa
from prune_engine.stats.delta_log import live_adds, parse_objects, read_json_lines
assert live_adds({str(root)!r}, 0, ["a.parquet"])["a.parquet"].stats == "null"
assert read_json_lines(b"null\\n{{}}\\n", pa.schema([("x", pa.int64())])) is None
assert read_json_lines(b"{{}}\\r null\\n", pa.schema([("x", pa.int64())])) is None
rows, table = parse_objects(pa.array(["null", "{{}}", " null"]), pa.schema([("x", pa.int64())]))
assert rows.tolist() == [1], rows
print("read")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=os.getcwd(), timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "read", done.stderr[-2000:]


def test_the_newest_add_of_a_path_holds(tmp_path):
    """A deletion vector attached later (Spark's DELETE: a remove and a new add of the same
    path, in a later commit) replaces the first add: its rows and its vector count. Within a
    commit, the later line holds."""
    root = str(tmp_path / "t")
    os.makedirs(os.path.join(root, "_delta_log"))
    first = json.dumps({"numRecords": 10, "minValues": {"i64": 1}, "maxValues": {"i64": 9},
                        "nullCount": {"i64": 0}})
    later = first.replace('"i64": 9', '"i64": 7')
    vector = {"storageType": "u", "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb", "offset": 1,
              "sizeInBytes": 36, "cardinality": 2}
    add = {"path": "a.parquet", "partitionValues": {}, "size": 1, "modificationTime": 0,
           "dataChange": True}
    fields = json.dumps({"type": "struct", "fields": [field("i64", "long")]})
    commits = [
        [{"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                       "readerFeatures": ["deletionVectors"],
                       "writerFeatures": ["deletionVectors"]}},
         {"metaData": {"id": "x", "format": {"provider": "parquet", "options": {}},
                       "schemaString": fields, "partitionColumns": [], "configuration": {},
                       "createdTime": 0}},
         {"add": {**add, "stats": first}}, {"add": {**add, "path": "b.parquet", "stats": first}},
         {"add": {**add, "path": "b.parquet", "stats": later}}],
        [{"remove": {"path": "a.parquet", "deletionTimestamp": 1, "dataChange": True}},
         {"add": {**add, "stats": later, "deletionVector": vector}}]]
    for version, actions in enumerate(commits):
        with open(os.path.join(root, "_delta_log", f"{version:020d}.json"), "w") as out:
            out.write("\n".join(json.dumps(a) for a in actions) + "\n")
    stats = pe.stats_from_delta(root)
    by_path = {p.rsplit("/", 1)[-1]: (n, hi["i64"]) for p, n, hi in zip(
        stats.column("path").to_pylist(), stats.column("num_records").to_pylist(),
        stats.column("max_values").to_pylist())}
    assert by_path == {"a.parquet": (8, 7), "b.parquet": (10, 7)}
    assert [p.rsplit("/", 1)[-1] for p in stats.metadata["delta"]["deletion_vectors"]] == \
        ["a.parquet"]
    assert pe.stats_from_delta(root, version=0).column("num_records").to_pylist() == [10, 10]


def test_the_commits_statistics_are_read_while_deltalake_opens_the_table(tmp_path):
    """The statistics of the commits' adds are parsed with the schema the commits' newest
    metaData records, while deltalake opens the table, in one parse. Commits without a
    metaData (after a checkpoint) wait for deltalake's schema: then one parse of all the
    files, from the commits and the checkpoint. Each reading is the reference's."""
    from deltalake import write_deltalake
    root = str(tmp_path / "t")
    for k in range(3):
        write_deltalake(root, pa.table({"x": pa.array([k, k + 5], pa.int64()),
                                        "s": [f"k{k}", None]}), mode="append")
    calls = []

    def spy(texts, schema):
        calls.append(len(texts))
        return parse_objects(texts, schema)

    readings = []
    for step in ("commits", "checkpoint"):
        if step == "checkpoint":
            DeltaTable(root).create_checkpoint()
            write_deltalake(root, pa.table({"x": pa.array([9], pa.int64()), "s": ["z"]}),
                            mode="append")
        calls.clear()
        with pytest.MonkeyPatch.context() as m:
            m.setattr(delta_module, "parse_objects", spy)
            readings.append(_read(root))
        assert calls == ([3] if step == "commits" else [4]), (step, calls)
        bulk, reference, _ = _both(root)
        assert bulk == reference == readings[-1]
    before, after = readings
    added = [r for r in after[0] if r not in before[0]]
    assert len(after[0]) == 4 and [r["max_values"]["x"] for r in added] == ["9"]
