"""PEP 517 build backend: scikit-build-core's, plus the zipc library in the sdist.

python/CMakeLists.txt builds the extension together with the C++ library whose
sources sit one directory up, outside this project. scikit-build-core packs only
this directory into an sdist, so build_sdist adds the library's sources (the
top-level CMakeLists.txt, cmake/, include/, src/, LICENSE) under zipc-lib/,
where python/CMakeLists.txt looks first: a wheel then builds from the sdist
alone. Everything else is scikit-build-core's own.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

from scikit_build_core import build as _backend
from scikit_build_core.build import (  # noqa: F401  (the PEP 517 hooks this backend keeps as they are)
    build_editable,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

PROJECT = Path(__file__).resolve().parent.parent  # python/
LIBRARY_DIR = "zipc-lib"
LIBRARY_FILES = ("CMakeLists.txt", "LICENSE", "cmake", "include", "src")


def _library_sources(root: Path) -> list[Path]:
    files: list[Path] = []
    for name in LIBRARY_FILES:
        path = root / name
        if not path.exists():
            raise FileNotFoundError(f"zipc sdist: {path} not found; build the sdist from a clone of the repository")
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        else:
            files.append(path)
    return files


def build_sdist(sdist_directory: str, config_settings: dict | None = None) -> str:
    name = _backend.build_sdist(sdist_directory, config_settings)
    if (PROJECT / LIBRARY_DIR).is_dir():  # building from an sdist: the library is in it already
        return name
    root = PROJECT.parent
    path = Path(sdist_directory) / name
    with tarfile.open(path, "r:gz") as sdist:
        members = [(m, sdist.extractfile(m).read() if m.isfile() else None) for m in sdist.getmembers()]
    top = members[0][0].name.split("/")[0]  # zipc-<version>
    mtime = members[0][0].mtime  # scikit-build-core's (SOURCE_DATE_EPOCH or fixed): keep the sdist reproducible
    for file in _library_sources(root):
        info = tarfile.TarInfo(f"{top}/{LIBRARY_DIR}/{file.relative_to(root).as_posix()}")
        data = file.read_bytes()
        info.size, info.mtime, info.mode = len(data), mtime, 0o644
        members.append((info, data))
    # gzip header without a timestamp, as scikit-build-core writes it
    with gzip.GzipFile(path, "wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as out:
        for info, data in members:
            out.addfile(info, io.BytesIO(data) if data is not None else None)
    return name
