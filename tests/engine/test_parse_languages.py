"""Per-language fixtures: the parser must yield exactly these declarations and imports.

Each fixture is a small source file in one language; the expected rows were checked by hand
against the source (kinds, qualified names, 1-based line ranges, visibility, depth, docs).
"""

from __future__ import annotations

import pytest

from engine.parse.extract import SourceParser

Row = tuple[str, str, str, int, int, bool, int, str]


PYTHON_SOURCE = """\
\"\"\"Module doc.\"\"\"
import os, a.b as c
from . import views
from ..utils import x, y as z
from .a import *
MAX_SIZE = 10
_hidden = 1

@decorator
@other(1)
def f(a, b) -> int:
    \"\"\"Add things. More words here.\"\"\"
    return a + b


class Foo(Base):
    \"\"\"A foo.\"\"\"

    def _m(self,
           x):
        def inner():
            pass
        return 1
"""

PYTHON_DECLARATIONS: list[Row] = [
    ("constant", "MAX_SIZE", "MAX_SIZE", 6, 6, True, 0, ""),
    ("function", "f", "f", 9, 13, True, 0, "Add things."),
    ("class", "Foo", "Foo", 16, 23, True, 0, "A foo."),
    ("method", "_m", "Foo._m", 19, 23, False, 1, ""),
    ("function", "inner", "Foo._m.inner", 21, 22, True, 2, ""),
]

PYTHON_IMPORTS: list[tuple[str, int]] = [
    ("os", 2),
    ("a.b", 2),
    (".views", 3),
    ("..utils.x", 4),
    ("..utils.y", 4),
    (".a", 5),
]


JAVASCRIPT_SOURCE = """\
/** Send it. */
res.send = function send(body) { return 1; };
module.exports = function createApplication() {};
exports.foo = () => 1;
export const App = () => <div/>;
export default class Foo extends Bar { m() {} }
const x = require("./x");
import y, {z} from '../y';
export * from "./w";
import("./dyn");
Foo.prototype.bar = function () {};
"""

JAVASCRIPT_DECLARATIONS: list[Row] = [
    ("method", "send", "res.send", 2, 2, False, 0, "Send it."),
    ("function", "createApplication", "createApplication", 3, 3, True, 0, ""),
    ("function", "foo", "foo", 4, 4, True, 0, ""),
    ("component", "App", "App", 5, 5, True, 0, ""),
    ("class", "Foo", "Foo", 6, 6, True, 0, ""),
    ("method", "m", "Foo.m", 6, 6, True, 1, ""),
    ("method", "bar", "Foo.bar", 11, 11, False, 0, ""),
]

JAVASCRIPT_IMPORTS: list[tuple[str, int]] = [("./x", 7), ("../y", 8), ("./w", 9), ("./dyn", 10)]


TYPESCRIPT_SOURCE = """\
import { a } from "./a";
/** A service. */
export class Service {
  run(): void {}
}
export interface Options { verbose: boolean }
export type Id = string;
export enum Mode { On, Off }
const helper = (x: number): number => x * 2;
"""

TYPESCRIPT_DECLARATIONS: list[Row] = [
    ("class", "Service", "Service", 3, 5, True, 0, "A service."),
    ("method", "run", "Service.run", 4, 4, True, 1, ""),
    ("interface", "Options", "Options", 6, 6, True, 0, ""),
    ("type", "Id", "Id", 7, 7, True, 0, ""),
    ("enum", "Mode", "Mode", 8, 8, True, 0, ""),
    ("function", "helper", "helper", 9, 9, False, 0, ""),
]

TYPESCRIPT_IMPORTS: list[tuple[str, int]] = [("./a", 1)]


TSX_SOURCE = """\
@Dec()
export class A<T> implements I { constructor() {} private m(): void {} }
export interface I { x: number }
type T = string;
enum E { A }
namespace NS { export function f() {} }
export function g(a: number): string { return "" }
abstract class B {}
export default function Comp() { return <div/>; }
"""

TSX_DECLARATIONS: list[Row] = [
    ("class", "A", "A", 1, 2, True, 0, ""),
    ("method", "constructor", "A.constructor", 2, 2, True, 1, ""),
    ("method", "m", "A.m", 2, 2, True, 1, ""),
    ("interface", "I", "I", 3, 3, True, 0, ""),
    ("type", "T", "T", 4, 4, False, 0, ""),
    ("enum", "E", "E", 5, 5, False, 0, ""),
    ("module", "NS", "NS", 6, 6, False, 0, ""),
    ("function", "f", "NS.f", 6, 6, False, 1, ""),
    ("function", "g", "g", 7, 7, True, 0, ""),
    ("class", "B", "B", 8, 8, False, 0, ""),
    ("component", "Comp", "Comp", 9, 9, True, 0, ""),
]

TSX_IMPORTS: list[tuple[str, int]] = []


GO_SOURCE = """\
package main
import (
  "fmt"
  m "example.com/mod/pkg"
)
import "os"
// Execute runs.
// More.
func (c *Command) Execute() error { return nil }
type X struct { a int }
type I interface { F() }
type A = int
const Max = 3
const (
	B = 1
	C = 2
)
var V = 1
func main() {}
"""

GO_DECLARATIONS: list[Row] = [
    ("method", "Execute", "Command.Execute", 9, 9, True, 0, "Execute runs."),
    ("struct", "X", "X", 10, 10, True, 0, ""),
    ("interface", "I", "I", 11, 11, True, 0, ""),
    ("type", "A", "A", 12, 12, True, 0, ""),
    ("constant", "Max", "Max", 13, 13, True, 0, ""),
    ("constant", "B", "B", 15, 15, True, 0, ""),
    ("constant", "C", "C", 16, 16, True, 0, ""),
    ("function", "main", "main", 19, 19, False, 0, ""),
]

# a grouped import is one statement: its specs start where `import (` does (line 2)
GO_IMPORTS: list[tuple[str, int]] = [("fmt", 2), ("example.com/mod/pkg", 2), ("os", 6)]


RUST_SOURCE = """\
mod foo;
mod bar { fn x() {} }
use crate::a::b::{C, D};
/// Docs here.
#[derive(Debug)]
pub struct S { a: i32 }
impl<T> Tr for S<T> { pub fn m(&self) {} }
pub trait Tr { fn m(&self); }
pub enum E { A }
type T = i32;
const K: i32 = 1;
pub fn f() {}
macro_rules! mm { () => {} }
"""

RUST_DECLARATIONS: list[Row] = [
    ("module", "bar", "bar", 2, 2, False, 0, ""),
    ("function", "x", "bar.x", 2, 2, False, 1, ""),
    ("struct", "S", "S", 5, 6, True, 0, "Docs here."),
    ("method", "m", "S.m", 7, 7, True, 1, ""),
    ("trait", "Tr", "Tr", 8, 8, True, 0, ""),
    ("method", "m", "Tr.m", 8, 8, False, 1, ""),
    ("enum", "E", "E", 9, 9, True, 0, ""),
    ("type", "T", "T", 10, 10, False, 0, ""),
    ("constant", "K", "K", 11, 11, False, 0, ""),
    ("function", "f", "f", 12, 12, True, 0, ""),
    ("function", "mm", "mm", 13, 13, False, 0, ""),
]

RUST_IMPORTS: list[tuple[str, int]] = [("mod:foo", 1), ("crate::a::b::{C, D}", 3)]


JAVA_SOURCE = """\
package com.foo;
import com.foo.bar.Baz;
import static org.x.Y.z;
import com.foo.qux.*;
/** Doc here. More. */
@Ann
public class A extends B {
  @Override
  public void m(int a) {}
  A() {}
  interface I {}
  enum E { X }
  record R(int x) {}
}
"""

JAVA_DECLARATIONS: list[Row] = [
    ("class", "A", "A", 6, 14, True, 0, "Doc here."),
    ("method", "m", "A.m", 8, 9, True, 1, ""),
    ("method", "A", "A.A", 10, 10, False, 1, ""),
    ("interface", "I", "A.I", 11, 11, False, 1, ""),
    ("enum", "E", "A.E", 12, 12, False, 1, ""),
    ("class", "R", "A.R", 13, 13, False, 1, ""),
]

JAVA_IMPORTS: list[tuple[str, int]] = [
    ("com.foo.bar.Baz", 2),
    ("org.x.Y.z", 3),
    ("com.foo.qux.*", 4),
]


C_SOURCE = """\
#include "util.h"
#include <stdio.h>
/* Add two numbers. */
int add(int a, int b) {
    return a + b;
}
static void helper(void) {}
struct point { int x; int y; };
typedef unsigned long size;
enum color { RED, GREEN };
"""

C_DECLARATIONS: list[Row] = [
    ("function", "add", "add", 4, 6, True, 0, "Add two numbers."),
    ("function", "helper", "helper", 7, 7, False, 0, ""),
    ("struct", "point", "point", 8, 8, True, 0, ""),
    ("type", "size", "size", 9, 9, True, 0, ""),
    ("enum", "color", "color", 10, 10, True, 0, ""),
]

C_IMPORTS: list[tuple[str, int]] = [("util.h", 1)]


CPP_SOURCE = """\
#include "a.h"
#include <vector>
namespace ns {
/* Doc. */
class K : public B {
 public:
  int m(int a) { return a; }
  void d();
};
}
void K::d() {}
static int helper(void) { return 0; }
struct P { int x; };
typedef struct P PT;
template <typename T> T tmax(T a) { return a; }
enum Color { RED };
int *ptr(void) { return 0; }
"""

CPP_DECLARATIONS: list[Row] = [
    ("module", "ns", "ns", 3, 10, True, 0, ""),
    ("class", "K", "ns.K", 5, 9, True, 1, "Doc."),
    ("method", "m", "ns.K.m", 7, 7, True, 2, ""),
    ("method", "d", "K.d", 11, 11, True, 0, ""),
    ("function", "helper", "helper", 12, 12, False, 0, ""),
    ("struct", "P", "P", 13, 13, True, 0, ""),
    ("type", "PT", "PT", 14, 14, True, 0, ""),
    ("function", "tmax", "tmax", 15, 15, True, 0, ""),
    ("enum", "Color", "Color", 16, 16, True, 0, ""),
    ("function", "ptr", "ptr", 17, 17, True, 0, ""),
]

CPP_IMPORTS: list[tuple[str, int]] = [("a.h", 1)]


CSHARP_SOURCE = """\
using System.IO;
using X;
namespace N {
  /// <summary>Doc.</summary>
  public class C : B {
    public void M(int a) { }
    private int P { get; set; }
  }
  interface I {}
  public struct S {}
  enum E { A }
  public record R(int X);
}
"""

CSHARP_DECLARATIONS: list[Row] = [
    ("module", "N", "N", 3, 13, False, 0, ""),
    ("class", "C", "N.C", 5, 8, True, 1, "Doc."),
    ("method", "M", "N.C.M", 6, 6, True, 2, ""),
    ("interface", "I", "N.I", 9, 9, False, 1, ""),
    ("struct", "S", "N.S", 10, 10, True, 1, ""),
    ("enum", "E", "N.E", 11, 11, False, 1, ""),
    ("class", "R", "N.R", 12, 12, True, 1, ""),
]

CSHARP_IMPORTS: list[tuple[str, int]] = [("System.IO", 1), ("X", 2)]


RUBY_SOURCE = """\
require 'json'
require_relative "lib/x"
# Does a thing.
module M
  class C < Base
    def m(a)
      1
    end
    def self.s; end
  end
end
"""

RUBY_DECLARATIONS: list[Row] = [
    ("module", "M", "M", 4, 11, True, 0, "Does a thing."),
    ("class", "C", "M.C", 5, 10, True, 1, ""),
    ("method", "m", "M.C.m", 6, 8, True, 2, ""),
    ("method", "s", "M.C.s", 9, 9, True, 2, ""),
]

RUBY_IMPORTS: list[tuple[str, int]] = [("json", 1), ("lib/x", 2)]


PHP_SOURCE = """\
<?php
namespace App;
use Foo\\Bar;
require_once 'x.php';
/** Doc. */
class C extends B implements I {
  public function m($a) { }
  private static function p() {}
}
function f() {}
interface I {}
trait T {}
enum E {}
"""

PHP_DECLARATIONS: list[Row] = [
    ("class", "C", "C", 6, 9, True, 0, "Doc."),
    ("method", "m", "C.m", 7, 7, True, 1, ""),
    ("method", "p", "C.p", 8, 8, False, 1, ""),
    ("function", "f", "f", 10, 10, True, 0, ""),
    ("interface", "I", "I", 11, 11, True, 0, ""),
    ("trait", "T", "T", 12, 12, True, 0, ""),
    ("enum", "E", "E", 13, 13, True, 0, ""),
]

PHP_IMPORTS: list[tuple[str, int]] = [("Foo\\Bar", 3), ("x.php", 4)]


MARKDOWN_SOURCE = """\
# Title

intro

## Install

```
# not a heading
```

### Sub

Setext
------

# Two
"""

MARKDOWN_DECLARATIONS: list[Row] = [
    ("section", "Title", "Title", 1, 14, True, 0, "intro"),
    ("section", "Install", "Title > Install", 5, 14, True, 1, ""),
    ("section", "Sub", "Title > Install > Sub", 11, 14, True, 2, ""),
    ("section", "Two", "Two", 16, 16, True, 0, ""),
]

MARKDOWN_IMPORTS: list[tuple[str, int]] = []


RST_SOURCE = """\
=====
Guide
=====

Intro text. More.

Install
-------

Steps here.

Linux
~~~~~

Apt.

Usage
-----
"""

RST_DECLARATIONS: list[Row] = [
    ("section", "Guide", "Guide", 1, 18, True, 0, "Intro text."),
    ("section", "Install", "Guide > Install", 7, 15, True, 1, "Steps here."),
    ("section", "Linux", "Guide > Install > Linux", 12, 15, True, 2, "Apt."),
    ("section", "Usage", "Guide > Usage", 17, 18, True, 1, ""),
]

RST_IMPORTS: list[tuple[str, int]] = []


CASES = [
    ("python", PYTHON_SOURCE, PYTHON_DECLARATIONS, PYTHON_IMPORTS),
    ("javascript", JAVASCRIPT_SOURCE, JAVASCRIPT_DECLARATIONS, JAVASCRIPT_IMPORTS),
    ("typescript", TYPESCRIPT_SOURCE, TYPESCRIPT_DECLARATIONS, TYPESCRIPT_IMPORTS),
    ("tsx", TSX_SOURCE, TSX_DECLARATIONS, TSX_IMPORTS),
    ("go", GO_SOURCE, GO_DECLARATIONS, GO_IMPORTS),
    ("rust", RUST_SOURCE, RUST_DECLARATIONS, RUST_IMPORTS),
    ("java", JAVA_SOURCE, JAVA_DECLARATIONS, JAVA_IMPORTS),
    ("c", C_SOURCE, C_DECLARATIONS, C_IMPORTS),
    ("cpp", CPP_SOURCE, CPP_DECLARATIONS, CPP_IMPORTS),
    ("csharp", CSHARP_SOURCE, CSHARP_DECLARATIONS, CSHARP_IMPORTS),
    ("ruby", RUBY_SOURCE, RUBY_DECLARATIONS, RUBY_IMPORTS),
    ("php", PHP_SOURCE, PHP_DECLARATIONS, PHP_IMPORTS),
    ("markdown", MARKDOWN_SOURCE, MARKDOWN_DECLARATIONS, MARKDOWN_IMPORTS),
    ("rst", RST_SOURCE, RST_DECLARATIONS, RST_IMPORTS),
]


@pytest.fixture(scope="module")
def parser() -> SourceParser:
    return SourceParser()


@pytest.mark.parametrize(("language", "source", "declarations", "imports"), CASES)
def test_fixture_yields_exactly_the_expected_declarations(
    parser: SourceParser,
    language: str,
    source: str,
    declarations: list[Row],
    imports: list[tuple[str, int]],
) -> None:
    structure = parser.parse(source, language, f"fixture.{language}")
    found = [
        (
            d.kind.value,
            d.name,
            d.qualified_name,
            d.start_line,
            d.end_line,
            d.exported,
            d.depth,
            d.doc,
        )
        for d in structure.declarations
    ]
    assert found == declarations
    assert [(i.raw, i.start_line) for i in structure.imports] == imports
    assert not structure.partial
    assert all(i.targets == () for i in structure.imports)
    assert all(d.body_tokens == 0 and d.signature_tokens == 0 for d in structure.declarations)
