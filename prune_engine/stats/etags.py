"""Objects' ETags from an S3 listing: what tells apart two writes of the same size in one second.

An object store sets an object's modification time itself, to the second, at every write. A
rewrite with the same size within the same second therefore keeps the identity that size and
modification time make, and statistics of the old content would be trusted for the new one.
The object's ETag changes with its content (the MD5 of a single-part upload, of the parts of
a multipart one; an opaque per-write tag under SSE-KMS), and every entry of an S3 listing
(``ListObjectsV2``) carries it, but pyarrow's listing drops it.

So where boto3 is installed (``pip install "prune_engine[s3]"``) and the filesystem is a
``pyarrow.fs.S3FileSystem`` (by URI, given, or built from a Spark session's ``fs.s3a.*``
settings), the folders being listed are listed once more with boto3, with the same endpoint,
region, addressing and keys, and each object's ETag joins its identity
(:func:`~prune_engine.stats.listing.SourceFile.identity`) as a number (:func:`etag_number`):
``[size, mtime_ns, etag]``. Without boto3, for other filesystems, and where boto3 cannot list
(an assumed role, a proxy: settings not translated; a request refused), the identity stays
size and modification time (:func:`object_etags` returns nothing for those folders, warning
once per bucket when a request failed), and identities that hold an ETag and ones that do not
agree on the fields both hold.

>>> etag = "9bb58f26192e4ba00f01e2e7b136bbd8"
>>> etag_number(f'"{etag}"') == etag_number(etag) < 2 ** 63
True
"""

from __future__ import annotations

import functools
import hashlib
import threading
import warnings
from typing import Any, Sequence

#: buckets whose ETags could not be listed (warned once each)
_WARNED: set[tuple] = set()
_LOCK = threading.Lock()


def etag_number(etag: str) -> int:
    """A non-negative 63-bit number of an ETag (its quotes dropped): identities hold numbers."""
    digest = hashlib.blake2b(etag.strip('"').encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def object_etags(filesystem: Any, folders: Sequence[str]) -> dict[str, int]:
    """``{path: etag_number}`` of every object under each of ``folders`` (paths on
    ``filesystem``, ``bucket/prefix``; a file's own path lists that object), by an S3 listing
    with boto3; empty where that cannot be done (see the module doc)."""
    config = _s3_config(filesystem)
    if config is None:
        return {}
    client = _client(config)
    if client is None:
        return {}
    out: dict[str, int] = {}
    for folder in folders:
        bucket, _, prefix = folder.strip("/").partition("/")
        try:
            out.update(_listed(client, bucket, prefix))
        except Exception as e:  # noqa: BLE001 - boto3's errors: no ETags, as without boto3
            _warn_once(config, bucket, e)
    return out


def folders_of(paths: Sequence[str]) -> list[str]:
    """The folders to list for the ETags of ``paths`` (files): their parents, without those
    under another (one recursive listing covers them).

    >>> folders_of(["b/lake/p=1/f.parquet", "b/lake/g.parquet", "b/lake/p=2/h.parquet"])
    ['b/lake']
    """
    parents = sorted({p.rsplit("/", 1)[0] for p in paths if "/" in p})
    out: list[str] = []
    for folder in parents:
        if not out or not folder.startswith(out[-1] + "/"):
            out.append(folder)
    return out


def _listed(client, bucket: str, prefix: str) -> dict[str, int]:
    """The ETags of the object ``prefix`` and of those under ``prefix/`` (all of the bucket's
    for an empty prefix)."""
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", ()):
            key = item["Key"]
            if (not prefix or key == prefix or key.startswith(prefix + "/")) and "ETag" in item:
                out[f"{bucket}/{key}"] = etag_number(item["ETag"])
    return out


def _s3_config(filesystem: Any) -> tuple | None:
    """The settings of a ``pyarrow.fs.S3FileSystem`` boto3 can follow, as a hashable tuple;
    None for another filesystem or one with settings not translated (a role, a proxy)."""
    import pyarrow.fs as pafs

    if not isinstance(filesystem, pafs.S3FileSystem):
        return None
    settings = filesystem.__reduce__()[1][0]  # what pyarrow pickles: its constructor's keywords
    proxy = settings.get("proxy_options") or {}
    if settings.get("role_arn") or (isinstance(proxy, dict) and proxy.get("host")):
        return None
    keys = ("access_key", "secret_key", "session_token", "anonymous", "region", "scheme",
            "endpoint_override", "force_virtual_addressing", "tls_ca_file_path")
    return tuple((k, settings.get(k) or None) for k in keys)


@functools.lru_cache(maxsize=64)
def _client(config: tuple):
    """A boto3 S3 client with the settings ``config`` names (None without boto3)."""
    try:
        import boto3
        import botocore
        import botocore.config
    except ImportError:
        return None
    s = dict(config)
    endpoint = s["endpoint_override"]
    if endpoint and "://" not in endpoint:
        endpoint = f"{s['scheme'] or 'https'}://{endpoint}"
    addressing = "virtual" if s["force_virtual_addressing"] else "path" if endpoint else "auto"
    options: dict[str, Any] = {"s3": {"addressing_style": addressing}}
    session = boto3.session.Session()
    credentials = {} if s["anonymous"] or not s["access_key"] else {
        "aws_access_key_id": s["access_key"], "aws_secret_access_key": s["secret_key"],
        "aws_session_token": s["session_token"]}
    if s["anonymous"] or (not credentials and session.get_credentials() is None):
        options["signature_version"] = botocore.UNSIGNED  # as pyarrow asks with no keys found
    return session.client(
        "s3", region_name=s["region"], endpoint_url=endpoint,
        verify=s["tls_ca_file_path"] or None, config=botocore.config.Config(**options),
        **credentials)


def _warn_once(config: tuple, bucket: str, error: Exception) -> None:
    where = (config, bucket)
    with _LOCK:
        if where in _WARNED:
            return
        _WARNED.add(where)
    warnings.warn(f"prune_engine: the ETags of s3 bucket {bucket!r} could not be listed "
                  f"({type(error).__name__}: {error}); its files are told apart by size and "
                  "modification time only (a rewrite of the same size within the same second "
                  "is not detected)", stacklevel=3)
