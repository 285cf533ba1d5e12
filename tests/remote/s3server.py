"""An S3 API on localhost for the tests: moto's server, started and stopped by them."""

from __future__ import annotations

import contextlib
import os

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

#: moto takes any keys; these are what the tests configure
KEY, SECRET, REGION = "testing", "testing", "us-east-1"


@contextlib.contextmanager
def aws_keys():
    """The AWS variables set to the keys the tests configure, for the block (restored
    after)."""
    env = {"AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
           "AWS_DEFAULT_REGION": REGION}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def s3_server():
    """``(endpoint "host:port", a pyarrow S3FileSystem on it that may create buckets)``."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"{host}:{port}"
        yield endpoint, pafs.S3FileSystem(access_key=KEY, secret_key=SECRET, region=REGION,
                                          scheme="http", endpoint_override=endpoint,
                                          allow_bucket_creation=True)
    finally:
        server.stop()


def write_lake(fs, bucket: str, local_root, tables: dict[str, pa.Table],
               row_group_size: int) -> None:
    """The same files (relative path -> table) in ``bucket/lake`` and under ``local_root``,
    plus Spark's ``_SUCCESS`` marker in the bucket."""
    fs.create_dir(bucket)
    for part, table in tables.items():
        pq.write_table(table, f"{bucket}/lake/{part}", filesystem=fs,
                       row_group_size=row_group_size)
        os.makedirs(os.path.dirname(os.path.join(local_root, part)), exist_ok=True)
        pq.write_table(table, os.path.join(local_root, part), row_group_size=row_group_size)
    with fs.open_output_stream(f"{bucket}/lake/_SUCCESS") as out:
        out.write(b"")
