"""Set-up of the benchmark suite: the import path and the ``--bench-sizes`` option.

Run the whole suite and turn its JSON into the ratio table::

    python -m pytest bench/test_bench_prune.py --benchmark-json=bench.json -q
    python bench/report.py bench.json

``--bench-sizes=1k,100k`` restricts the sizes (e.g. for a quick look).
"""

from __future__ import annotations

import sys
from pathlib import Path

# the bench modules import each other by plain name (``import peers``), whatever the import mode
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_addoption(parser):
    parser.addoption("--bench-sizes", default="1k,100k,1M",
                     help="comma-separated container counts to benchmark, from 1k, 100k, 1M")
