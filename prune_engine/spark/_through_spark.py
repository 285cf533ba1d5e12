"""Files that pyarrow cannot reach, listed and described through Spark's own filesystem layer.

prune_engine reads footers and file identities with pyarrow: local files, and the object
stores pyarrow reaches (``s3a://`` through the session's S3A settings, :mod:`._hadoop`;
``gs://``, ``abfss://``, ``hdfs://`` with pyarrow's own configuration). A scheme only Hadoop
knows (a ``viewfs://`` mount table, a vendor's connector, ``hdfs://`` on a driver without
libhdfs) is reached through Spark instead, with whatever configuration and credentials the
session has:

- the files and their identities (size and modification time, as Hadoop's ``FileStatus``
  gives them) come from Spark's listing, by the ``binaryFile`` source, which lists as the
  Parquet source does and reads no content (:func:`spark_identities`; a Spark job, about
  0.3 s for 2,000 files on ``local[2]``);
- statistics are an exact aggregation of the rows (:func:`collect_through_spark`, the one of
  :func:`~prune_engine.spark.stats_from_dataframe`): one container per file, never per row
  group, and no n-gram, Bloom or dictionary index (those read the bytes with pyarrow).

The same holds where pyarrow opens a filesystem but may not list its files (credentials only
the cluster's Hadoop configuration holds, such as an assumed role): the first refusal is a
warning, and the files under that ``scheme://authority/`` go through Spark from then on, in
this process (:func:`or_through_spark`).

A rewrite that keeps a file's size and modification time is not detected on such a scheme.

>>> reached_by_pyarrow("/data/lake/a.parquet")
True
"""

from __future__ import annotations

import functools
import warnings

from prune_engine.errors import StatsError
from prune_engine.spark._files import file_key, hadoop_path

#: how Spark lists for identities, which reads nothing: without asking each file's block
#: locations (a call per file for the tasks' locality: 6 s for 2,000 files through a
#: ``viewfs://`` mount, 0.1 s without), and with files that cost nothing to open, so that
#: they fill a task per core rather than a task per 31 files (0.7 s for 2,000 files, 0.3 s)
_LISTING = {"spark.sql.sources.ignoreDataLocality": "true",
            "spark.sql.files.openCostInBytes": "1"}

#: the ``scheme://authority/`` prefixes whose files pyarrow was refused (see the module doc)
_REFUSED: set[str] = set()


def reached_by_pyarrow(name: str) -> bool:
    """Whether pyarrow reaches the file or folder ``name`` (a path or a URI): a local one, or
    one under a registered filesystem (:func:`prune_engine.stats.filesystems.register`) or a
    scheme pyarrow (or fsspec) can open a filesystem for, unless pyarrow was refused there."""
    from prune_engine.stats.filesystems import is_remote_uri, registered

    if not is_remote_uri(name):
        return True
    prefix = _prefix(name)
    return prefix not in _REFUSED and (bool(registered([name])) or _opens(prefix))


def _prefix(uri: str) -> str:
    scheme, rest = uri.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}/"


@functools.lru_cache(maxsize=256)
def _opens(prefix: str) -> bool:
    from prune_engine.stats.filesystems import resolve

    try:
        resolve(prefix)
    except Exception:  # noqa: BLE001 - no filesystem (StatsError), no libhdfs (OSError), ...
        return False
    return True


def all_reached(roots) -> bool:
    """Whether pyarrow reaches every root of a source (paths or URIs; a pyarrow Dataset is
    reached by definition)."""
    if isinstance(roots, str):
        return reached_by_pyarrow(roots)
    if isinstance(roots, (list, tuple)):
        return all(reached_by_pyarrow(str(r)) for r in roots)
    return True


def or_through_spark(names, by_pyarrow, by_spark):
    """``by_pyarrow()`` where pyarrow reaches every one of ``names`` (paths or URIs), else,
    or when pyarrow is refused there (an ``OSError`` other than a missing file: the prefixes
    are remembered, with a warning), ``by_spark()``."""
    if all_reached(names):
        try:
            return by_pyarrow()
        except OSError as e:
            listed = names if isinstance(names, (list, tuple)) else [names]
            refused = sorted({_prefix(str(n)) for n in listed if "://" in str(n)})
            if not refused or isinstance(e, FileNotFoundError):  # a typo is not a refusal
                raise
            _REFUSED.update(refused)
            warnings.warn(f"pyarrow cannot list {', '.join(refused)} ({e}); Spark lists those "
                          "files and computes their statistics, per file, from now on",
                          stacklevel=3)
    return by_spark()


def spark_identities(spark, roots: list[str]) -> dict[str, tuple[int, int]]:
    """``(size, modification time in ms)`` of every file Spark lists under ``roots`` (file
    keys), by file key (see the module doc)."""
    from prune_engine.spark._arrow import to_arrow
    from prune_engine.spark._jobs import job_description
    from prune_engine.spark._session import setting

    with setting(spark, _LISTING), \
            job_description(spark, f"prune_engine: listing {', '.join(roots)}"):
        table = to_arrow(spark.read.format("binaryFile").option("recursiveFileLookup", "true")
                         .load([hadoop_path(r, literal=True) for r in roots])
                         .selectExpr("path", "length", "unix_millis(modificationTime) AS mtime"))
    return {file_key(p): (int(n), int(m)) for p, n, m in zip(
        table.column("path").to_pylist(), table.column("length").to_pylist(),
        table.column("mtime").to_pylist())}


def spark_identities_of(spark, keys: list[str], roots: list[str]) -> dict[str, tuple | None]:
    """:func:`spark_identities` of the files ``keys`` under ``roots`` (None: gone)."""
    if spark is None:
        raise StatsError(f"pyarrow cannot open {keys[0]} (no filesystem for its scheme), and "
                         "no Spark session was given to list it")
    found = spark_identities(spark, roots or keys)
    return {k: found.get(k) for k in keys}


def collect_through_spark(frame, roots, options: dict, identities: dict | None = None):
    """The statistics ``options`` ask for (as ``collect_part`` takes them), of the files
    ``frame`` reads (under ``roots``), aggregated by Spark (see the module doc);
    ``identities``: the files' identities by key, recorded for files without rows too (they
    have no container, so are read, and are not collected again while unchanged)."""
    from prune_engine.spark._aggregate import stats_from_dataframe

    asked = [] if options["granularity"] == "file" else ["row-group granularity"]
    asked += [name for name, key in (("n-grams", "ngram"), ("Bloom filters", "bloom"),
                                     ("dictionaries", "dictionaries")) if options[key]]
    if asked:
        raise StatsError(f"pyarrow cannot reach the files of {roots}: Spark computes their "
                         f"statistics from the rows, per file, so {' and '.join(asked)} cannot "
                         "be collected; ask for granularity='file' without indexes")
    stats = stats_from_dataframe(frame, options["columns"])
    stats.metadata["collect"] = {**options, "compute_missing": True}  # every column computed
    files = stats.metadata["files"]
    for key, (size, mtime_ms) in (identities or {}).items():
        files.setdefault(key, [size, mtime_ms * 1_000_000])
    return stats

