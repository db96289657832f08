"""Count some files of an index again with another tokenizer, without parsing anything.

Switching the encoding must feel instant: the files on show are counted again here (one
encode per file; the declarations and level costs follow from the per-line sums), while a
full index in the new encoding is built elsewhere. Files not counted keep the counts of the
old encoding, which differ by a few per cent, until that full index replaces this one; their
records are not even decoded (the index's file table decodes records on first read).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, overload

from engine.analyse import with_token_counts
from engine.model import Index, ParsedFile

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engine.tokens import Tokenizer


def recount(index: Index, tokenizer: Tokenizer, texts: Mapping[str, str]) -> tuple[Index, int]:
    """Return `index` in the tokenizer's encoding with the files of `texts` counted again.

    Args:
        index: the index to count again; it is not changed.
        tokenizer: the tokenizer of the new encoding.
        texts: path -> current text of the files to count. A path the index does not hold,
            or a text whose line count differs from the indexed file (changed on disk since),
            is skipped: a refresh will parse it.

    Returns:
        The new index and how many files were counted.
    """

    ptr = index.line_tokens_ptr
    counted: dict[int, ParsedFile] = {}
    runs: dict[int, npt.NDArray[np.int32]] = {}
    for path, text in texts.items():
        file_id = index.path_ids.get(path)
        if file_id is None:
            continue
        prefix = tokenizer.line_prefix_counts(text)
        if len(prefix) != int(ptr[file_id + 1] - ptr[file_id]):
            continue
        counted[file_id] = with_token_counts(index.files[file_id], prefix)
        runs[file_id] = prefix.astype(index.line_tokens.dtype)
    line_tokens = index.line_tokens.copy()
    for file_id, run in runs.items():
        line_tokens[ptr[file_id] : ptr[file_id + 1]] = run
    recounted = replace(
        index,
        encoding=tokenizer.name,
        files=Recounted(index.files, counted),
        line_tokens=line_tokens,
        # a new identity for the memos of typed rankings, keyed on this array: their scores
        # read the files' token counts (the damping of huge files), which are new here
        git_age_days=index.git_age_days.copy(),
    )
    return recounted, len(counted)


class Recounted(Sequence[ParsedFile]):
    """An index's files with some records counted again (the others read as they were)."""

    def __init__(self, files: Sequence[ParsedFile], counted: Mapping[int, ParsedFile]) -> None:
        self._files = files
        self._counted = dict(counted)

    def __len__(self) -> int:
        return len(self._files)

    @overload
    def __getitem__(self, i: int) -> ParsedFile: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[ParsedFile]: ...

    def __getitem__(self, i: int | slice) -> ParsedFile | Sequence[ParsedFile]:
        if isinstance(i, slice):
            return tuple(self[n] for n in range(*i.indices(len(self._files))))
        if i < 0:
            i += len(self._files)
        found = self._counted.get(i)
        return found if found is not None else self._files[i]

    def __iter__(self) -> Iterator[ParsedFile]:
        return (self[n] for n in range(len(self._files)))
