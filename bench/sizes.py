"""How large a suite's lake is: an environment variable, else quick or full mode."""

from __future__ import annotations

import os


def lake_files(config, env_var: str, full: int, quick: int) -> int:
    """A suite's number of files: ``env_var`` when set, else ``quick`` under
    ``--bench-rounds`` (``bench/run.py --quick``) or ``full``."""
    if env_var in os.environ:
        return int(os.environ[env_var])
    return quick if config.getoption("--bench-rounds") is not None else full
