"""The files analysed in one run, kept column by column as their analyses arrive.

A first index of 16,000 files receives 16,000 analyses; keeping each as an object with its
own half-dozen small arrays costs memory and time, and all of it would wait in memory while
the index is assembled. `Fresh` keeps plain lists of numbers per column and one array per
batch of term rows, so each part can be consumed (and let go) by the step that needs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.analyse import Analysis
from engine.index import BODY

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.model import Import

COLUMNS = (
    "size", "tokens", "lines", "declarations", "outline_tokens", "focused_tokens", "role",
    "flags", "mtime_ns",
)  # fmt: skip
"""Analysis attributes kept as per-file number columns."""

Rows = tuple["npt.NDArray[np.int32]", "npt.NDArray[np.int32]", "npt.NDArray[np.int8]",
             "npt.NDArray[np.int32]"]  # fmt: skip
"""(file, term, field, count) arrays; files are positions in Fresh."""


@dataclass(slots=True)
class Fresh:
    """Analysed files in the order they arrived (path order), their words numbered in the
    index's vocabulary."""

    paths: list[str] = field(default_factory=list)
    """Position -> path."""
    languages: list[str] = field(default_factory=list)
    """Position -> language key."""
    columns: dict[str, list[int]] = field(default_factory=lambda: {c: [] for c in COLUMNS})
    """Column name (an Analysis attribute) -> value per position."""
    sha1: bytearray = field(default_factory=bytearray)
    """20 bytes per position."""
    body_length: list[float] = field(default_factory=list)
    """Body words per position."""
    records: list[bytes] = field(default_factory=list)
    """Stored declarations per position."""
    imports: list[tuple[Import, ...]] = field(default_factory=list)
    """Imports as written per position."""
    line_prefix: list[npt.NDArray[np.int32]] = field(default_factory=list)
    """Token prefix sums per line, per position."""
    units: list[tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8], npt.NDArray[np.int32]]] = field(
        default_factory=list
    )
    """(unit_terms, unit_tf, unit_rows) per position: each declaration's words."""
    uses: list[bytes] = field(default_factory=list)
    """Stored import uses per position."""
    _rows: list[Rows] = field(default_factory=list)
    _declarations: list[tuple[npt.NDArray[np.int32], ...]] = field(default_factory=list)
    _pending: list[Analysis] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.paths)

    def add(self, analysis: Analysis) -> None:
        """Keep one analysis (its term ids already the index's)."""
        self.paths.append(analysis.path)
        self.languages.append(analysis.language)
        for name, values in self.columns.items():
            values.append(getattr(analysis, name))
        self.sha1 += bytes.fromhex(analysis.sha1)
        self.body_length.append(float(analysis.counts[analysis.fields == BODY].sum()))
        self.records.append(analysis.record)
        self.imports.append(analysis.imports)
        self.line_prefix.append(analysis.line_prefix)
        self.units.append((analysis.unit_terms, analysis.unit_tf, analysis.unit_rows))
        self.uses.append(analysis.uses)
        self._pending.append(analysis)

    def end_batch(self) -> None:
        """Join the pending files' term rows and declaration postings into one array each."""
        import numpy as np  # deliberate: numpy loads with the index

        pending, self._pending = self._pending, []
        if not pending:
            return
        first = len(self.paths) - len(pending)
        files = np.arange(first, len(self.paths), dtype=np.int32)
        self._rows.append((
            np.repeat(files, [len(a.terms) for a in pending]),
            np.concatenate([a.terms for a in pending]),
            np.concatenate([a.fields for a in pending]),
            np.concatenate([a.counts for a in pending]),
        ))  # fmt: skip
        self._declarations.append((
            np.repeat(files, [len(a.declaration_terms) for a in pending]),
            np.concatenate([a.declaration_positions for a in pending]),
            np.concatenate([a.declaration_terms for a in pending]),
        ))  # fmt: skip

    def take_rows(self) -> Iterator[Rows]:
        """The term rows, batch by batch, each let go once taken."""
        self.end_batch()
        while self._rows:
            yield self._rows.pop(0)

    def take_declarations(self) -> Iterator[tuple[npt.NDArray[np.int32], ...]]:
        """(file, position, term) of the declaration postings, batch by batch."""
        self.end_batch()
        while self._declarations:
            yield self._declarations.pop(0)

    def release(self) -> None:
        """Let go of everything but the paths (once the index's arrays hold it all)."""
        self.languages.clear()
        self.columns = {}
        self.sha1 = bytearray()
        self.body_length.clear()
        self.records.clear()
        self.imports.clear()
        self.line_prefix.clear()
        self.units.clear()
        self.uses.clear()
        self._rows.clear()
        self._declarations.clear()
        self._pending.clear()
