"""How many examples a property test runs: its CI budget, times :data:`SCALE` under
``make fuzz`` (``HYPOTHESIS_PROFILE=fuzz``, ``FUZZ_SCALE``, default 10).

>>> examples(60) >= 60
True
"""

from __future__ import annotations

import os

FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
SCALE = int(os.environ.get("FUZZ_SCALE", "10")) if FUZZ else 1


def examples(n: int) -> int:
    """The example budget for a test whose CI budget is ``n``."""
    return n * SCALE
