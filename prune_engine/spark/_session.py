"""Classic and Connect sessions: what prune_engine asks of a session, answered for both.

A classic session runs in this process's JVM (py4j): the file relation under a DataFrame, its
listing and root paths can be read there. A Spark Connect session (``SparkSession.builder
.remote(...)``: Spark 4 clients, Databricks' shared clusters and serverless) is a gRPC client
of a remote driver: only what Connect exposes can be asked (a DataFrame's schema, its input
files, the metrics of its last run). Each question here has one answer per kind of session.

Columns must be built by the session's own ``functions`` module: in a process that also runs
a classic session, ``pyspark.sql.functions.col`` builds classic Columns, which a Connect
DataFrame rejects.
"""

from __future__ import annotations

import contextlib
import os
import re
from urllib.parse import unquote


def is_connect(spark) -> bool:
    """Whether ``spark`` (a session or a DataFrame) is a Spark Connect one."""
    spark = getattr(spark, "sparkSession", spark)
    return getattr(spark, "_jsparkSession", None) is None


def functions(spark):
    """``pyspark.sql.functions`` for the kind of session ``spark`` (session or DataFrame) is."""
    if is_connect(spark):
        from pyspark.sql.connect import functions as F
    else:
        from pyspark.sql import functions as F
    return F


@contextlib.contextmanager
def setting(spark, values: dict[str, str], before: dict[str, str | None] | None = None):
    """The session's SQL settings ``values`` inside the block, then back to what they were
    (``before``, when already read; None: unset)."""
    conf = spark.conf
    before = before if before is not None else {k: conf.get(k, None) for k in values}
    for key, value in values.items():
        conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            conf.unset(key) if value is None else conf.set(key, value)


def settings(spark, keys: list[str]) -> dict[str, str]:
    """The values of the session's SQL settings ``keys`` (each with a default in Spark): on
    Spark Connect in one request rather than a round trip each."""
    if is_connect(spark):
        try:
            from pyspark.sql.connect import proto

            operation = proto.ConfigRequest.Operation(get=proto.ConfigRequest.Get(keys=keys))
            pairs = spark.client.config(operation).pairs
            if [k for k, _ in pairs] == keys:
                return {k: v for k, v in pairs}
        except Exception:  # noqa: BLE001 - a key this Spark does not know: one by one
            pass
    return {k: _setting(spark, k) for k in keys}


def sql_settings(spark) -> frozenset | None:
    """Every ``spark.sql.*`` setting the session has set, as ``(key, value)`` pairs; None
    where they cannot be asked for (a Spark Connect client older than 4.0)."""
    if is_connect(spark):
        if getattr(type(spark.conf), "getAll", None) is None:
            return None
        every = spark.conf.getAll  # a property on Connect
        every = every() if callable(every) else every
    else:
        every = java_map(spark, spark._jsparkSession.conf().getAll())
    return frozenset((k, v) for k, v in every.items() if k.startswith("spark.sql."))


def _setting(spark, key: str) -> str | None:
    try:
        return spark.conf.get(key)  # its default when not set
    except Exception:  # noqa: BLE001 - a setting this Spark does not have
        return None


def session_key(spark) -> str:
    """One name per Spark application and session kind (cache keys)."""
    spark = getattr(spark, "sparkSession", spark)
    if is_connect(spark):
        return f"connect:{spark.session_id}"
    return f"classic:{id(spark.sparkContext._jsc)}"


def jvm_class(spark, name: str):
    """The JVM class ``name`` (``"scala.collection.immutable.ArraySeq"``) of a classic session,
    for its static methods: one proxy per gateway, made without walking ``spark._jvm.scala.
    collection...`` (each step of that walk is a round trip to the JVM)."""
    from py4j.java_gateway import JavaClass

    client = getattr(spark, "sparkSession", spark).sparkContext._gateway._gateway_client
    key = (id(client), name)
    found = _CLASSES.get(key)
    if found is None or found[0] is not client:
        found = _CLASSES[key] = (client, JavaClass(name, client))
    return found[1]


#: (gateway client id, class name) -> (the client, its class proxy)
_CLASSES: dict = {}


def joined(spark, items, sep: str = "\u0000") -> list[str]:
    """The strings of a Scala collection (a ``Seq``, a map's ``keys``), crossed from the JVM as
    one string: one round trip instead of one per item. Items must not hold ``sep``."""
    text = str(items.mkString(sep))
    return text.split(sep) if text or items.nonEmpty() else []


def java_map(spark, scala_map) -> dict[str, str]:
    """A Scala ``Map[String, String]`` as a dict: its keys and values in one string each."""
    keys, values = joined(spark, scala_map.keys()), joined(spark, scala_map.values())
    if len(keys) == len(values) == scala_map.size():
        return dict(zip(keys, values))
    out, entries = {}, scala_map.iterator()  # a key or value holds the NUL: entry by entry
    while entries.hasNext():
        entry = entries.next()
        out[str(entry._1())] = str(entry._2())
    return out


def jvm_lines(spark, seq, size: int) -> list[str] | None:
    """The ``size`` strings of a Scala ``Seq[String]`` of a classic session, written by the
    JVM to a temporary file, one a line, and read here: py4j sends a long string at a few
    megabytes a second (2,000 file URIs: 44 ms; through the file: 2 ms). None where that
    cannot be done (Scala 2.12) or a string holds a line break."""
    import tempfile

    gateway = getattr(spark, "sparkSession", spark).sparkContext._gateway
    fd, path = tempfile.mkstemp(prefix="prune_engine-", suffix=".txt")
    os.close(fd)
    try:
        lines = jvm_class(spark, "scala.jdk.javaapi.CollectionConverters").asJava(seq)
        target = jvm_class(spark, "java.nio.file.Paths").get(
            path, gateway.new_array(gateway.jvm.java.lang.String, 0))
        jvm_class(spark, "java.nio.file.Files").write(
            target, lines, gateway.new_array(gateway.jvm.java.nio.file.OpenOption, 0))
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except Exception:  # noqa: BLE001 - Scala 2.12: no CollectionConverters
        return None
    finally:
        os.unlink(path)
    out = text.split(os.linesep)[:-1] if text else []
    return out if len(out) == size else None


def partition_names(df) -> set[str]:
    """The names of the partition columns Spark discovered for a DataFrame read from files
    (``k=v`` folders), as they appear in ``df.columns``."""
    if not is_connect(df):
        from prune_engine.spark._catalyst import partition_names as relation_partitions
        from prune_engine.spark._source import file_relation

        return relation_partitions(file_relation(df))
    return folder_partitions(df.inputFiles(), df.columns)


def folder_partitions(files: list[str], columns: list[str]) -> set[str]:
    """Partition columns read off file URIs: the ``name=`` folders that every file has and
    that name a column (Spark's discovery, case-insensitively)."""
    if not files:
        return set()
    by_lower = {c.lower(): c for c in columns}
    common = None
    for folder in {uri.rsplit("/", 1)[0] for uri in files}:
        folders = unquote(folder).split("/")
        names = {m.group(1).lower() for f in folders if (m := re.match(r"([^=]+)=", f))}
        common = names if common is None else common & names
    return {by_lower[c] for c in (common or ()) if c in by_lower}
