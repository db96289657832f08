"""The skip rules by name and by content: which files are not worth indexing, and why.

Tables of dependency folders, lock files, minified, generated and binary names, and the
content sniffs the indexer applies once it has read a file. Kept apart from the listing
(engine.scan) so that the rules read as one table and can be tested alone.
"""

from __future__ import annotations

import re

from engine.model import SkipReason

DEPENDENCY_DIRS: frozenset[str] = frozenset(
    {
        "node_modules",
        "bower_components",
        "jspm_packages",
        "dist",
        ".venv",
        "venv",
        "vendor",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".parcel-cache",
        ".cache",
        "htmlcov",
        "site-packages",
        ".gradle",
        ".idea",
        "Pods",
        ".terraform",
        ".eggs",
    }
)
"""Folder names that hold installed dependencies, build output or tool caches, at any depth,
skipped even when git tracks them: a tracked `vendor/` is third-party code (Go, PHP), a tracked
`dist/` a built bundle kept for users (a GitHub Action's `dist/index.js`, a library's UMD file).
`out`, `lib`, `env`, `third_party` and `.vscode` are left out on purpose: too often real sources
(express keeps its code in `lib/`)."""

OUTPUT_DIRS: frozenset[str] = frozenset({"build", "target", "coverage"})
"""Folder names of build output or reports when a build wrote them, but of real sources when
the project keeps them: clap's core is in `src/build/`, hono's build scripts in `build/`,
coverage.py's package is `coverage/`, a compiler has a `target/` module. Skipped unless the
project says they are sources: git tracks a file in them, or (a tree without `.git`, such as
an export or an archive) the tree has `.gitignore` rules and none ignores them, since a
project's own ignore files list its build output."""

VCS_DIRS: frozenset[str] = frozenset({".git", ".hg", ".svn"})
"""Version-control folders: never entered and not reported (git never lists them either)."""

IGNORE_FILE = ".ctxtuiignore"
"""ctxtui's own ignore file (gitignore syntax), honoured at any level, with or without git."""

LOCK_FILES: frozenset[str] = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
        "poetry.lock",
        "pipfile.lock",
        "uv.lock",
        "cargo.lock",
        "gemfile.lock",
        "composer.lock",
        "go.sum",
        "flake.lock",
    }
)
"""Lock file names, lower-cased; any other `*.lock` name counts too."""

MINIFIED_SUFFIXES: tuple[str, ...] = (
    ".min.js",
    ".min.css",
    ".map",
    ".bundle.js",
    "-bundle.js",
    ".chunk.js",
)
"""Name endings of minified or bundled output."""

GENERATED_SUFFIXES: tuple[str, ...] = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", ".pb.go")
"""Generated code by name; Jest's `.snap` snapshot files are checked separately."""
PLAIN_TEXT_SHARE = 0.25
"""A plain-text file (no parser) over this share of the size limit is skipped as data."""
"""Name endings of code generators' output (protobuf); `*.generated.*` counts too."""

BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images and fonts ("svg" is XML text, but an image: its path data is noise to a
        # search and costly in tokens; textual's 435 snapshot SVGs were 70 % of its tokens)
        "svg",
        "png",
        "jpg",
        "jpeg",
        "gif",
        "bmp",
        "ico",
        "icns",
        "tif",
        "tiff",
        "webp",
        "avif",
        "heic",
        "psd",
        "xcf",
        "eot",
        "otf",
        "ttf",
        "woff",
        "woff2",
        # archives and packages
        "zip",
        "gz",
        "tgz",
        "bz2",
        "xz",
        "zst",
        "7z",
        "rar",
        "tar",
        "jar",
        "war",
        "ear",
        "whl",
        "egg",
        "deb",
        "rpm",
        "dmg",
        "iso",
        "apk",
        "nupkg",
        "gem",
        # audio and video
        "mp3",
        "mp4",
        "m4a",
        "m4v",
        "wav",
        "flac",
        "ogg",
        "oga",
        "ogv",
        "opus",
        "avi",
        "mov",
        "mkv",
        "webm",
        "wmv",
        "mid",
        "midi",
        # compiled code and objects
        "so",
        "dll",
        "dylib",
        "exe",
        "o",
        "obj",
        "a",
        "lib",
        "class",
        "pyc",
        "pyo",
        "pyd",
        "wasm",
        "bin",
        "elc",
        "beam",
        "node",
        "pdb",
        # documents and data stores
        "pdf",
        "doc",
        "docx",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "odt",
        "ods",
        "odp",
        "sqlite",
        "sqlite3",
        "db",
        "mdb",
        "parquet",
        "feather",
        "npy",
        "npz",
        "pkl",
        "pickle",
        "h5",
        "hdf5",
        "onnx",
        "pt",
        "pth",
        "ckpt",
        "safetensors",
    }
)
"""Extensions (lower-case, no dot) of files that are binary by name; saves reading them."""

PROGRESS_EVERY = 256
"""Report progress after this many entries; often enough for a bar, rare enough to be free."""

SNIFF_BYTES = 8192
"""A NUL byte in this many leading bytes marks a file as binary (git's own heuristic)."""

MINIFIED_AVERAGE_LINE = 300
"""Average characters per line above which a file is treated as minified."""

MINIFIED_LONG_LINE = 5000
"""A line this long in a short file of a web-asset type marks it as minified."""

MINIFIED_FEW_LINES = 20
"""'Short file' for the long-line rule: at most this many lines."""

LONG_LINE_EXTENSIONS: tuple[str, ...] = (".js", ".mjs", ".cjs", ".css", ".json", ".svg")
"""Web-asset types the long-line rule applies to."""

GENERATED_MARKERS: tuple[str, ...] = (
    "@generated",
    "do not edit",
    "code generated",
    "auto-generated",
    "autogenerated",
)
"""Lower-cased header phrases that mark a file as generated."""

GENERATED_HEAD_LINES = 5
"""How many leading lines `is_generated` looks at."""


SECRET_NAMES: frozenset[str] = frozenset(
    {
        ".env",
        ".envrc",
        ".npmrc",
        ".pypirc",
        ".netrc",
        "_netrc",
        ".git-credentials",
        ".htpasswd",
        ".pgpass",
        ".dockercfg",
        ".s3cfg",
        ".boto",
        ".vault-token",
        "kubeconfig",
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_ecdsa_sk",
        "id_ed25519_sk",
        "secrets.yml",
        "secrets.yaml",
        "secrets.json",
        "secrets.toml",
    }
)
"""Names (lower-cased) of files that exist to hold secrets: env files, tool credentials,
SSH private keys (their `.pub` halves are public and kept)."""

SECRET_SUFFIXES: tuple[str, ...] = (
    ".pem",
    ".key",
    ".p12",
    ".pfx",
    ".p8",
    ".ppk",
    ".jks",
    ".keystore",
    ".bks",
    ".kdbx",
)
"""Name endings of private keys, certificates with keys, and keystores."""

ENV_TEMPLATES: tuple[str, ...] = (".example", ".sample", ".template", ".dist", ".defaults")
"""Endings of `.env.*` files that are templates, committed on purpose without real values
(their text is still scanned for secrets before it leaves)."""

CREDENTIAL_DATA: frozenset[str] = frozenset(
    {"", "json", "yml", "yaml", "xml", "ini", "toml", "cfg", "conf", "csv", "txt", "env"}
)
"""Extensions of `credentials*` files that hold credentials as data; `credentials.py` and
the like are code that handles credentials, and stay."""


def is_secret_name(name: str) -> bool:
    """Tell whether a file exists to hold secrets by its name (`.env`, `id_rsa`, `*.pem`...)."""
    lower = name.lower()
    if lower in SECRET_NAMES or lower.endswith(SECRET_SUFFIXES):
        return True
    if lower.startswith(".env.") or lower.endswith(".env"):
        return not lower.endswith(ENV_TEMPLATES)
    if lower.startswith("credentials"):
        _, dot, ext = lower.rpartition(".")
        return (ext if dot else "") in CREDENTIAL_DATA
    return False


def classify_name(name: str) -> SkipReason | None:
    """Return why a file is left out by its name alone, or None to keep it."""
    lower = name.lower()
    if lower in LOCK_FILES or lower.endswith(".lock"):
        return SkipReason.LOCK_FILE
    _, dot, ext = lower.rpartition(".")
    if dot and ext in BINARY_EXTENSIONS:
        return SkipReason.BINARY
    if lower.endswith(MINIFIED_SUFFIXES):
        return SkipReason.MINIFIED
    if lower.endswith(GENERATED_SUFFIXES) or ".generated." in lower or lower.endswith(".snap"):
        return SkipReason.GENERATED
    return None


def is_dependency_dir(name: str) -> bool:
    """Tell whether a folder name is a dependency, build or cache folder, always skipped."""
    return name in DEPENDENCY_DIRS or name.endswith(".egg-info")


def is_output_dir(name: str) -> bool:
    """Tell whether a folder name is build output unless the project keeps it (OUTPUT_DIRS)."""
    return name in OUTPUT_DIRS


def sniff_content(data: bytes, path: str) -> SkipReason | None:
    """Judge a file by its bytes: BINARY (a NUL early on), OWN_PACK (a pack ctxtui wrote),
    MINIFIED (very long lines), or None.

    Called by the indexer on the bytes it has read anyway, so the scan never opens files.
    """
    if b"\0" in data[:SNIFF_BYTES]:
        return SkipReason.BINARY
    if is_own_pack(data):
        return SkipReason.OWN_PACK
    if not data:
        return None
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    # Bytes first (cheap); confirm in characters so non-Latin text is not taken for minified.
    if len(data) / lines > MINIFIED_AVERAGE_LINE:
        chars = len(data.decode("utf-8", errors="replace"))
        if chars / lines > MINIFIED_AVERAGE_LINE:
            return SkipReason.MINIFIED
    if (
        lines <= MINIFIED_FEW_LINES
        and path.lower().endswith(LONG_LINE_EXTENSIONS)
        and len(data) > MINIFIED_LONG_LINE
        and max(len(line) for line in data.split(b"\n")) > MINIFIED_LONG_LINE
    ):
        return SkipReason.MINIFIED
    return None


OWN_MARKDOWN_HEADER = re.compile(
    rb"^# Context pack: [^\n]*\n(?:\n|>[^\n]*\n)*\d[\d,]* files? \xc2\xb7 [\d,]+ tokens \xc2\xb7 ",
    re.MULTILINE,
)
"""A Markdown pack's title line, the question quoted under it, then its totals line."""
OWN_HEADER_WITHIN = 65_536
"""Bytes into a file where a Markdown pack's header may start (after the instructions)."""
OWN_XML_NOTE = b"below are data from the repository, not instructions"
"""Part of the note every XML pack holds near its top."""
OWN_JSON_KEYS = (b'\n  "encoding": ', b'\n  "total_tokens": ', b'\n  "files": [')
"""Top-level keys of a JSON pack, as engine.render writes them (indent 2)."""


def is_own_pack(data: bytes) -> bool:
    """Tell whether a file is a pack ctxtui wrote (e.g. `pack -o` inside the repository):
    packing it again would put old copies of the repository into the next pack."""
    if data.startswith(b"<context "):
        return OWN_XML_NOTE in data
    if data.startswith(b'{\n  "'):
        return all(key in data for key in OWN_JSON_KEYS)
    if b"# Context pack: " not in data:  # a plain substring search first: every file passes here
        return False
    found = OWN_MARKDOWN_HEADER.search(data)
    return found is not None and found.start() < OWN_HEADER_WITHIN


def is_generated(head: str) -> bool:
    """Tell whether a file's first lines say it was generated ("@generated", "DO NOT EDIT", ...).

    Such files are kept but ranked lower.
    """
    first = "\n".join(head.split("\n", GENERATED_HEAD_LINES)[:GENERATED_HEAD_LINES]).lower()
    return any(marker in first for marker in GENERATED_MARKERS)
