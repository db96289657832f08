"""Files of many one-line declarations in every fixture language, for the contract that less
detail never costs more (full >= focused >= outline, whoever sets the level).

One declaration in three is named for the question "import step"; the others are not. A
focused view of such a file keeps a few one-liners and marks the gaps between them, and its
outline repeats nearly every line: the cases where a level asked for by hand (a key in the
app, an MCP call) can cost more than a richer one.
"""

from __future__ import annotations

DECLARATIONS = 24
"""Declarations in each file."""
QUESTION = "import step"
"""Matches every third declaration."""


def _many(line: str, head: str = "", separator: str = "\n") -> str:
    """`line` once per declaration: `{Name}` is Import (every third) or Idle, `{name}` the
    same in lower case, `{i}` its number."""
    rows = (
        line.format(i=i, Name="Import" if i % 3 == 0 else "Idle",
                    name="import" if i % 3 == 0 else "idle")
        for i in range(DECLARATIONS)
    )  # fmt: skip
    return head + separator.join(rows) + "\n"


JAVA_LIKE = "class Steps {\n" + _many("  static int {Name}Step{i}() {{ return {i}; }}") + "}\n"
TINY_SOURCES: dict[str, tuple[str, str]] = {
    "python": ("py", _many("def {name}_step_{i}(): return {i}", "import os\nfrom a import b\n\n")),
    "javascript": ("js", _many("export const {Name}Step{i} = () => {i};", "import x from 'x';\n")),
    "typescript": (
        "ts", _many("export function {Name}Step{i}(): number {{ return {i} }}",
                    "import { x } from 'x';\n\n"),
    ),
    "tsx": ("tsx", _many("export const {Name}Step{i} = () => <b>{i}</b>;", "import R from 'r';\n")),
    "go": ("go", _many("func {Name}Step{i}() int {{ return {i} }}", 'package p\nimport "fmt"\n')),
    "rust": ("rs", _many("pub fn {name}_step_{i}() -> u8 {{ {i} }}", "use std::fmt;\n\n")),
    "java": ("java", JAVA_LIKE),
    "c": ("c", _many("int {name}_step_{i}(void) {{ return {i}; }}", "#include <stdio.h>\n\n")),
    "cpp": ("cpp", _many("int {name}_step_{i}() {{ return {i}; }}", "#include <vector>\n\n")),
    "csharp": ("cs", JAVA_LIKE),
    "ruby": ("rb", _many("def {name}_step_{i}; {i}; end")),
    "php": ("php", _many("function {name}_step_{i}() {{ return {i}; }}", "<?php\n")),
    "markdown": ("md", _many("## {Name} step {i}\n\nrun {i}", "# Steps\n\n", "\n\n")),
    "rst": ("rst", _many("{Name} step {i}\n===========\n\nrun {i}\n")),
}  # fmt: skip
"""Language -> (extension, source)."""


def tiny_files() -> dict[str, str]:
    """Path -> source of every language's file of one-line declarations."""
    return {f"tiny/steps.{ext}": source for ext, source in TINY_SOURCES.values()}
