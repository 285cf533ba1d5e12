"""Object stores as the Spark session is configured to reach them.

Spark reads ``s3a://bucket/lake`` through Hadoop's S3A connector, configured by the session's
Hadoop settings (``fs.s3a.endpoint``, ``fs.s3a.access.key``, ``fs.s3a.secret.key``,
``fs.s3a.session.token``, ``fs.s3a.endpoint.region``, ``fs.s3a.connection.ssl.enabled``, and
their per-bucket forms ``fs.s3a.bucket.<bucket>.<key>``), set as ``spark.hadoop.fs.s3a.*`` or in
the cluster's ``core-site.xml``. prune_engine lists files and reads footers with pyarrow, so for
the ``s3a://``, ``s3n://`` and ``s3://`` roots of a source it builds a
``pyarrow.fs.S3FileSystem`` from those settings and registers it
(:func:`prune_engine.stats.filesystems.register`) in the driver and in the executors of its
statistics jobs: the files Spark reads are the files prune_engine reads, with the same
endpoint and credentials. Where the session sets none of them, pyarrow's own chain applies
(environment, ``~/.aws``, the instance's role), as it does for Hadoop's default provider.

Not translated: credential providers other than keys (``fs.s3a.aws.credentials.provider``
naming an assumed role, a custom class), other Hadoop filesystems' settings (``abfss://``,
``gs://``, ``hdfs://`` use pyarrow's own configuration: its environment variables and
defaults). A scheme pyarrow cannot open at all is reached through Spark
(:mod:`~prune_engine.spark._through_spark`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from prune_engine.spark._session import is_connect

#: Hadoop's S3 schemes
S3_SCHEMES = ("s3a", "s3n", "s3")
_KEYS = ("endpoint", "access.key", "secret.key", "session.token", "endpoint.region",
         "connection.ssl.enabled")


def session_filesystems(spark, names) -> dict:
    """Register, and return by prefix, a filesystem for each S3 bucket among ``names`` (paths
    or URIs) whose session settings say how to reach it (see the module doc)."""
    from prune_engine.stats.filesystems import register

    names = [names] if isinstance(names, str) else [str(x) for x in names]
    out = {}
    for name in names:
        parts = urlsplit(name)
        if parts.scheme not in S3_SCHEMES or not parts.netloc or parts.query:
            continue  # a URI with options (?endpoint_override=...) says it itself
        prefix = f"{parts.scheme}://{parts.netloc}/"
        if prefix in out:
            continue
        options = s3_options(_settings(spark, parts.netloc))
        if options is not None:
            import pyarrow.fs as pafs

            out[prefix] = pafs.S3FileSystem(**options)
            register(prefix, out[prefix], root=f"{parts.netloc}/")
    return out


def s3_options(settings: dict[str, str | None]) -> dict | None:
    """``pyarrow.fs.S3FileSystem`` arguments from S3A settings (``endpoint``, ``access.key``,
    ...; None: unset), or None when none is set.

    >>> s3_options({"endpoint": "http://127.0.0.1:9000", "access.key": "k",
    ...             "secret.key": "s", "endpoint.region": None})  # doctest: +NORMALIZE_WHITESPACE
    {'endpoint_override': '127.0.0.1:9000', 'scheme': 'http', 'access_key': 'k',
     'secret_key': 's'}
    >>> s3_options({"endpoint": None}) is None
    True
    """
    if not any(settings.get(k) for k in _KEYS):
        return None
    out: dict[str, str] = {}
    endpoint = settings.get("endpoint")
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else "//" + endpoint)
        out["endpoint_override"] = parts.netloc + parts.path.rstrip("/")
        ssl = (settings.get("connection.ssl.enabled") or "true").strip().lower() != "false"
        out["scheme"] = parts.scheme or ("https" if ssl else "http")
    for key, arg in (("access.key", "access_key"), ("secret.key", "secret_key"),
                     ("session.token", "session_token"), ("endpoint.region", "region")):
        if settings.get(key):
            out[arg] = settings[key]
    return out


def _settings(spark, bucket: str) -> dict[str, str | None]:
    """The S3A settings for ``bucket``: its per-bucket ones first, then the general ones."""
    read = _reader(spark)
    return {k: read(f"fs.s3a.bucket.{bucket}.{k}") or read(f"fs.s3a.{k}") for k in _KEYS}


def _reader(spark):
    """A Hadoop setting by key: the session's ``spark.hadoop.*`` conf, then (classic) the
    Hadoop configuration of its context (``core-site.xml`` included)."""
    hadoop = None if is_connect(spark) else spark.sparkContext._jsc.hadoopConfiguration()

    def read(key: str) -> str | None:
        value = spark.conf.get(f"spark.hadoop.{key}", None)
        if value is None and hadoop is not None:
            value = hadoop.get(key)
        return value

    return read
