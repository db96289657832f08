"""Build case sets outside DEV by DEV's recipe: EXTRA (held out) and TRAIN (for fitting).

    python3 scripts/extra_cases.py [--set extra|train|train2] [--per-repo N] \
        [--mirrors DIR] [--out DIR]
    CTXBENCH_CACHE=/tmp/ctxextra python3 ../shared/bench/materialise.py scripts/extra_cases/
    CTXBENCH_CACHE=/tmp/ctxextra .venv/bin/python scripts/dev_eval.py --cases scripts/extra_cases

The recipe of shared/bench/README.md: a case is a real change (a non-merge commit on the first-
parent line that only modifies files, at most ten), its `commit` the parent (the code as it was
when the question arose), its gold the one to four non-test source files it changed, its
question the commit message with trailers, pull-request numbers and the changed files' names and
paths removed. Releases, version bumps, dependency updates, reverts and messages under five
words are skipped. Each repository's candidates (newest first, at most 4,000) are sampled evenly,
`--per-repo` of them, so the set spans each history. Nothing is chosen by hand.

No number of the ranking was chosen on this set: it judged the learned re-rank once (issue 11,
`RankWeights` session 12). Use it to accept or reject, never to tune; a change tuned on it makes
it one more DEV.

TRAIN (`--set train`, cases in `scripts/train_cases/`, 8 per repository) is the same recipe on 25
more repositories in ten languages (Java, Ruby, PHP, C and C++ besides DEV's five), none of them
in DEV or EXTRA. It exists so that numbers can be fitted on many repositories instead of DEV's
eight: fit on DEV + TRAIN, judge on EXTRA. Its repositories were picked for breadth (language,
size, monorepo or not) before any of them was scored.

TRAIN2 (`--set train2`, `scripts/train2_cases/`, 8 per repository, session 24) is 24 more for
fitting, picked before any was scored: TypeScript and JavaScript monorepos (vitest, pnpm,
TanStack query, svelte, pinia: the issue names big TypeScript monorepos as the weakest kind),
Python projects with much prose (sphinx, pylint, xarray: SWE-bench's kind of repository; typer
and its tutorial sources), and more Go, Rust, Java, Ruby and PHP. The same recipe and pattern
as TRAIN.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

REPOS = {
    "BurntSushi/ripgrep": "rust",
    "Textualize/rich": "python",
    "axios/axios": "javascript",
    "excalidraw/excalidraw": "typescript",
    "fastapi/fastapi": "python",
    "gohugoio/hugo": "go",
    "prometheus/prometheus": "go",
    "psf/requests": "python",
    "pydantic/pydantic": "python",
    "tokio-rs/tokio": "rust",
    "trpc/trpc": "typescript",
    "vuejs/core": "typescript",
}
TRAIN_REPOS = {
    "pytest-dev/pytest": "python",
    "encode/httpx": "python",
    "psf/black": "python",
    "scrapy/scrapy": "python",
    "marshmallow-code/marshmallow": "python",
    "fastify/fastify": "javascript",
    "chartjs/Chart.js": "javascript",
    "koajs/koa": "javascript",
    "vitejs/vite": "typescript",
    "colinhacks/zod": "typescript",
    "reduxjs/redux-toolkit": "typescript",
    "junegunn/fzf": "go",
    "caddyserver/caddy": "go",
    "urfave/cli": "go",
    "sharkdp/bat": "rust",
    "serde-rs/serde": "rust",
    "tokio-rs/axum": "rust",
    "google/gson": "java",
    "jhy/jsoup": "java",
    "mockito/mockito": "java",
    "square/javapoet": "java",
    "rack/rack": "ruby",
    "guzzle/guzzle": "php",
    "jqlang/jq": "c",
    "fmtlib/fmt": "cpp",
}
TRAIN2_REPOS = {
    "vitest-dev/vitest": "typescript",
    "pnpm/pnpm": "typescript",
    "TanStack/query": "typescript",
    "sveltejs/svelte": "javascript",
    "vuejs/pinia": "typescript",
    "typeorm/typeorm": "typescript",
    "mochajs/mocha": "javascript",
    "nodejs/undici": "javascript",
    "hapijs/hapi": "javascript",
    "pallets/click": "python",
    "encode/starlette": "python",
    "fastapi/typer": "python",
    "sphinx-doc/sphinx": "python",
    "pylint-dev/pylint": "python",
    "pydata/xarray": "python",
    "go-chi/chi": "go",
    "labstack/echo": "go",
    "charmbracelet/bubbletea": "go",
    "rayon-rs/rayon": "rust",
    "seanmonstar/reqwest": "rust",
    "square/retrofit": "java",
    "google/guice": "java",
    "sinatra/sinatra": "ruby",
    "slimphp/Slim": "php",
}
SOURCE = re.compile(r"\.(py|pyi|js|mjs|cjs|jsx|ts|tsx|mts|go|rs|java|vue)$")
# TRAIN's languages beyond EXTRA's (EXTRA keeps its own pattern so it rebuilds byte for byte).
TRAIN_SOURCE = re.compile(
    r"\.(py|pyi|js|mjs|cjs|jsx|ts|tsx|mts|go|rs|java|vue|kt|rb|php|c|h|cc|cpp|hpp)$"
)
TEST = re.compile(
    r"(^|/)(tests?|__tests__|spec|specs|testdata|testing|fixtures?|benches|e2e)/|_test\.go$"
    r"|(^|/)test_[^/]*\.py$|_test\.py$|\.(test|spec)\.[jt]sx?$|(^|/)conftest\.py$"
)
SKIP_SUBJECT = re.compile(
    r"^(merge|bump|release|v?\d+\.\d|chore\(deps|build\(deps|chore: release|revert"
    r"|update dependency|\[ci\]|ci:)",
    re.IGNORECASE,
)
TRAILER = re.compile(
    r"^(co-authored-by|signed-off-by|reviewed-by|cc|fixes|closes|close|resolves|ref|refs):.*$",
    re.IGNORECASE | re.MULTILINE,
)
POOL = 4000


def git(mirrors: Path, repo: str, *args: str) -> str:
    git_dir = mirrors / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args],
        capture_output=True,
        text=True,
        errors="replace",
        check=True,
    ).stdout


def changes(
    mirrors: Path, repo: str, source: re.Pattern[str]
) -> Iterator[tuple[str, str, list[str], list[str]]]:
    """(commit, parent, gold, changed files) of each commit that only modifies files."""
    log = git(
        mirrors, repo, "log", "--no-merges", "--first-parent", "--format=%x00%H %P",
        "--name-status", "--no-renames", "HEAD",
    )  # fmt: skip
    for block in log.split("\x00")[1:]:
        head, *lines = block.strip().split("\n")
        commit_parent = head.split()
        if len(commit_parent) != 2:
            continue
        files = []
        for line in filter(str.strip, lines):
            status, *paths = line.split("\t")
            if status != "M":  # the gold must exist at the parent: modified files only
                break
            files.append(paths[-1])
        else:
            gold = [f for f in files if source.search(f) and not TEST.search(f)]
            if files and len(files) <= 10 and 1 <= len(gold) <= 4:
                yield commit_parent[0], commit_parent[1], gold, files


def question(message: str, files: list[str]) -> str:
    """The message without trailers, pull-request numbers and the changed files' names."""
    text = re.sub(r"\s*\(#\d+\)", "", TRAILER.sub("", message))
    for path in sorted(files, key=len, reverse=True):
        for name in (path, os.path.basename(path)):
            text = re.sub(r"`?" + re.escape(name) + r"`?", "", text)
    return re.sub(r"[ \t]+\n", "\n", text).strip()


def cases(
    mirrors: Path, repo: str, lang: str, per_repo: int, source: re.Pattern[str]
) -> list[dict[str, object]]:
    pool = []
    for commit, parent, gold, files in changes(mirrors, repo, source):
        message = git(mirrors, repo, "log", "-1", "--format=%B", commit)
        if SKIP_SUBJECT.search(message.strip().split("\n")[0]):
            continue
        text = question(message, files)
        if len(re.findall(r"[A-Za-z]{2,}", text)) >= 5:
            pool.append((commit, parent, gold, text))
        if len(pool) >= POOL:
            break
    step = max(1, len(pool) // per_repo)
    name = repo.split("/")[1]
    return [
        {"id": f"{name}-{commit[:10]}", "repo": repo, "commit": parent, "query": text,
         "gold": gold, "source": "commit", "lang": lang}
        for commit, parent, gold, text in pool[::step][:per_repo]
    ]  # fmt: skip


def main() -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("extra", "train", "train2"), default="extra")
    parser.add_argument("--per-repo", type=int)
    parser.add_argument("--mirrors", type=Path, default=here.parents[1] / ".mirror")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    train = args.set in ("train", "train2")
    out = args.out or here / f"{args.set}_cases"
    per_repo = args.per_repo or (8 if train else 12)
    source = TRAIN_SOURCE if train else SOURCE
    out.mkdir(parents=True, exist_ok=True)
    repos = {"extra": REPOS, "train": TRAIN_REPOS, "train2": TRAIN2_REPOS}[args.set]
    for repo, lang in repos.items():
        made = cases(args.mirrors, repo, lang, per_repo, source)
        with (out / f"{repo.split('/')[1]}.jsonl").open("w", encoding="utf-8") as file:
            file.writelines(json.dumps(case) + "\n" for case in made)
        print(f"{repo}: {len(made)} cases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
