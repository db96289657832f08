"""Import resolution: raw imports of parsed files to repository paths, per language."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from engine.model import ParsedFile
from engine.parse.extract import SourceParser
from engine.parse.languages import language_for_path
from engine.parse.resolve import resolve_imports
from tests.conftest import make_repo


def resolve(tmp_path: Path, files: Mapping[str, str]) -> dict[str, dict[str, tuple[str, ...]]]:
    """Write, parse and resolve a repository; return path -> raw import -> targets."""
    root = make_repo(tmp_path, files)
    parser = SourceParser()
    parsed = []
    for path, text in sorted(files.items()):
        language = language_for_path(path)
        structure = parser.parse(text, language, path)
        parsed.append(
            ParsedFile(
                path,
                language,
                len(text),
                0,
                "",
                text.count("\n"),
                0,
                structure.declarations,
                structure.imports,
            )
        )
    result = resolve_imports(parsed, root)
    assert [f.path for f in result] == [f.path for f in parsed]
    return {f.path: {i.raw: i.targets for i in f.imports} for f in result}


def test_python_absolute_relative_and_packages(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "",
        "app/views.py": "from . import models\nfrom .utils import helper\nfrom ..x import y\n",
        "app/models.py": "import app.utils.helper\nimport os\nfrom app.utils import text\n",
        "app/utils/__init__.py": "def helper(): ...\n",
        "app/utils/text.py": "from .. import models\nfrom . import helper\n",
        "main.py": "import app\nfrom app.views import render\n",
    }
    graph = resolve(tmp_path, files)
    assert graph["app/views.py"] == {
        ".models": ("app/models.py",),
        ".utils.helper": ("app/utils/__init__.py",),
        "..x.y": (),
    }
    assert graph["app/models.py"] == {
        "app.utils.helper": ("app/utils/__init__.py",),
        "os": (),
        "app.utils.text": ("app/utils/text.py",),
    }
    assert graph["app/utils/text.py"] == {
        "..models": ("app/models.py",),
        ".helper": ("app/utils/__init__.py",),
    }
    assert graph["main.py"] == {"app": ("app/__init__.py",), "app.views.render": ("app/views.py",)}


def test_python_src_layout(tmp_path: Path) -> None:
    files = {
        "src/flask/__init__.py": "from .app import Flask\n",
        "src/flask/app.py": "from flask.helpers import url_for\n",
        "src/flask/helpers.py": "",
        "tests/test_app.py": "import flask\nfrom flask.app import Flask\n",
    }
    graph = resolve(tmp_path, files)
    assert graph["src/flask/__init__.py"] == {".app.Flask": ("src/flask/app.py",)}
    assert graph["src/flask/app.py"] == {"flask.helpers.url_for": ("src/flask/helpers.py",)}
    assert graph["tests/test_app.py"] == {
        "flask": ("src/flask/__init__.py",),
        "flask.app.Flask": ("src/flask/app.py",),
    }


def test_js_relative_extensions_and_index_files(tmp_path: Path) -> None:
    files = {
        "lib/express.js": "var app = require('./application');\nvar r = require('./router');\n"
        "var x = require('express');\nimport y from '../outside';\n",
        "lib/application.js": "",
        "lib/router/index.js": "const u = require('../utils.js');\n",
        "lib/utils.js": "",
        "src/a.ts": "import { b } from './b.js';\nexport * from './types';\n",
        "src/b.ts": "",
        "src/types.d.ts": "",
    }
    graph = resolve(tmp_path, files)
    assert graph["lib/express.js"] == {
        "./application": ("lib/application.js",),
        "./router": ("lib/router/index.js",),
        "express": (),
        "../outside": (),
    }
    assert graph["lib/router/index.js"] == {"../utils.js": ("lib/utils.js",)}
    assert graph["src/a.ts"] == {"./b.js": ("src/b.ts",), "./types": ("src/types.d.ts",)}


def test_tsconfig_paths_and_base_url(tmp_path: Path) -> None:
    files = {
        "web/tsconfig.json": '{\n  // comment\n  "extends": "./tsconfig.base.json",\n'
        '  "compilerOptions": {\n'
        '    "paths": { "@/*": ["src/*"], "~lib": ["src/lib/index.ts"], },\n  },\n}\n',
        "web/tsconfig.base.json": '{ "compilerOptions": { /* base */ "baseUrl": "." } }',
        "web/src/pages/home.tsx": "import { Button } from '@/components/button';\n"
        "import lib from '~lib';\nimport u from 'src/util';\nimport React from 'react';\n",
        "web/src/components/button.tsx": "",
        "web/src/lib/index.ts": "",
        "web/src/util.ts": "",
    }
    graph = resolve(tmp_path, files)
    assert graph["web/src/pages/home.tsx"] == {
        "@/components/button": ("web/src/components/button.tsx",),
        "~lib": ("web/src/lib/index.ts",),
        "src/util": ("web/src/util.ts",),
        "react": (),
    }


def test_broken_tsconfig_is_ignored(tmp_path: Path) -> None:
    files = {
        "tsconfig.json": "{ not json",
        "a.ts": "import b from '@/b';\nimport c from './c';\n",
        "c.ts": "",
    }
    assert resolve(tmp_path, files)["a.ts"] == {"@/b": (), "./c": ("c.ts",)}


def test_go_module_path_names_package_files(tmp_path: Path) -> None:
    files = {
        "go.mod": "module github.com/spf13/cobra\n\ngo 1.21\n",
        "command.go": 'package cobra\nimport (\n\t"fmt"\n\t"github.com/spf13/cobra/doc"\n)\n',
        "doc/man.go": "package doc\n",
        "doc/md.go": "package doc\n",
        "doc/md_test.go": "package doc\n",
    }
    graph = resolve(tmp_path, files)
    assert graph["command.go"] == {
        "fmt": (),
        "github.com/spf13/cobra/doc": ("doc/man.go", "doc/md.go"),
    }


def test_rust_mod_and_use_crate(tmp_path: Path) -> None:
    files = {
        "Cargo.toml": "[package]\nname = 'x'\n",
        "src/lib.rs": "mod io;\nmod net;\nuse crate::io::reader::Reader;\nuse std::fmt;\n",
        "src/io.rs": "pub mod reader;\nuse super::net::{Socket, tcp::Stream};\n",
        "src/io/reader.rs": "use self::inner::X;\nuse crate::net;\n",
        "src/net/mod.rs": "mod tcp;\n",
        "src/net/tcp.rs": "",
    }
    graph = resolve(tmp_path, files)
    assert graph["src/lib.rs"] == {
        "mod:io": ("src/io.rs",),
        "mod:net": ("src/net/mod.rs",),
        "crate::io::reader::Reader": ("src/io/reader.rs",),
        "std::fmt": (),
    }
    assert graph["src/io.rs"] == {
        "mod:reader": ("src/io/reader.rs",),
        "super::net::{Socket, tcp::Stream}": ("src/net/mod.rs", "src/net/tcp.rs"),
    }
    assert graph["src/io/reader.rs"] == {"self::inner::X": (), "crate::net": ("src/net/mod.rs",)}
    assert graph["src/net/mod.rs"] == {"mod:tcp": ("src/net/tcp.rs",)}


def test_java_imports_by_package_path(tmp_path: Path) -> None:
    files = {
        "src/main/java/com/foo/App.java": "package com.foo;\nimport com.foo.util.Strings;\n"
        "import com.foo.model.*;\nimport static com.foo.util.Strings.join;\n"
        "import java.util.List;\n",
        "src/main/java/com/foo/util/Strings.java": "package com.foo.util;\n",
        "src/main/java/com/foo/model/User.java": "package com.foo.model;\n",
        "src/main/java/com/foo/model/Role.java": "package com.foo.model;\n",
    }
    graph = resolve(tmp_path, files)
    assert graph["src/main/java/com/foo/App.java"] == {
        "com.foo.util.Strings": ("src/main/java/com/foo/util/Strings.java",),
        "com.foo.model.*": (
            "src/main/java/com/foo/model/Role.java",
            "src/main/java/com/foo/model/User.java",
        ),
        "com.foo.util.Strings.join": ("src/main/java/com/foo/util/Strings.java",),
        "java.util.List": (),
    }


def test_c_includes_ruby_and_php_best_effort(tmp_path: Path) -> None:
    files = {
        "src/main.c": '#include "util.h"\n#include "api.h"\n#include <stdio.h>\n',
        "src/util.h": "",
        "include/api.h": "",
        "lib/app.rb": "require_relative 'helpers/text'\nrequire 'json'\n",
        "lib/helpers/text.rb": "",
        "index.php": "<?php\nuse App\\Models\\User;\nrequire 'config.php';\n",
        "src/App/Models/User.php": "<?php\n",
        "config.php": "<?php\n",
    }
    graph = resolve(tmp_path, files)
    assert graph["src/main.c"] == {"util.h": ("src/util.h",), "api.h": ("include/api.h",)}
    assert graph["lib/app.rb"] == {"helpers/text": ("lib/helpers/text.rb",), "json": ()}
    assert graph["index.php"] == {
        "App\\Models\\User": ("src/App/Models/User.php",),
        "config.php": ("config.php",),
    }
