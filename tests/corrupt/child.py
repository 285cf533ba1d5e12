"""The child process of the corrupt-input fuzzer: runs mutants one after the other.

``python -m tests.corrupt.child ROOT LABEL...`` makes and runs each mutant (:mod:`.targets`)
on the corpus at ``ROOT``, printing ``start LABEL`` before it and ``done {json}`` after it,
flushed, so that the parent (:mod:`.driver`) knows which mutant a crash or a hang happened
in. (``PE_CORRUPT_PLANTED`` plants faults, for the harness's own test: :func:`plant`.)
Its memory is capped (:data:`MEMORY_BYTES`), so that a count read as 2**40 fails as an
allocation (an exception, judged as any other) rather than taking the machine's memory.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import shutil
import signal
import sys
import time
from pathlib import Path

#: the address space a child may use
MEMORY_BYTES = 8 * 2**30
#: environment variable of planted faults, ``{label: kind}``: the harness's own test shows
#: that each kind of finding is seen (:func:`plant`)
PLANTED = "PE_CORRUPT_PLANTED"


def plant(kind: str, mutant):
    """Instead of running ``mutant``, the fault ``kind``: "crash" (SIGSEGV), "hang", a stage
    raising a foreign "exception" or a refusal whose "message" spans two lines, or "pass"
    (a stage that works)."""
    from prune_engine.errors import StatsError
    from tests.corrupt import targets

    if kind == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if kind == "hang":
        time.sleep(3600)
    run = targets.Run(mutant)
    error = KeyError("planted") if kind == "exception" else StatsError("planted\nrefusal") \
        if kind == "message" else None

    def stage():
        if error is not None:
            raise error

    run.stage("planted", stage, names=("planted",))
    return run


def main(argv: list[str]) -> int:
    root, labels = Path(argv[0]), argv[1:]
    faulthandler.enable()  # a crash prints the Python stack it happened under, on stderr
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_BYTES if hard == resource.RLIM_INFINITY else min(MEMORY_BYTES, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))

    from tests.corrupt import corpus, targets

    inputs = targets.Inputs(root, corpus.load(root))
    work = root / "work" / str(os.getpid())
    planted = json.loads(os.environ.get(PLANTED, "{}"))
    print("ready", flush=True)
    for label in labels:
        print("start", label, flush=True)
        mutant = targets.make_mutant(label, inputs)
        if label in planted:
            run = plant(planted[label], mutant)
        else:
            run = targets.run_mutant(mutant, inputs, work)
        result = run.to_json()
        for finding in result["findings"]:
            finding["first"] = labels[0]
        print("done", json.dumps(result), flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
