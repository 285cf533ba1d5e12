"""N-gram index benchmarks (issue #4): build, probe, size, effect, Bloom FPR, first call.

Data: 1,000 containers x 10,000 strings of 20-60 characters, half URL-like, half log-like;
each container draws from one of 100 "themes" (a few dozen words each, Zipf-weighted), so that
a word is in some containers and not in others. Peers in the same run: the seed's design (a
Python set of gram strings per container, probed one container at a time) and DuckDB scanning
the strings with the same LIKE.

The build is also timed on high-entropy data (issue #10): 1,000 containers x 2,000 URL-like
strings of about 50 characters of random words and ids, so that nearly every gram of a
container is new and the entries are Bloom filters; all ASCII, and with about one character in
eight outside ASCII (``é``, ``ü``, ``日``, ``本``, an emoji), as in international URLs.

The size / false-positive trade-off (group ``ngram size vs fpr``): each kind of index (exact,
the default "auto", Bloom filters at several targets) built on the first 100 containers, with
its bytes per container and its measured false-positive rate per absent gram.

    python -m pytest bench/test_bench_ngram.py -q --benchmark-json=ngram.json
    python bench/test_bench_ngram.py          # the size / effect / FPR / first-call tables

``NGRAM_BENCH_CONTAINERS`` / ``NGRAM_BENCH_ROWS`` / ``NGRAM_BENCH_HIGH_ENTROPY_ROWS`` shrink the
data for a quick look.
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
import time

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from prune_engine.ngram.build import build_index, build_index_column
from prune_engine.ngram.probe import like_may_match

from first_call import first_call_seconds, measure

CONTAINERS = int(os.environ.get("NGRAM_BENCH_CONTAINERS", 1000))
ROWS = int(os.environ.get("NGRAM_BENCH_ROWS", 10_000))
THEMES = 100
BASELINE_CONTAINERS = 5  # the pure-Python peer is slow: measured on a few containers
LEVELS = ["INFO", "WARN", "ERROR", "DEBUG"]


@functools.lru_cache(maxsize=1)
def dataset() -> tuple[pa.Array, np.ndarray, list[list[str]]]:
    """(strings ordered by container, group offsets, words of each theme)."""
    rng = np.random.default_rng(4)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(4, 10))) for _ in range(3000)]
    vocab[:6] = ["checkout", "payment", "timeout", "search", "login", "refund"]
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 0.8
    weights /= weights.sum()
    themes, pools = [], []
    for t in range(THEMES):
        words = list(rng.choice(vocab, 40, replace=False, p=weights))
        themes.append(words)
        pool = []
        for k in range(2000):
            w = rng.choice(words, 3)
            if k % 2:
                s = f"https://shop{t % 7}.example.com/{w[0]}/{w[1]}/{rng.integers(1 << 24):06x}?q={w[2]}"
            else:
                s = f"{LEVELS[k % 4]} {w[0]} {w[1]} took {rng.integers(2000)}ms id={rng.integers(1 << 20)}"
            pool.append(s[:60])
        pools.append(pa.array(pool))
    chunks = []
    for c in range(CONTAINERS):
        chunks.append(pools[c % THEMES].take(pa.array(rng.integers(0, 2000, ROWS))))
    values = pa.concat_arrays(chunks)
    return values, np.arange(0, (CONTAINERS + 1) * ROWS, ROWS, dtype=np.int64), themes


#: code points of the high-entropy strings: letters, and the non-ASCII ones of the mixed kind
LETTERS = np.array([ord(c) for c in "abcdefghijklmnopqrstuvwxyz"], np.uint32)
OTHERS = np.array([ord(c) for c in "éü日本\U0001F600"], np.uint32)
#: their layout: "https://" word ".com/" word "/" word "/" word "?id=" digits (52 characters)
_LAYOUT = "https://______.com/_______/_____/________?id=#######"
HIGH_ENTROPY_ROWS = int(os.environ.get("NGRAM_BENCH_HIGH_ENTROPY_ROWS", 2000))


@functools.lru_cache(maxsize=2)
def high_entropy(non_ascii: bool) -> tuple[pa.Array, np.ndarray]:
    """(strings ordered by container, group offsets): random words and ids in a URL layout;
    with ``non_ascii``, one letter in eight is one of :data:`OTHERS`."""
    rng = np.random.default_rng(5)
    template = np.array([ord(c) for c in _LAYOUT], np.uint32)
    letters, digits = template == ord("_"), template == ord("#")
    chunks, rows = [], CONTAINERS * HIGH_ENTROPY_ROWS
    for start in range(0, rows, 100_000):  # 100k strings at a time: 20 MB of code points
        n = min(100_000, rows - start)
        cps = np.broadcast_to(template, (n, len(template))).copy()
        cps[:, letters] = LETTERS[rng.integers(0, len(LETTERS), (n, letters.sum()))]
        cps[:, digits] = rng.integers(ord("0"), ord("9") + 1, (n, digits.sum()))
        if non_ascii:
            swap = letters & (rng.random((n, len(template))) < 1 / 8)
            cps[swap] = OTHERS[rng.integers(0, len(OTHERS), swap.sum())]
        chunks.append(pa.array(cps.view(f"<U{len(template)}").ravel()))
    offsets = np.arange(0, (CONTAINERS + 1) * HIGH_ENTROPY_ROWS, HIGH_ENTROPY_ROWS, dtype=np.int64)
    return pa.concat_arrays(chunks), offsets


def build_data(kind: str) -> tuple[pa.Array, np.ndarray]:
    """The strings and container offsets of a build benchmark: ``repetitive`` (the themed
    data above), ``high-entropy-ascii`` or ``high-entropy-mixed``."""
    if kind == "repetitive":
        values, offsets, _ = dataset()
        return values, offsets
    return high_entropy(kind == "high-entropy-mixed")


@functools.lru_cache(maxsize=2)
def index(mode: str = "auto") -> pa.Array:
    values, offsets, _ = dataset()
    return build_index(values, offsets, mode=mode)


def _words_by_coverage(themes, targets=(0.03, 0.2, 0.6)) -> list[str]:
    cover: dict[str, int] = {}
    for words in themes:
        for w in dict.fromkeys(words):  # first-seen order: deterministic
            cover[w] = cover.get(w, 0) + 1
    ranked = sorted(cover, key=cover.get)
    return [min(ranked, key=lambda w: abs(cover[w] / len(themes) - t)) for t in targets]


def patterns() -> dict[str, str]:
    rare, mid, common = _words_by_coverage(dataset()[2])
    return {
        "prefix-rare": f"ERROR {rare}%", "prefix-common": f"INFO {common}%",
        "suffix-rare": f"%q={rare}", "suffix-common": f"%q={common}",
        "contains-rare": f"%{rare}%", "contains-mid": f"%{mid}%", "contains-common": f"%{common}%",
        "multi-3-literals": f"%{mid}%{common}%took%", "multi-underscore": f"%/{rare}/_%",
    }


def python_set_build(values: list[str], n: int = 3) -> set[str]:
    """The seed's design: the set of all gram strings of a container."""
    grams: set[str] = set()
    for v in values:
        grams.update(v[i:i + n] for i in range(len(v) - n + 1))
    return grams


def python_set_may_match(grams: set[str], literal: list[str], n: int = 3) -> bool:
    return all(run[i:i + n] in grams for run in literal for i in range(len(run) - n + 1))


# ----------------------------------------------------------------------------- build --------

@pytest.mark.parametrize("kind", ["repetitive", "high-entropy-ascii", "high-entropy-mixed"])
def test_build_numba(benchmark, rounds, kind):
    """The build on every CPU this process may use (threads), on each kind of data."""
    values, offsets = build_data(kind)
    build_index_column(values.slice(0, 100), np.array([0, 100]))  # load the kernels first
    benchmark.pedantic(build_index_column, (values, offsets), rounds=rounds(3), iterations=1)
    benchmark.extra_info["strings_per_ms"] = len(values) / (benchmark.stats["mean"] * 1e3)
    benchmark.extra_info["kind"] = kind


def test_build_python_set_seed_design(benchmark):
    values, _, _ = dataset()
    rows = values.slice(0, BASELINE_CONTAINERS * ROWS).to_pylist()
    benchmark.pedantic(lambda: [python_set_build(rows[i * ROWS:(i + 1) * ROWS])
                                for i in range(BASELINE_CONTAINERS)], rounds=1, iterations=1)
    benchmark.extra_info["strings_per_ms"] = len(rows) / (benchmark.stats["mean"] * 1e3)


# ----------------------------------------------------------------------------- probe --------

@pytest.mark.parametrize("scale", [1, 100], ids=["1k-containers", "100k-containers"])
def test_probe_numba_3_literals(benchmark, scale):
    idx = index("auto")
    big = idx if scale == 1 else pa.concat_arrays([idx] * scale) if CONTAINERS * scale <= 2000 \
        else _repeat(idx, scale)
    pattern = patterns()["multi-3-literals"]
    like_may_match(big, pattern)  # checksums verified once, then remembered
    mask = benchmark(like_may_match, big, pattern)
    benchmark.extra_info["ns_per_container"] = benchmark.stats["mean"] * 1e9 / len(mask)
    benchmark.extra_info["pruned_share"] = float(1 - mask.mean())


def _repeat(idx: pa.Array, times: int) -> pa.Array:
    """``times`` copies of the index entries in one array (distinct memory per copy)."""
    blobs = idx.to_pylist()
    return pa.array(blobs * times, pa.large_binary())


def test_probe_python_set_seed_design(benchmark):
    values, _, _ = dataset()
    rows = values.slice(0, BASELINE_CONTAINERS * ROWS).to_pylist()
    sets = [python_set_build(rows[i * ROWS:(i + 1) * ROWS]) for i in range(BASELINE_CONTAINERS)]
    literals = [r for r in patterns()["multi-3-literals"].split("%") if r]
    benchmark(lambda: [python_set_may_match(s, literals) for s in sets])
    benchmark.extra_info["ns_per_container"] = benchmark.stats["mean"] * 1e9 / len(sets)


def test_duckdb_scans_the_strings_with_like(benchmark, rounds):
    values, _, _ = dataset()
    con = duckdb.connect()
    con.execute("SET threads=1")
    strings = pa.table({"s": values})
    con.register("strings", strings)
    pattern = patterns()["multi-3-literals"]
    benchmark.pedantic(lambda: con.execute("SELECT count(*) FROM strings WHERE s LIKE ?",
                                           [pattern]).fetchall(), rounds=rounds(3), iterations=1)
    benchmark.extra_info["ns_per_container"] = benchmark.stats["mean"] * 1e9 / CONTAINERS


# ----------------------------------------------------------------------------- first call ---

#: the input is made before the clock starts: pyarrow's first ``pa.array`` imports pandas
#: (0.2 s), the user's cost of making data, not the engine's
FIRST_CALL = """
import time, numpy as np, pyarrow as pa
values = pa.array(["checkout"])
t = time.perf_counter()
from prune_engine.ngram.build import build_index_column
from prune_engine.ngram.probe import like_may_match
like_may_match(build_index_column(values, np.array([0, 1])), "%check%")
print(time.perf_counter() - t)
"""


#: "cold, one process": no helper process compiles the next kernels ahead (ngram/_ahead.py),
#: as on a machine with one CPU
@pytest.mark.parametrize("cache", ["cold, one process", "cold", "warm"])
def test_first_call_jit(benchmark, cache, tmp_path_factory):
    env = {"PRUNE_ENGINE_COMPILE_AHEAD": "0"} if cache == "cold, one process" else None
    measure(benchmark, FIRST_CALL, cache, "import + n-gram build + probe",
            tmp_path_factory.getbasetemp() / "numba_cache_ngram", env)


# ----------------------------------------------------------------------------- tables -------

def size_table() -> list[tuple]:
    values, offsets, _ = dataset()
    buf = io.BytesIO()
    pq.write_table(pa.table({"s": values}), buf, row_group_size=ROWS)
    parquet_per_container = buf.tell() / CONTAINERS
    rows = []
    for mode in ("exact", "bloom", "auto"):
        sizes = np.diff(np.frombuffer(index(mode).buffers()[1], np.int32)) if mode != "exact" else \
            np.array([len(b) for b in index(mode).to_pylist()])
        rows.append((mode, float(sizes.mean()), float(sizes.mean() / parquet_per_container)))
    return rows


def effect_table() -> list[tuple]:
    values, offsets, _ = dataset()
    con = duckdb.connect()
    con.register("t", pa.table({"cid": np.repeat(np.arange(CONTAINERS), ROWS), "s": values}))
    rows = []
    for name, pattern in patterns().items():
        truth = con.execute("SELECT count(DISTINCT cid) FROM t WHERE s LIKE ?", [pattern]).fetchone()[0]
        exact = like_may_match(index("exact"), pattern)
        bloom = like_may_match(index("auto"), pattern)
        assert exact.sum() >= truth and bloom.sum() >= truth, "a match was pruned"
        rows.append((name, pattern, 1 - truth / CONTAINERS, float(1 - exact.mean()),
                     float(1 - bloom.mean())))
    return rows


def sample(containers: int = 100) -> tuple[pa.Array, np.ndarray]:
    """The strings and offsets of the first ``containers`` containers of :func:`dataset`."""
    values, offsets, _ = dataset()
    sub = min(CONTAINERS, containers)
    return values.slice(0, int(offsets[sub])), offsets[:sub + 1]


def probe_grams(probes: int) -> list[str]:
    """``probes`` random 3-grams of letters, digits and URL punctuation (fixed seed)."""
    rng = np.random.default_rng(7)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz0123456789/=."))
    return ["".join(rng.choice(alphabet, 3)) for _ in range(probes)]


def false_positive_rate(index: pa.Array, exact: pa.Array, grams: list[str]) -> tuple[float, int]:
    """(share of the (absent gram, container) pairs where ``index`` says "maybe", number of
    such pairs); a gram is absent from a container where the ``exact`` index says so."""
    false = negatives = 0
    for g in grams:
        truth = like_may_match(exact, f"%{g}%")
        answer = like_may_match(index, f"%{g}%")
        negatives += int((~truth).sum())
        false += int((answer & ~truth).sum())
    return false / max(negatives, 1), negatives


def fpr_table(targets=(0.01, 0.05), probes: int = 300) -> list[tuple]:
    """Bloom false-positive rate per absent gram, against its target."""
    vals, offs = sample()
    exact = build_index(vals, offs, mode="exact")
    grams = probe_grams(probes)
    return [(fpp, *false_positive_rate(build_index(vals, offs, mode="bloom", fpp=fpp), exact,
                                       grams)) for fpp in targets]


#: the kinds of index of the size / false-positive trade-off: (mode, Bloom target)
INDEX_KINDS = [("exact", None), ("auto", 0.01), ("bloom", 0.2), ("bloom", 0.05), ("bloom", 0.01),
               ("bloom", 0.001)]


@pytest.mark.parametrize("mode, fpp", INDEX_KINDS,
                         ids=[m if f is None else f"{m}-{f:g}" for m, f in INDEX_KINDS])
def test_index_size_vs_fpr(benchmark, rounds, mode, fpp):
    """Build time, bytes per container (and as a share of the strings' own Parquet size) and
    the measured false-positive rate per absent gram of one kind of index (the exact index
    has none: 64-bit gram hashes)."""
    vals, offs = sample()
    build = functools.partial(build_index, vals, offs, mode=mode, fpp=fpp or 0.01)
    build()  # load the kernels
    index = benchmark.pedantic(build, rounds=rounds(3), iterations=1)
    rate, negatives = false_positive_rate(index, build_index(vals, offs, mode="exact"),
                                          probe_grams(300))
    buf = io.BytesIO()
    pq.write_table(pa.table({"s": vals}), buf)
    containers = len(offs) - 1
    benchmark.group = "ngram size vs fpr"
    benchmark.extra_info.update(
        mode=mode, fpp=fpp, fpr=rate, absent_pairs=negatives,
        bytes_per_container=pc.sum(pc.fill_null(pc.binary_length(index), 0)).as_py() / containers,
        parquet_bytes_per_container=buf.tell() / containers)


def main() -> None:
    print(f"data: {CONTAINERS} containers x {ROWS} strings")
    print("\nbuild (strings per ms, every CPU)")
    for kind in ("repetitive", "high-entropy-ascii", "high-entropy-mixed"):
        values, offsets = build_data(kind)
        build_index_column(values.slice(0, 100), np.array([0, 100]))
        start = time.perf_counter()
        build_index_column(values, offsets)
        print(f"  {kind:20s} {len(values) / (time.perf_counter() - start) / 1e3:8.0f}")
    print("\nsize (bytes per container, share of the column's Parquet size)")
    for mode, size, share in size_table():
        print(f"  {mode:6s} {size:10.0f} B  {share:7.2%}")
    print("\neffect (share of containers pruned)")
    print(f"  {'pattern':18s} {'optimal':>8s} {'exact':>8s} {'auto':>8s}  LIKE")
    for name, pattern, best, exact, auto in effect_table():
        print(f"  {name:18s} {best:8.1%} {exact:8.1%} {auto:8.1%}  {pattern}")
    print("\nBloom false-positive rate per absent gram")
    for fpp, rate, negatives in fpr_table():
        print(f"  target {fpp:.2%}: measured {rate:.2%} over {negatives} absent (gram, container)")
    with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as d1:
        cold = first_call_seconds(FIRST_CALL, d)
        warm = first_call_seconds(FIRST_CALL, d)
        alone = first_call_seconds(FIRST_CALL, d1, {"PRUNE_ENGINE_COMPILE_AHEAD": "0"})
    print(f"\nfirst call (import + build + probe in a fresh process): cold {cold:.1f} s "
          f"({alone:.1f} s in one process), warm cache {warm:.2f} s")


if __name__ == "__main__":
    main()
