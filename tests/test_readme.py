"""The README's code runs: its blocks, in document order, against the demo lake.

Every ```python block is executed, all in one namespace, and every ``prune-engine`` command of
a ```bash block is run through ``prune_engine.cli.main`` (the other side of a pipe in a
shell), in a temporary working directory that holds the demo lake at ``lake/`` (``make_lake``
with the demo's sizes, as ``prune-engine demo`` writes it). A block that uses ``spark`` gets
the tests' shared ``local[2]`` session; as that session's JVM and Python workers run in the
directory they were started in, not in this one, the block's relative paths that exist here
(``"lake/"``) are made absolute before it runs (a reader's Spark starts where their Python runs).

A block that cannot run here (an S3 bucket, a catalog, minutes of benchmarks, ``make``) says
so right before it, in an HTML comment that does not render:

    <!-- not run: needs an S3 bucket -->
    ```python

Nothing is skipped silently: a block that is neither runnable (Python, or shell lines that
are all ``prune-engine`` commands) nor marked with a reason fails, and so does a marker that
is not right before a block. A marked Python block must still compile.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"<!--\s*not run:(?P<reason>.*?)-->", re.S)
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^\s`]*)")
PYTHON = {"python", "py", "python3"}
SHELL = {"bash", "sh", "shell", "console"}
TEXT = {"", "text"}  # diagrams and file trees


@dataclass
class Block:
    line: int            # of the opening fence, 1-based
    lang: str
    code: str
    not_run: str | None  # the reason given in the marker right before the block

    def __str__(self) -> str:
        return f"README.md:{self.line} ({self.lang or 'text'} block)"


def readme_blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith(m["fence"]):
            end += 1
        marker = MARKER.fullmatch(lines[i - 1].strip()) if i else None
        blocks.append(Block(i + 1, m["lang"].lower(), "\n".join(lines[i + 1:end]),
                            marker["reason"].strip() if marker else None))
        i = end + 1
    return blocks


def shell_commands(code: str) -> list[list[list[str]]]:
    """The commands of a shell block: each a pipeline, a list of argument lists."""
    commands = []
    for line in code.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        pipeline, part = [], []
        for w in words:
            if w == "|":
                pipeline.append(part)
                part = []
            else:
                part.append(w)
        commands.append(pipeline + [part])
    return commands


def why_not_runnable(block: Block) -> str | None:
    """Why an unmarked block cannot run here; None if it can."""
    if block.lang in PYTHON or block.lang in TEXT:
        return None
    if block.lang in SHELL:
        for pipeline in shell_commands(block.code):
            if pipeline[0][:1] != ["prune-engine"]:
                return f"the command {' '.join(pipeline[0])!r} is not a prune-engine command"
        return None
    return f"the test does not know how to run a {block.lang!r} block"


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))


def test_every_block_runs_or_says_why_not():
    text = README.read_text(encoding="utf-8")
    assert [b for b in BLOCKS if b.lang in PYTHON and b.not_run is None], "no Python block runs"
    assert len(MARKER.findall(text)) == sum(b.not_run is not None for b in BLOCKS), \
        "a '<!-- not run: ... -->' marker must be the line right before the block it marks"
    for block in BLOCKS:
        if block.not_run is not None:
            assert block.not_run, f"{block}: say why it is not run: <!-- not run: <reason> -->"
            if block.lang in PYTHON:  # not run, but still Python
                compile(block.code, str(block), "exec")
            continue
        reason = why_not_runnable(block)
        assert reason is None, (f"{block}: {reason}: make it runnable against the demo lake, "
                                "or mark it with <!-- not run: <reason> --> right before it")


def test_pictures_the_readme_shows_exist():
    text = README.read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert pictures
    for picture in pictures:
        assert "://" in picture or (ROOT / picture).is_file(), f"README shows {picture}: missing"


@pytest.fixture
def demo_lake_dir(tmp_path):
    """A directory with the demo lake at ``lake/``."""
    from prune_engine.demo import make_lake

    make_lake(tmp_path / "lake")
    return tmp_path


def _uses_spark(block: Block) -> bool:
    tree = ast.parse(block.code, str(block))
    return any(isinstance(n, ast.Name) and n.id == "spark" for n in ast.walk(tree))


class _AbsolutePaths(ast.NodeTransformer):
    """String constants naming a file or folder under ``root`` by a relative path become
    absolute paths."""

    def __init__(self, root: Path):
        self.root = root

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, str) and self._names_a_file(node.value):
            return ast.copy_location(ast.Constant(str(self.root / node.value)), node)
        return node

    def _names_a_file(self, text: str) -> bool:
        if not text or text.startswith("/") or "://" in text or "\n" in text:
            return False
        try:
            return (self.root / text).exists()
        except (OSError, ValueError):  # not a name a file system takes
            return False


def _run_python(block: Block, namespace: dict, root: Path) -> None:
    tree = ast.parse(block.code, str(block))
    if _uses_spark(block):
        tree = ast.fix_missing_locations(_AbsolutePaths(root).visit(tree))
    exec(compile(tree, str(block), "exec"), namespace)  # noqa: S102 - the README's own code


def _run_shell(block: Block, workdir: Path) -> None:
    from prune_engine import cli

    for pipeline in shell_commands(block.code):
        argv = pipeline[0][1:]
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
        assert code == 0, f"{block}: prune-engine {shlex.join(argv)} exited {code}: {err.getvalue()}"
        text = out.getvalue()
        for rest in pipeline[1:]:
            done = subprocess.run(rest, input=text, capture_output=True, text=True, cwd=workdir,
                                  timeout=60)
            assert done.returncode == 0, f"{block}: {shlex.join(rest)}: {done.stderr}"
            text = done.stdout


@pytest.mark.spark
def test_readme_code_runs_on_the_demo_lake(demo_lake_dir, request, monkeypatch):
    runnable = [b for b in BLOCKS if b.not_run is None and b.lang not in TEXT]
    for block in runnable:
        reason = why_not_runnable(block)
        assert reason is None, f"{block}: {reason} (mark it: <!-- not run: <reason> -->)"
    namespace: dict = {"__name__": "readme"}
    if any(b.lang in PYTHON and _uses_spark(b) for b in runnable):
        # the shared session, started (if it is not yet) before the working directory moves
        namespace["spark"] = request.getfixturevalue("spark")
    monkeypatch.chdir(demo_lake_dir)
    for block in runnable:
        if block.lang in PYTHON:
            _run_python(block, namespace, demo_lake_dir)
        else:
            _run_shell(block, demo_lake_dir)
    assert (demo_lake_dir / "out.parquet").is_file()  # the CLI's scan wrote its result
