"""A batch's words numbered at once (engine.index_words) against the per-file oracles: each
field counted as TermNumbering.count counts it, each declaration's document as
engine.units.analyse_units lists it, each declaration's name words once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from engine.analyse import Analyser, analyse_batch, analyse_file
from engine.focus import header_last_lines
from engine.index_words import BatchWords, FileWords, TermNumbering, number_words
from engine.levels import split_lines
from engine.model import FIELDS, ParsedFile, SourceFile
from engine.tokens import load_tokenizer
from engine.units import analyse_units, file_identifiers

FILES = {
    "pkg/console.py": (
        '"""The console."""\n\nimport os\n\n\nclass Console:\n    """A terminal console."""\n\n'
        "    def get_size(self) -> int:\n        return os.get_terminal_size().columns\n\n\n"
        "def _private_helper(console_width):\n    return console_width * 2  # 404 getSize\n"
    ),
    "docs/guide.md": "# Install guide\n\nRun make install.\n\n## On Linux\n\nUse apt.\n",
    "stop.md": "# A\n\nB c.\n",  # declarations with no index word at all
    "empty.py": "",
    "src/naïve.go": "package main\n\n// Greet says hi.\nfunc Greet(名前 string) string {\n"
    '\treturn "hi " + 名前 // getHTTPResponse2\n}\n',
    "lib/util.rs": "pub fn rotate_all(items: &mut Vec<u8>) {\n    items.rotate_left(1);\n}\n",
}


LANGUAGES = {"py": "python", "md": "markdown", "go": "go", "rs": "rust"}


@pytest.fixture(scope="module")
def analyser() -> Analyser:
    return Analyser.create(load_tokenizer("o200k_base"))


def _analysed(tmp_path: Path, analyser: Analyser) -> list[tuple[str, FileWords, SourceFile]]:
    """Each of FILES written and analysed: its text, its words and its source."""
    out = []
    for path, text in FILES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
        language = LANGUAGES[path.rsplit(".", 1)[-1]]
        source = SourceFile(path, len(text.encode()), 0, language)
        result = analyse_file(str(tmp_path), source, analyser)
        assert isinstance(result, tuple), path  # analysed, not skipped
        out.append((text, result[1], source))
    return out


def _per_file(words: BatchWords, name: str) -> list[list[object]]:
    sizes = {
        "term": words.term_rows,
        "declaration": words.declaration_rows,
        "unit": words.unit_words,
        "unit_rows": words.unit_declarations,
    }[name]
    ends = np.cumsum(sizes).tolist()
    return [list(range(start, end)) for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def test_a_batch_counts_each_field_as_counting_each_file_alone_does(
    tmp_path: Path, analyser: Analyser
) -> None:
    files = _analysed(tmp_path, analyser)
    numbering = analyser.numbering
    words = number_words([w for _, w, _ in files], numbering, limit=1_000_000)
    oracle = TermNumbering()  # its own ids: compare by word
    for (text, file_words, source), rows in zip(files, _per_file(words, "term"), strict=True):
        got = Counter(
            {(FIELDS[words.fields[r]], numbering.words[words.terms[r]]): int(words.counts[r])
             for r in rows}
        )  # fmt: skip
        expected: Counter[tuple[str, str]] = Counter()
        for field, said in zip([f for f in FIELDS if f != "body"], file_words.fields, strict=True):
            for term, n in oracle.count_identifiers(said).items():
                expected[(field, oracle.words[term])] += n
        for term, n in oracle.count([text]).items():
            expected[("body", oracle.words[term])] += n
        assert got == expected, source.path
        body = sum(n for (field, _), n in expected.items() if field == "body")
        assert words.body_length[files.index((text, file_words, source))] == body
    assert any(field == "exported" for field in (FIELDS[f] for f in words.fields))


def test_a_batch_gives_each_declaration_the_document_analyse_units_gives(
    tmp_path: Path, analyser: Analyser
) -> None:
    files = _analysed(tmp_path, analyser)
    numbering = analyser.numbering
    words = number_words([w for _, w, _ in files], numbering, limit=1_000_000)
    unit_rows = _per_file(words, "unit_rows")
    units = _per_file(words, "unit")
    assert words.unit_declarations == [len(w.declarations) for _, w, _ in files]
    parser = analyser.parser
    for k, (text, _, source) in enumerate(files):
        structure = parser.parse(text, source.language, source.path)
        parsed = ParsedFile(source.path, source.language, 0, 0, "0" * 40, 0, 0,
                            structure.declarations, structure.imports)  # fmt: skip
        lines = split_lines(text)
        found = file_identifiers(parsed, text, lines, header_last_lines(parsed))
        oracle = TermNumbering()
        expected, _ = analyse_units(parsed, found, lines, oracle.count_identifiers)
        got_words = [numbering.words[t] for t in words.unit_terms[units[k]].tolist()]
        assert got_words == [oracle.words[t] for t in expected.words], source.path
        assert words.unit_tf[units[k]].tolist() == expected.tf.tolist()
        assert words.unit_rows[unit_rows[k]].tolist() == expected.rows.tolist()
    assert words.unit_tf.dtype == np.uint8 and words.unit_tf.shape == (len(words.unit_terms), 3)


def test_a_batch_posts_each_word_of_a_declarations_name_once(
    tmp_path: Path, analyser: Analyser
) -> None:
    files = _analysed(tmp_path, analyser)
    numbering = analyser.numbering
    words = number_words([w for _, w, _ in files], numbering, limit=1_000_000)
    for (_, file_words, source), rows in zip(files, _per_file(words, "declaration"), strict=True):
        got = sorted(
            (int(words.declaration_positions[r]), numbering.words[words.declaration_terms[r]])
            for r in rows
        )
        oracle = TermNumbering()
        expected = sorted(
            (position, oracle.words[term])
            for position, (name, _, _) in enumerate(file_words.declarations)
            for term in set(oracle.count_identifiers(name))
        )
        assert got == expected, source.path
    assert words.declaration_rows[0] > 0  # console.py declares Console, get_size, ...


def test_forgetting_the_identifiers_changes_no_word(tmp_path: Path, analyser: Analyser) -> None:
    """A numbering that forgets its identifiers before every batch (the memory bound) gives
    the same rows, in the same ids, as one that remembers them all."""
    files = [w for _, w, _ in _analysed(tmp_path, analyser)]
    remembering, forgetting = TermNumbering(), TermNumbering()
    for _ in range(3):
        kept = number_words(files, remembering, limit=1_000_000)
        again = number_words(files, forgetting, limit=0)
        for name in BatchWords.__dataclass_fields__:
            left, right = getattr(kept, name), getattr(again, name)
            assert np.array_equal(np.asarray(left), np.asarray(right)), name
    number_words(files[:1], forgetting, limit=0)
    assert set(forgetting.rows) == set(files[0].body).union(*files[0].fields)


def test_an_empty_batch_and_a_batch_of_empty_files_give_empty_arrays(
    tmp_path: Path, analyser: Analyser
) -> None:
    words = number_words([], TermNumbering(), limit=10)
    assert words.term_rows == [] and len(words.terms) == 0 and words.unit_tf.shape == (0, 3)
    (tmp_path / "a.txt").write_text("")
    batch = analyse_batch(str(tmp_path), [SourceFile("a.txt", 0, 0, "text")], analyser)
    assert batch.analysed.term_rows == [0] and batch.analysed.body_length == [0.0]
    assert batch.analysed.unit_words == [0] and batch.analysed.declaration_rows == [0]


def test_a_full_part_memory_starts_again_and_gives_the_same_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The remembered normalised parts are bounded (PART_CACHE_LIMIT): past it they are
    forgotten, and every identifier still gets the words `identifier_words` gives it."""
    from engine import index_words
    from engine.words import identifier_words

    monkeypatch.setattr(index_words, "PART_CACHE_LIMIT", 3)
    numbering = TermNumbering()
    names = ["getUserSession", "loadConfig", "the_handlers", "HTTPServer", "getUserSession"]
    numbering.learn(names)
    for name in names:
        assert [numbering.words[t] for t in numbering.words_of(name)] == identifier_words(name)
    remembered = numbering.normalise.__self__  # type: ignore[attr-defined]
    assert 0 < len(remembered) <= 3
