"""``file_key``: its shortcut for Spark's local URIs gives what parsing the URI gives."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

from hypothesis import given, strategies as st

from prune_engine.spark._files import file_key, spark_file_path


def _parsed(uri: str) -> str:
    """The key by the general rule: the URI's path, percent-decoded and normalized."""
    return os.path.normpath(unquote(urlsplit(uri).path))


@given(st.sampled_from(["file:", "file://", "file:///", "file:////", "file://host"]),
       st.text(alphabet="ab/.%20?#é =", max_size=24))
def test_the_shortcut_agrees_with_parsing_the_uri(prefix, rest):
    uri = prefix + "/" + rest
    assert file_key(uri) == _parsed(uri)


@given(st.text(alphabet="ab/.% #?[]é=\t", min_size=1, max_size=24))
def test_sparks_form_of_a_local_file_comes_back_to_its_key(name):
    key = os.path.normpath("/data/" + name)
    assert file_key(spark_file_path(key)) == key


def test_a_relative_path_is_taken_from_the_working_folder_of_the_moment(tmp_path, monkeypatch):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        assert file_key("x/../f.parquet") == str(tmp_path / folder / "f.parquet")
