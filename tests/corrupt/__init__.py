"""A fuzzer of corrupt input: real files the harness writes, mutated, fed to every entry point.

prune_engine reads files it did not write (Parquet footers, Bloom filters, dictionary pages,
Iceberg manifests) and files it wrote that may have been damaged since (saved statistics, the
n-gram indexes inside them), partly with numba kernels that do not check bounds. Whatever the
bytes, the library must refuse them with one of its own errors (a ``PruneEngineError``) whose
message is one line of at most 400 characters naming the file, and never crash or hang.
This package checks that.

Running it
----------
::

    python -m tests.corrupt --seed 123 --minutes 5      # or: make fuzz-corrupt SEED=123 MINUTES=5
    python -m tests.corrupt --seed 123 --count 2000     # a number of mutants, not a time
    python -m tests.corrupt --replay 123-456            # mutant 456 of seed 123, with tracebacks
    python -m tests.corrupt --replay 123-456 --after 123-400   # ... after 400..455, as it ran

It prints the seed and the command that reproduces the run first, then each finding on one
line as it is found (ending with the command that replays it), then a summary: mutants run
and per second, findings by kind, mutants by target, and where inputs were refused. It exits
with 1 when anything was found. ``tests/corrupt/test_fuzz.py`` runs a seeded slice of 300
mutants in CI (under a minute on 2 cores).

How it works
------------
1. :mod:`.corpus` writes the inputs afresh for the run, deterministically: two Parquet files
   (statistics, Bloom filters, dictionary pages, page checksums, nested and INT96 columns),
   their statistics saved in format 2 (with checksum) and format 1 (without), and a PyIceberg
   table in a SQLite catalog. The folder is ``<tmp>/pe-corrupt-<seed>``, the same for every
   run of a seed, so that the inputs are the same bytes, paths included (a second run of the
   same seed at the same time writes its own folder, and says so).
2. :mod:`.mutate` holds the operators: bit flips; overwrites with 0x00, 0xFF, 0x7F, 0x80;
   truncations; deletions; insertions; varints replaced by -1, 2**31, -2**40, ...; Thrift
   fields of a footer or page header replaced; Avro counts, lengths, schemas (a ``fixed`` of
   size -2**40) and block data; JSON nodes replaced, deleted, swapped or nested 3,000 deep;
   columns of a statistics table nulled, retyped or dropped.
3. :mod:`.targets` makes mutant ``<seed>-<index>`` from its label alone (the same label gives
   the same bytes) for one of ten targets, and runs the entry points a user would:
   ``collect_stats(..., bloom=True, dictionaries=True)`` then ``prune`` and ``classify``;
   ``stats_from_iceberg``; ``read_stats`` then ``prune``, ``classify``, ``aggregate``,
   ``scan``, ``update_stats`` and LIKE probes of the n-gram index. It judges what each stage
   raises.
4. :mod:`.driver` runs the mutants in batches, each batch in a child process
   (:mod:`.child`, memory capped), two at a time: a child says which mutant it starts and
   ends, so a crash (a signal) or a hang (no answer within the time limit: the child is
   killed) names its mutant, and the rest of the batch goes on in a new child.

Findings
--------
``crash``
    the child died (e.g. SIGSEGV: a kernel read outside its buffer); the replay shows the
    Python stack at the crash (``faulthandler``).
``hang``
    one mutant ran past ``--timeout`` seconds (30 by default).
``exception``
    a stage raised an exception that is not a ``PruneEngineError`` (``KeyError``,
    ``ArrowInvalid``, ``RecursionError``, ...).
``message``
    a refusal whose message has a line break or more than 400 characters, or, in a stage
    that reads the mutated input (``collect_stats``, ``stats_from_iceberg``, ``read_stats``),
    names no file of the input.

A crash may need the state an earlier mutant left in the process (a cache, or memory an
out-of-bounds write damaged): each finding names the first mutant its process ran, and
``--replay ... --after ...`` runs them again in one process when the mutant alone does not
reproduce.

Adding a target: write its mutant maker and its stages in :mod:`.targets`, give it a weight
in :data:`.targets.WEIGHTS`, and its inputs in :mod:`.corpus`.
"""
