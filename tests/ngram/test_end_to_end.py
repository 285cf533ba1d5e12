"""Through the public API: stats_from_arrow(ngram=...) then pe.prune / pe.explain."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

import prune_engine as pe
from tests.ngram.ngram_cases import Duck, random_containers, random_like

PAGES = ["cart", "checkout", "search", "home", "about", "login"]


def _url_containers():
    """Four containers with the same min/max range; only one has 'checkout' URLs."""
    out = []
    for i, pages in enumerate([["cart", "home"], ["checkout", "home"], ["search", "login"],
                               ["about", "cart"]]):
        urls = [f"https://a.example/{p}/{k}" for p in pages for k in range(20)]
        urls += ["https://a.example/", "https://z.example/"]  # same bounds everywhere
        out.append(pa.table({"url": urls}))
    return out


def test_like_contains_is_pruned_by_the_index_where_min_max_cannot():
    stats = pe.stats_from_arrow(_url_containers(), ngram=["url"])
    assert pe.prune(stats, "url LIKE '%checkout%'").to_pylist() == [False, True, False, False], (
        "min/max are equal in every container; only the index can prune")
    explained = pe.explain(stats, "url LIKE '%checkout%'")
    assert explained.column("reason").to_pylist()[0] == "url LIKE '%checkout%'"
    assert pe.prune(stats, "url NOT LIKE '%checkout%'").to_pylist() == [True] * 4, (
        "NOT LIKE never prunes by the index")
    assert pe.prune(stats, "regexp_matches(url, 'check(out|in)/1')").to_pylist() == [
        False, True, False, False]


def test_ilike_uses_the_folded_set_only_when_built():
    tables = [pa.table({"msg": ["User LOGIN ok"]}), pa.table({"msg": ["cache miss"]})]
    plain = pe.stats_from_arrow(tables, ngram=["msg"])
    folded = pe.stats_from_arrow(tables, ngram=["msg"], ngram_case_insensitive=True)
    assert pe.prune(plain, "msg ILIKE '%login%'").to_pylist() == [True, True]
    assert pe.prune(folded, "msg ILIKE '%login%'").to_pylist() == [True, False]


@pytest.mark.parametrize("seed", range(40))
def test_prune_is_sound_against_duckdb(seed):
    rng = random.Random(seed)
    containers = [rows for rows in random_containers(rng) if rows]
    if not containers:
        return
    tables = [pa.table({"s": pa.array(rows, pa.string())}) for rows in containers]
    stats = pe.stats_from_arrow(tables, ngram=["s"], ngram_case_insensitive=True)
    duck = Duck()
    for kind in ("like", "ilike"):
        pattern, escape = random_like(rng, containers)
        if escape and pattern.endswith(escape) and not pattern.endswith(escape * 2):
            continue
        truth = duck.matching(containers, kind, pattern, escape)
        if truth is None:
            continue
        lit = pattern.replace("'", "''")
        sql = f"s {kind.upper()} '{lit}'" + (f" ESCAPE '{escape}'" if escape else "")
        try:
            mask = np.asarray(pe.prune(stats, sql).to_pylist())
        except pe.SqlParseError:
            continue  # the SQL front end does not read this literal; not the index's concern
        assert not np.any(truth & ~mask), f"{sql} pruned a container holding a match"
