#!/usr/bin/env python3
"""Fails when a public part of the installed zipc package is undocumented.

Walks the public API of ``zipc`` and ``zipc.aio`` (their ``__all__``) and
lists, one line each:
  - every public module, class, function, method or property without a
    docstring of its own (an inherited one, such as Exception's, does not
    count; nor does nanobind's bare signature line);
  - every parameter of a function or method that its docstring does not
    name (``self``/``cls`` and ``*args``/``**kwargs`` excepted);
  - every enumerator and NamedTuple field the class docstring does not name.
Public members are those whose names do not start with an underscore, plus
``__init__`` and ``__call__`` where a class defines its own. The package is
the one Python imports (`make test` installs it from python/ first); exit
status 77 (ctest: skipped) when it cannot be imported, 1 when anything is
undocumented, 0 otherwise. `--summary` prints the counts whatever the result.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import re
import sys
from typing import Iterable, List, Optional, Tuple

MODULES = ("zipc", "zipc.aio")
SKIP_PARAMS = {"self", "cls", "args", "kwargs"}
# A signature written out by hand at the top of a docstring ("Queue.create(name,
# *, block_size=1024, ...) -> Queue"): it names parameters without describing them.
SIGNATURE_LINE = re.compile(r"^[\w.]+\(.*\)( -> .*)?$")


def own_doc(obj: object) -> str:
    """The docstring obj carries itself ("" for one inherited or missing)."""
    if inspect.isclass(obj):
        doc = obj.__dict__.get("__doc__")
    else:
        doc = getattr(obj, "__doc__", None)
    return doc if isinstance(doc, str) else ""


def split_nanobind_doc(doc: str) -> Tuple[List[str], str]:
    """nanobind starts a function's docstring with its signature(s): returns
    (signature lines, prose). Overloads give one signature per line, and
    each overload's prose follows its own signature."""
    sigs, prose = [], []
    for line in doc.splitlines():
        text = line.strip()
        m = re.match(r"^(?:\d+\. )?`*(\w+\(.*\)(?: -> .*?)?)`*$", text)
        if m:
            sigs.append(m.group(1))
        elif not SIGNATURE_LINE.match(text):
            prose.append(line)
    return sigs, "\n".join(prose).strip()


def params_of_signature(sig: str) -> List[str]:
    """Parameter names of 'name(a: int, *, b=1) -> T' (nanobind's text)."""
    try:
        fn = ast.parse("def " + sig + ": pass").body[0]
    except SyntaxError:
        head = sig[sig.index("(") + 1 : sig.rindex(")")]
        return [p.split(":")[0].split("=")[0].strip(" *") for p in head.split(",") if p.strip(" */")]
    assert isinstance(fn, ast.FunctionDef)
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return names


def callable_params(obj: object) -> Tuple[List[str], str]:
    """(parameter names, prose of the docstring) of a function or method."""
    overloads = getattr(obj, "__nb_signature__", None)  # nanobind: ((signature, doc, defaults), ...)
    if overloads:
        names: List[str] = []
        prose = []
        for sig, doc, _ in overloads:
            # nanobind writes each default as \N (an index into the third element)
            for n in params_of_signature(re.sub(r"\\\d+", "None", sig.removeprefix("def "))):
                if n not in names:
                    names.append(n)
            prose.append(strip_signatures(doc or ""))
        return names, "\n".join(p for p in prose if p)
    doc = own_doc(obj)
    if type(obj).__name__ in ("nb_func", "nb_method", "nb_bound_method"):
        sigs, text = split_nanobind_doc(doc)
        names = []
        for sig in sigs:
            names += [n for n in params_of_signature(sig) if n not in names]
        return names, text
    try:
        names = list(inspect.signature(obj).parameters)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        names = []
    return names, strip_signatures(inspect.cleandoc(doc) if doc else "")


def strip_signatures(doc: str) -> str:
    return "\n".join(line for line in doc.splitlines() if not SIGNATURE_LINE.match(line.strip())).strip()


def mentions(text: str, word: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(word) + r"(?!\w)", text) is not None


def check_callable(where: str, obj: object, problems: List[str]) -> bool:
    names, prose = callable_params(obj)
    if not prose:
        problems.append(f"{where}: no docstring")
        return False
    ok = True
    for n in names:
        if n not in SKIP_PARAMS and not mentions(prose, n):
            problems.append(f"{where}: parameter '{n}' not described")
            ok = False
    return ok


def public_members(cls: type) -> Iterable[Tuple[str, object]]:
    for name, value in cls.__dict__.items():
        if name.startswith("_") and name not in ("__init__", "__call__"):
            continue
        yield name, value


def check_class(where: str, cls: type, problems: List[str], counts: dict) -> None:
    doc = own_doc(cls)
    counts["objects"] += 1
    if not doc.strip():
        problems.append(f"{where}: no docstring")
    else:
        counts["documented"] += 1
    fields: List[str] = []
    if issubclass(cls, enum.Enum) or hasattr(cls, "__members__"):
        fields = list(getattr(cls, "__members__", {}))
    elif issubclass(cls, tuple) and hasattr(cls, "_fields"):
        fields = list(cls._fields)  # type: ignore[attr-defined]
    for f in fields:
        counts["objects"] += 1
        if mentions(doc, f):
            counts["documented"] += 1
        else:
            problems.append(f"{where}.{f}: not named in the class docstring")
    for name, value in public_members(cls):
        if name in fields:
            continue
        what = f"{where}.{name}"
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property) or inspect.isdatadescriptor(value):
            counts["objects"] += 1
            # nanobind gives an undocumented property its getter's signature ("(self) -> str")
            if own_doc(value).strip() and not re.match(r"^\(self\)( -> .*)?$", own_doc(value).strip()):
                counts["documented"] += 1
            else:
                problems.append(f"{what}: no docstring")
        elif callable(value) and not inspect.isclass(value):
            if name == "__init__" and type(value).__name__ == "wrapper_descriptor":
                continue  # object's own __init__: nothing of the class's
            counts["objects"] += 1
            counts["methods"] += 1
            if check_callable(what, value, problems):
                counts["documented"] += 1
                counts["methods_documented"] += 1
        elif inspect.isclass(value):
            check_class(what, value, problems, counts)


def check_module(modname: str, problems: List[str], counts: dict) -> None:
    mod = importlib.import_module(modname)
    counts["objects"] += 1
    if own_doc(mod).strip():
        counts["documented"] += 1
    else:
        problems.append(f"{modname}: no module docstring")
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    for name in names:
        obj = getattr(mod, name)
        where = f"{modname}.{name}"
        if inspect.isclass(obj):
            check_class(where, obj, problems, counts)
        elif callable(obj):
            counts["objects"] += 1
            if check_callable(where, obj, problems):
                counts["documented"] += 1
        elif not mentions(own_doc(mod), name):
            # a module-level value: its module's docstring must say what it is
            counts["objects"] += 1
            problems.append(f"{where}: not named in the module docstring")
        else:
            counts["objects"] += 1
            counts["documented"] += 1


def main(argv: List[str]) -> int:
    summary = "--summary" in argv
    try:
        importlib.import_module("zipc")
    except ImportError as e:
        print(f"skipped: {e} (install the package: pip install ./python)")
        return 77
    problems: List[str] = []
    counts = {"objects": 0, "documented": 0, "methods": 0, "methods_documented": 0}
    for m in MODULES:
        check_module(m, problems, counts)
    for p in problems:
        print(p)
    if summary or problems:
        print(
            f"check-pydoc: {counts['documented']} of {counts['objects']} public objects documented "
            f"({counts['methods_documented']} of {counts['methods']} functions and methods fully); "
            f"{len(problems)} problem(s)"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
