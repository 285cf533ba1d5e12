"""Execute the notebooks in place, so that they are committed with their outputs (``make notebooks``).

    python notebooks/execute.py                      # every notebook in notebooks/
    python notebooks/execute.py notebooks/spark.ipynb

Each notebook runs top to bottom in a fresh ``python3`` kernel with ``notebooks/`` as its working
directory, and is written back with its outputs (matplotlib figures as PNG), plain execution
counts, no timing metadata, and the hash of its code cells in ``metadata.prune_engine``:
``tests/test_notebooks.py`` compares that hash with the code cells of the committed notebook,
so a notebook whose code changed without being executed again fails the tests.

Outputs must not depend on the machine: a notebook prints no absolute paths and no timings
(the notebooks' seeds are fixed). Paths under this checkout, the home directory or the
temporary directory that slip through are replaced by ``.``, ``~`` and ``<tmp>``; an output
that still names this machine (its host name, an absolute path under ``/tmp``, ``/home``, ...)
stops the run before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CELL_TIMEOUT_S = 600
METADATA_KEY = "prune_engine"
#: absolute paths that name a machine's directories (checked in every output)
MACHINE_PATH = re.compile(r"(?<![\w.~])/(?:tmp|var/folders|private|home|Users|root|work|mnt)/")


def code_hash(nb) -> str:
    """sha256 of the notebook's code cells, in order (what ``metadata.prune_engine`` records)."""
    code = [cell.source for cell in nb.cells if cell.cell_type == "code"]
    return hashlib.sha256(json.dumps(code, ensure_ascii=False).encode("utf-8")).hexdigest()


def output_texts(nb):
    """Every text of every output (stream text, each mime type's data except images, errors)."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                yield out.text
            elif out.output_type == "error":
                yield "\n".join([out.ename, out.evalue, *out.traceback])
            else:
                for mime, data in out.get("data", {}).items():
                    if not mime.startswith("image/"):
                        yield data if isinstance(data, str) else json.dumps(data)


def machine_names(nb) -> list[str]:
    """What in the outputs names a machine: absolute machine paths, this host's name."""
    host = socket.gethostname()
    host_word = re.compile(rf"\b{re.escape(host)}\b") if len(host) > 3 else None
    found = []
    for text in output_texts(nb):
        found += MACHINE_PATH.findall(text)
        if host_word is not None and host_word.search(text):
            found.append(host)
    return found


def _scrub(text: str) -> str:
    for path, name in [(str(ROOT), "."), (os.path.realpath(tempfile.gettempdir()), "<tmp>"),
                       (tempfile.gettempdir(), "<tmp>"), (str(Path.home()), "~")]:
        if len(path) > 1:
            text = text.replace(path, name)
    return text


def scrub(nb) -> None:
    """Replace this checkout's, the temporary and the home directory in every text output."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.output_type == "stream":
                out.text = _scrub(out.text)
            elif out.output_type == "error":
                out.evalue = _scrub(out.evalue)
                out.traceback = [_scrub(t) for t in out.traceback]
            else:
                for mime, data in out.get("data", {}).items():
                    if isinstance(data, str) and not mime.startswith("image/"):
                        out.data[mime] = _scrub(data)


def execute(path: Path, write: bool = True):
    """Run the notebook at ``path``; write it back with its outputs (see the module doc).
    Returns the executed notebook."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    # output written to the kernel's file descriptors by other processes (the JVM's log lines,
    # with their times and this host's name) stays out of the notebook
    NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", record_timing=False,
                   extra_arguments=["--IPKernelApp.capture_fd_output=False"],
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    scrub(nb)
    nb.metadata.get("language_info", {}).pop("version", None)  # the patch release of the kernel
    nb.metadata[METADATA_KEY] = {"code_sha256": code_hash(nb)}
    if write:
        errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
        if errors:
            raise SystemExit(f"{path.name}: {errors[0].ename}: {errors[0].evalue}")
        named = machine_names(nb)
        if named:
            raise SystemExit(f"{path.name}: the outputs name this machine ({', '.join(set(named))}):"
                             " print relative paths")
        nbformat.write(nb, path)
    return nb


def main(argv: list[str]) -> int:
    paths = [Path(p).resolve() for p in argv] or sorted(HERE.glob("*.ipynb"))
    for path in paths:
        t0 = time.perf_counter()
        execute(path)
        print(f"{path.relative_to(ROOT)}: executed in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
