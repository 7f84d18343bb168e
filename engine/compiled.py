"""The compiled build: the search's hot modules compiled to C by mypyc, and the
guard that keeps compiled code from running against other sources.

``cutoff compile`` copies the package to a scratch folder, compiles
``COMPILED_MODULES`` there with mypyc (a C compiler and the ``compile`` extra are
needed) and copies the extension modules beside their sources, with a manifest of
the sources' SHA-256 hashes. Python then imports the extension modules in place of
the ``.py`` files: the same code, several times the nodes/s (the search board's
``i64`` arithmetic becomes native), the same search tree (the bench node count is
the check). Every process imports the same build: the ``cutoff`` process, the
processes it starts and scripts that import ``engine``.

Compiled code does not see later edits to its sources, and the modules are compiled
as one group that calls into itself directly, so ``guard`` (called by
``engine/__init__`` before any other engine module is imported) loads all of them
from source as soon as one source differs from the manifest, and says so on stderr.

For mypyc, module constants of the compiled modules are ``Final`` (a C static or a
folded literal instead of a lookup in the module's globals at every use: 8 % of
the compiled search's instructions), except ``bool`` ones: mypyc 2.4 keeps the
literal True and the int 1 in one constant slot, and a ``Final`` switch broke the
compiled quiescence.

python-chess is not compiled: the search runs on its own board (engine/core/board.py)
and meets python-chess only at the root, the PV and tablebase probes. Builds by
older versions also compiled a patched python-chess into FULL_DIR; ``remove`` (which
every build calls first) deletes such a folder, and nothing loads it.

``build_identity`` says which build runs (the sources' digest, the checkout's commit
when there is one, compiled or not) for the UCI handshake, so that a match PGN can be
traced to its build.

This module must stay cheap to import (GUIs time the UCI handshake: no mypyc, no
setuptools at import) and must not import the search.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Callable, Optional

COMPILED_PACKAGE = "engine.core"
"""The package that holds ``COMPILED_MODULES``; its folder is the ``pkg`` of the
functions below, and the extensions, the manifest and FULL_DIR sit in it."""

COMPILED_MODULES = (
    "bitboards",
    "board",
    "evaluate",
    "exchange",
    "features",
    "movegen",
    "movepick",
    "nnue",
    "nnue_eval",
    "search",
    "tt",
)
"""The modules compiled: the search's hot path (profile of the bench) and what it
imports from the engine on that path: the search board (``bitboards``, ``board``,
``movegen``, ``exchange``: written for mypyc's ``i64``), the search and its move
picker, the evaluation and the terms it reads (``features``), the network's
accumulator columns and output layer (``nnue``, ``nnue_eval``) and the transposition
table."""

GROUP = "_compiled"
"""mypyc compiles the modules as one group whose shared library is
``engine/_compiled__mypyc``; each module's own extension is a small shim into it."""

MANIFEST = "_compiled.json"
"""Beside the extensions: the SHA-256 of each source they were built from."""

FULL_DIR = "_full"
"""In the compiled package: where builds by older versions put the search compiled
together with a patched python-chess; ``remove`` deletes it."""

NOT_SOURCES = ("__pycache__", "*.so", "*.pyd", MANIFEST, FULL_DIR)
"""Patterns of what a copy of the package's sources leaves out: caches and a build."""

_PACKAGE = COMPILED_PACKAGE.split(".")[0]
"""The top package: a build compiles a copy of all of it (mypyc type-checks the
compiled modules against the modules they import)."""

_PACKAGE_PATH = COMPILED_PACKAGE.split(".")
"""``COMPILED_PACKAGE`` as folders below the one that holds the top package."""


def package_dir() -> str:
    """The folder of ``COMPILED_PACKAGE`` in the package this module belongs to."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), *_PACKAGE_PATH[1:])


def _top_dir(pkg: str) -> str:
    """The folder of the top package that holds the compiled package folder ``pkg``."""
    for _ in _PACKAGE_PATH[1:]:
        pkg = os.path.dirname(pkg)
    return pkg


def _source_hash(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def extension_files(pkg: str) -> list[str]:
    """The compiled build's files in ``pkg``: extensions of the compiled modules and
    of the group's shared library, and the manifest."""
    stems = {*COMPILED_MODULES, GROUP + "__mypyc"}
    found = []
    try:
        names = sorted(os.listdir(pkg))
    except OSError:
        return []  # a frozen executable keeps its modules in an archive
    for name in names:
        if name == MANIFEST:
            found.append(name)
            continue
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if name.endswith(suffix) and name[: -len(suffix)] in stems:
                found.append(name)
                break
    return [os.path.join(pkg, name) for name in found]


def stale_modules(pkg: str) -> Optional[list[str]]:
    """``None`` when ``pkg`` holds no compiled build; otherwise the compiled modules
    whose source differs from the one they were built from (all of them when the
    manifest is missing or unreadable), an empty list for a build that is current.
    A module without its source (a frozen executable) is never stale."""
    files = extension_files(pkg)
    if not files:
        return None
    try:
        with open(os.path.join(pkg, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
        hashes = dict(manifest["sources"])
    except (OSError, ValueError, KeyError, TypeError):
        hashes = {}
    return _changed_sources(pkg, hashes)


def _changed_sources(pkg: str, hashes: dict[str, str]) -> list[str]:
    """The compiled modules whose source in ``pkg`` differs from ``hashes``."""
    stale = []
    for module in COMPILED_MODULES:
        source = os.path.join(pkg, module + ".py")
        try:
            current = _source_hash(source)
        except OSError:
            continue  # an installed build without sources: nothing to compare
        if hashes.get(module) != current:
            stale.append(module)
    return stale


class _SourceFinder:
    """Finds the compiled modules' ``.py`` files ahead of their extensions."""

    def __init__(self, pkg: str, reason: str) -> None:
        self.pkg = pkg
        self.reason = reason
        """Why the sources run: what ``build_description`` says."""

    def find_spec(
        self,
        fullname: str,
        path: Optional[Sequence[str]] = None,
        target: Optional[ModuleType] = None,
    ) -> Optional[importlib.machinery.ModuleSpec]:
        prefix, _, name = fullname.rpartition(".")
        source = os.path.join(self.pkg, name + ".py")
        if prefix != COMPILED_PACKAGE or name not in COMPILED_MODULES or not os.path.exists(source):
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def guard() -> None:
    """Load the compiled modules from source if any of their sources changed since
    the build; called once, when the ``engine`` package is imported."""
    pkg = package_dir()
    stale = stale_modules(pkg)
    if stale:
        reason = "the compiled modules are out of date: run `cutoff compile`"
        sys.meta_path.insert(0, _SourceFinder(pkg, reason))
        names = ", ".join(name + ".py" for name in stale)
        sys.stderr.write(
            f"cutoff: the compiled modules are out of date ({names} changed); running "
            "interpreted: run `cutoff compile` again, or `cutoff compile --remove`\n"
        )


def use_sources(reason: str) -> bool:
    """Load the compiled modules from their sources for the rest of this process, for
    a tool that subclasses the search's classes (interpreted code cannot subclass a
    class mypyc compiled). False when one of them is imported already, too late."""
    pkg = package_dir()
    if any(isinstance(finder, _SourceFinder) for finder in sys.meta_path):
        return True
    if stale_modules(pkg) != []:
        return True  # no compiled build (or a stale one, which ``guard`` handled)
    if any(f"{COMPILED_PACKAGE}.{module}" in sys.modules for module in COMPILED_MODULES):
        return False
    sys.meta_path.insert(0, _SourceFinder(pkg, reason))
    return True


def build_description() -> str:
    """One line for ``cutoff bench`` and ``--version``: how the search runs."""
    for finder in sys.meta_path:
        if isinstance(finder, _SourceFinder):
            return f"interpreted ({finder.reason})"
    compiled = []
    for module in COMPILED_MODULES:
        spec = importlib.util.find_spec(f"{COMPILED_PACKAGE}.{module}")
        origin = spec.origin if spec is not None else None
        if origin and not origin.endswith(".py"):
            compiled.append(module)
    if not compiled:
        return "interpreted (`cutoff compile` makes it several times faster)"
    if len(compiled) < len(COMPILED_MODULES):
        return f"partly compiled ({len(compiled)} of {len(COMPILED_MODULES)} modules)"
    return f"compiled by mypyc ({len(compiled)} modules)"


SOURCE_SUFFIXES = (".py", ".nnue", ".json")
"""The package's files that make the engine what it is: its code, its network and
weights (not the compiled build, which ``build_description`` tells apart)."""


def source_digest() -> str:
    """The first 12 hex digits of the SHA-256 of the package's source files, in name
    order: the same for the same code wherever and however it is installed, and
    different after any edit (a checkout's uncommitted changes too)."""
    top = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = sorted(d for d in subfolders if d not in ("__pycache__", FULL_DIR))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES) and name != MANIFEST:
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, top).encode() + b"\0")
                try:
                    digest.update(_read(path))
                except OSError:
                    continue  # an unreadable file: what can be read still tells builds apart
    return digest.hexdigest()[:12]


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def checkout_commit() -> Optional[str]:
    """The commit checked out where the package's sources are, when they are a git
    checkout (or worktree); None for an installed package. Read from ``.git`` directly:
    no git process in the UCI handshake."""
    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = os.path.join(folder, ".git")
    try:
        if os.path.isfile(git):  # a worktree: "gitdir: PATH"
            pointer = _read(git).decode().strip()
            git = os.path.join(folder, pointer.partition("gitdir:")[2].strip())
        head = _read(os.path.join(git, "HEAD")).decode().strip()
        if not head.startswith("ref:"):
            return head[:12] or None
        ref = head.partition("ref:")[2].strip()
        common = git
        if os.path.isfile(os.path.join(git, "commondir")):
            common = os.path.join(git, _read(os.path.join(git, "commondir")).decode().strip())
        for place in (git, common):
            if os.path.isfile(os.path.join(place, ref)):
                return _read(os.path.join(place, ref)).decode().strip()[:12] or None
        for line in _read(os.path.join(common, "packed-refs")).decode().splitlines():
            commit, _, name = line.partition(" ")
            if name == ref:
                return commit[:12]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def build_identity() -> str:
    """What identifies this engine's build in one line, for the UCI handshake's
    ``info string`` (match PGNs record it): ``source DIGEST[, commit C], BUILD``."""
    parts = [f"source {source_digest()}"]
    commit = checkout_commit()
    if commit:
        parts.append(f"commit {commit}")
    build = build_description()
    # Without the advice an interpreted build's description carries; a stale build's
    # reason stays (it is one).
    if build.startswith("interpreted (`cutoff compile`") or build.startswith("compiled"):
        build = build.split(" (", 1)[0]
    parts.append(build)
    return ", ".join(parts)


# The build runs in a child process: setuptools may exit the interpreter on an error,
# and mypyc's import is heavy. Arguments: the scratch root, the group's name, then the
# source files (relative to the root).
_BUILD_SCRIPT = """
import os, sys
from mypyc.build import mypycify
from setuptools import setup
os.chdir(sys.argv[1])
extensions = mypycify(
    sys.argv[3:], opt_level="3", group_name=sys.argv[2], target_dir="c-build"
)
setup(
    name="cutoff-compiled",
    ext_modules=extensions,
    script_args=["build_ext", "--inplace", "--build-temp", "o-build"],
)
"""


class CompileError(Exception):
    """The build failed; the message says why and what to install."""


def missing_tools() -> list[str]:
    """What ``build`` needs and this Python lacks (empty when it can try)."""
    missing = []
    for module, package in (("mypyc", "mypy"), ("setuptools", "setuptools")):
        if importlib.util.find_spec(module) is None:
            missing.append(package)
    return missing


def _engine_sources() -> list[str]:
    """The compiled modules' files, relative to the root of a build."""
    return [os.path.join(*_PACKAGE_PATH, module + ".py") for module in COMPILED_MODULES]


def _run_mypyc(root: str, group: str, sources: list[str]) -> None:
    """Compile ``sources`` (relative to ``root``) as the mypyc group ``group``, the
    extensions left beside them; CompileError with mypyc's last lines on failure."""
    import subprocess

    result = subprocess.run(
        [sys.executable, "-c", _BUILD_SCRIPT, root, group, *sources],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        lines = (result.stdout + result.stderr).strip().splitlines()
        detail = "\n".join(lines[-15:])
        raise CompileError(
            f"mypyc failed (exit {result.returncode}); a C compiler and the Python "
            f"headers are needed (Debian: apt-get install gcc python3-dev):\n{detail}"
        )


def build(pkg: Optional[str] = None, out: Callable[[str], None] = print) -> list[str]:
    """Compile ``COMPILED_MODULES`` of ``pkg`` (default: this package) and install the
    extensions beside the sources; returns the files written."""
    import shutil
    import tempfile

    pkg = pkg or package_dir()
    missing = missing_tools()
    if missing:
        from engine.extras import install_hint

        raise CompileError(
            f"needs {' and '.join(missing)}: {install_hint('compile')} "
            "(or pip install mypy setuptools)"
        )
    if not os.access(pkg, os.W_OK):
        raise CompileError(f"cannot write to {pkg}")
    with tempfile.TemporaryDirectory(prefix="cutoff-compile-") as root:
        shutil.copytree(
            _top_dir(pkg), os.path.join(root, _PACKAGE), ignore=shutil.ignore_patterns(*NOT_SOURCES)
        )
        scratch = os.path.join(root, *_PACKAGE_PATH)
        sources = {m: _source_hash(os.path.join(scratch, m + ".py")) for m in COMPILED_MODULES}
        out(f"compiling {len(COMPILED_MODULES)} modules with mypyc (a minute or two)...")
        _run_mypyc(root, f"{COMPILED_PACKAGE}.{GROUP}", _engine_sources())
        built = extension_files(scratch)
        if len(built) != len(COMPILED_MODULES) + 1:
            raise CompileError(f"mypyc built {len(built)} extensions, not the expected ones")
        remove(pkg)
        written = []
        for path in built:
            target = os.path.join(pkg, os.path.basename(path))
            shutil.copy2(path, target)
            written.append(target)
        manifest = os.path.join(pkg, MANIFEST)
        with open(manifest, "w", encoding="utf-8") as handle:
            json.dump({"sources": sources, "python": sys.version.split()[0]}, handle, indent=1)
        written.append(manifest)
    return written


def remove(pkg: Optional[str] = None) -> list[str]:
    """Delete the compiled build from ``pkg`` (and an older version's FULL_DIR);
    returns the files deleted."""
    import shutil

    pkg = pkg or package_dir()
    files = extension_files(pkg)
    for path in files:
        os.remove(path)
    full = os.path.join(pkg, FULL_DIR)
    if os.path.isdir(full):
        for folder, _, names in os.walk(full):
            files.extend(os.path.join(folder, name) for name in names)
        shutil.rmtree(full)
    return files
