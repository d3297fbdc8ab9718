#!/usr/bin/env python3
"""Writes the Python API reference with pdoc: zipc and zipc.aio, as installed.

pdoc reads signatures with inspect, which cannot see those of the nanobind
extension (zipc._zipc): its methods would read `send(unknown)` and its
static methods (Queue.create, ...) would be listed as plain attributes
without their docstrings. Two small adapters, for this process only, give
pdoc what nanobind records in __nb_signature__ instead.

  scripts/python-reference.py OUTPUT_DIR
"""

from __future__ import annotations

import ast
import functools
import inspect
import pathlib
import re
import sys

import pdoc
import pdoc.doc


def is_nanobind(obj: object) -> bool:
    return type(obj).__name__ in ("nb_func", "nb_method") and hasattr(obj, "__nb_signature__")


class Text:
    """An annotation or default shown exactly as nanobind wrote it."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def nanobind_signature(obj: object) -> inspect.Signature:
    """The first overload's signature, from nanobind's 'def f(a: int = 1) -> T' text."""
    text, _, values = obj.__nb_signature__[0]  # type: ignore[attr-defined]
    # nanobind writes each default as \N, the N-th of `values`
    text = re.sub(r"\\(\d+)", r"_zipc_default_\1", text.removeprefix("def "))
    fn = ast.parse("def " + text + ": pass").body[0]
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    kinds: list[tuple[ast.arg, inspect._ParameterKind]] = []
    kinds += [(p, inspect.Parameter.POSITIONAL_ONLY) for p in a.posonlyargs]
    kinds += [(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in a.args]
    if a.vararg is not None:
        kinds.append((a.vararg, inspect.Parameter.VAR_POSITIONAL))
    kinds += [(p, inspect.Parameter.KEYWORD_ONLY) for p in a.kwonlyargs]
    if a.kwarg is not None:
        kinds.append((a.kwarg, inspect.Parameter.VAR_KEYWORD))
    positional = a.posonlyargs + a.args
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})

    def default(node: ast.expr) -> Text:
        text = ast.unparse(node)
        if m := re.fullmatch(r"_zipc_default_(\d+)", text):
            text = repr(values[int(m.group(1))])
        return Text(text)

    params = [
        inspect.Parameter(
            p.arg,
            kind,
            default=default(defaults[p.arg]) if p.arg in defaults else inspect.Parameter.empty,
            annotation=Text(ast.unparse(p.annotation)) if p.annotation is not None else inspect.Parameter.empty,
        )
        for p, kind in kinds
    ]
    returns = Text(ast.unparse(fn.returns)) if fn.returns is not None else inspect.Signature.empty
    return pdoc.doc._PrettySignature(params, return_annotation=returns)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    isroutine = inspect.isroutine
    inspect.isroutine = lambda obj: isroutine(obj) or is_nanobind(obj)  # type: ignore[assignment]
    from_callable = pdoc.doc._PrettySignature.from_callable

    def signature(obj: object, *args: object, **kwargs: object) -> inspect.Signature:
        if is_nanobind(obj):
            try:
                return nanobind_signature(obj)
            except SyntaxError:
                pass  # pdoc's placeholder then
        return from_callable(obj, *args, **kwargs)  # type: ignore[arg-type]

    pdoc.doc._PrettySignature.from_callable = signature  # type: ignore[method-assign, assignment]
    docstring = pdoc.doc.Function.docstring.func  # type: ignore[attr-defined]

    def prose(self: pdoc.doc.Function) -> str:
        """The docstring without the signature lines nanobind puts first (pdoc shows the signature)."""
        text: str = docstring(self)
        if is_nanobind(self.obj):
            lines = text.splitlines()
            while lines and (not lines[0].strip() or re.fullmatch(rf"{self.name}\(.*\)( -> .*)?", lines[0].strip())):
                lines.pop(0)
            text = "\n".join(lines)
        return text

    replacement = functools.cached_property(prose)
    replacement.__set_name__(pdoc.doc.Function, "docstring")
    setattr(pdoc.doc.Function, "docstring", replacement)
    pdoc.render.configure(docformat="restructuredtext")
    pdoc.pdoc("zipc", "zipc.aio", output_directory=pathlib.Path(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
