"""What the scan's page reader did: shared by the page-scan tests (pyarrow's and Spark's files)."""

from __future__ import annotations

from prune_engine.scanning import pages as page_reading


def whole_flat_reads(monkeypatch) -> list:
    """A list that records every flat leaf the page reader reads whole (its pages not used):
    ``(row group, leaves)``; empty when every flat column was read from its selected pages."""
    whole = page_reading._whole
    calls: list = []

    def spy(pf, rg, leaves, rows):
        if all(pf.schema.column(i).max_repetition_level == 0 for i in leaves):
            calls.append((rg, leaves))
        return whole(pf, rg, leaves, rows)

    monkeypatch.setattr(page_reading, "_whole", spy)
    return calls
