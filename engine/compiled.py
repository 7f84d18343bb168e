"""The compiled build: the search's hot modules compiled to C by mypyc, and the
guard that keeps compiled code from running against other sources.

``cutoff compile`` copies the package to a scratch folder, compiles
``COMPILED_MODULES`` there with mypyc (a C compiler and the ``compile`` extra are
needed) and copies the extension modules beside their sources, with a manifest of
the sources' SHA-256 hashes. Python then imports the extension modules in place of
the ``.py`` files: the same code, 1.4-1.8x the nodes/s (by host), the same search
tree (the bench node count is the check).

Compiled code does not see later edits to its sources, and the modules are compiled
as one group that calls into itself directly, so ``guard`` (called by
``engine/__init__`` before any other engine module is imported) loads all of them
from source as soon as one source differs from the manifest, and says so on stderr.

For mypyc, module constants of the compiled modules are ``Final`` (a C static or a
folded literal instead of a lookup in the module's globals at every use: 8 % of
the compiled search's instructions), except ``bool`` ones: mypyc 2.4 keeps the
literal True and the int 1 in one constant slot, and a ``Final`` switch broke the
compiled quiescence.

``cutoff compile`` then builds the same modules once more, in one group with a copy
of the installed python-chess's core module patched for mypyc, into ``_full``: there
the search calls the board directly, for about 1.2-1.3x the nodes/s of the first
build. Its modules need the compiled python-chess, so only the ``cutoff`` process
loads it (``use_full_build``, before anything imports python-chess) and the
processes it starts; scripts that import ``engine`` keep the first build, on their
python-chess. It runs only while the sources, the installed python-chess and the
Python are the ones it was built from.

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
import re
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Callable, Optional

COMPILED_PACKAGE = "engine.core"
"""The package that holds ``COMPILED_MODULES``; its folder is the ``pkg`` of the
functions below, and the extensions, the manifest and FULL_DIR sit in it."""

COMPILED_MODULES = (
    "attacks",
    "board",
    "evaluate",
    "features",
    "movepick",
    "nnue",
    "nnue_eval",
    "position",
    "search",
    "see",
    "tt",
)
"""The modules compiled: the search's hot path (profile of the bench) and what it
imports from the engine on that path, and ``board``, the native search board that
is to replace python-chess's there (it is written for mypyc's ``i64``)."""

GROUP = "_compiled"
"""mypyc compiles the modules as one group whose shared library is
``engine/_compiled__mypyc``; each module's own extension is a small shim into it."""

MANIFEST = "_compiled.json"
"""Beside the extensions: the SHA-256 of each source they were built from."""

FULL_DIR = "_full"
"""In the engine package: the build of the search together with python-chess."""

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


def _compiled_package_module() -> Optional[ModuleType]:
    """``COMPILED_PACKAGE``, imported (its ``__init__`` holds no code), or ``None``."""
    try:
        return importlib.import_module(COMPILED_PACKAGE)
    except ImportError:
        return None


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
    the build, and the build with python-chess in the processes that the ``cutoff``
    process starts; called once, when the ``engine`` package is imported."""
    pkg = package_dir()
    if os.environ.get(FULL_ENV) == "1":
        use_full_build(pkg)  # a process that the ``cutoff`` process started
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
    chess = ", with python-chess" if full_build_loaded() else ""
    if not compiled:
        return "interpreted (`cutoff compile` makes it several times faster)"
    if len(compiled) < len(COMPILED_MODULES):
        return f"partly compiled ({len(compiled)} of {len(COMPILED_MODULES)} modules{chess})"
    return f"compiled by mypyc ({len(compiled)} modules{chess})"


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
        raise CompileError(
            f"needs {' and '.join(missing)}: pip install 'cutoff-chess[compile]' "
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
    """Delete the compiled builds from ``pkg`` (the one with python-chess too);
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


# ------------------------------------------------------- the build with python-chess
#
# The search spends about half its time inside python-chess. Compiled on its own,
# python-chess gains nothing measurable (the search still calls it through Python's
# generic calls); compiled in one group with the search's modules, the search calls
# the board's methods and reads its attributes directly, for about 1.3x the nodes/s
# of the engine-only build. That build is in FULL_DIR and only the ``cutoff`` process
# (and the processes it starts) loads it, through ``use_full_build``: its modules need
# the compiled python-chess, which a script that imported the installed python-chess
# first cannot have, so scripts keep the engine-only build beside the sources.

FULL_GROUP = "cutoff_full"
"""mypyc's group for the build with python-chess; its shared library sits at the top
of FULL_DIR, beside ``chess/`` (a library inside the package it implements would
import that package while it is being imported, without end)."""

FULL_MODULES = "engine-modules"
"""In FULL_DIR: the extensions of the search's modules, which ``use_full_build``
puts on the ``engine`` package's path. Not ``engine``: FULL_DIR is on ``sys.path``,
also in the processes the ``cutoff`` process starts (``spawn`` hands them its
``sys.path``), and a folder named ``engine`` there is a namespace package that an
editable install's finder, which comes after ``sys.path``, cannot outrun: their
``import engine`` found no ``ENGINE_AUTHOR``. A name with a hyphen imports as
nothing."""

FULL_ENV = "CUTOFF_FULL_BUILD"
"""Set to 1 by ``use_full_build``, so that the processes the ``cutoff`` process starts
(Lazy SMP helpers, analysis workers) load the same build; a user's 0 turns it off."""

_CHESS_PATCHES = (
    # Interpreted classes cannot subclass a compiled one unless it allows it:
    # python-chess's variants and users' code subclass the two board classes. The
    # copy says that it was modified, and when, as the GPL (section 5a) asks.
    (
        "from __future__ import annotations\n",
        "# Modified for mypyc by Cutoff's `cutoff compile` (engine/compiled.py, patches of\n"
        "# 2026-11-29); GPL-3.0-or-later, as python-chess.\n"
        "from __future__ import annotations\n"
        "from mypy_extensions import mypyc_attr as _mypyc_attr\n",
    ),
    (
        "\nclass BaseBoard:\n",
        "\n@_mypyc_attr(allow_interpreted_subclasses=True)\nclass BaseBoard:\n",
    ),
    (
        "\nclass Board(BaseBoard):\n",
        "\n@_mypyc_attr(allow_interpreted_subclasses=True)\nclass Board(BaseBoard):\n",
    ),
    # mypy reads Union[bool, int] as int, so mypyc passes True as 1 and a copy kept
    # one move of the stack instead of all (the search's repetition draws with it).
    (
        "    def copy(self, *, stack: Union[bool, int] = True) -> Self:\n",
        "    def copy(self, *, stack: object = True) -> Self:\n",
    ),
    # A method aliased in the class body leaves the compiled class unusable
    # (KeyError at the first Board()): a method that calls it instead.
    (
        "\n    push_xboard = push_san\n",
        "\n    def push_xboard(self, xboard: str) -> Move:\n        return self.push_san(xboard)\n",
    ),
)
"""python-chess's core module as mypyc compiles it: (text, replacement), each text
found exactly once in python-chess 1.11's source."""

_POSITION_PATCHES = (
    # The search's own make keeps its undo record in the board's stack of saved
    # states, which python-chess pops by calling restore(); compiled, that stack
    # holds python-chess's _BoardState and nothing else. The record subclasses it in
    # this build only: interpreted, the subclass costs 2 % of the nodes/s.
    ("\nclass _Restore:\n", "\nclass _Restore(chess._BoardState):\n"),
    ('\n    __slots__ = ("undo",)\n', "\n"),
)
"""engine/core/position.py as the build with python-chess compiles it."""

CHESS_VERSIONS = ((1, 11), (1, 12))
"""The python-chess releases ``_CHESS_PATCHES`` are written for: at least the first,
below the second. Each patch text is found once in 1.11.0, 1.11.1 and 1.11.2 (the
build was run on 1.11.2); 1.10.0 lacks the ``copy`` signature they patch."""

_FULL_MYPY_CONFIG = "[mypy]\n[mypy-chess.*]\nignore_errors = True\n"
"""mypyc type-checks what it compiles; python-chess's own annotations are not
strict-clean, and its errors are not Cutoff's to fix."""


def installed_chess_dir(pkg: Optional[str] = None) -> Optional[str]:
    """The folder of the installed python-chess package, found on ``sys.path``
    without importing it and past the compiled copy (``None`` if there is none: a
    frozen executable)."""
    ours = os.path.realpath(os.path.join(pkg or package_dir(), FULL_DIR))
    path = [entry for entry in sys.path if os.path.realpath(entry or ".") != ours]
    spec = importlib.machinery.PathFinder.find_spec("chess", path)
    locations = spec.submodule_search_locations if spec is not None else None
    if not locations:
        return None
    return str(next(iter(locations)))


def chess_version_problem(pkg: Optional[str] = None) -> Optional[str]:
    """Why the installed python-chess cannot be patched for the build with it (its
    version is outside CHESS_VERSIONS, or unknown), or ``None`` when it can. Read
    from the package's source, without importing it."""
    folder = installed_chess_dir(pkg)
    if folder is None:
        return "python-chess is not installed as a package folder"
    try:
        with open(os.path.join(folder, "__init__.py"), encoding="utf-8") as handle:
            found = re.search(r'^__version__ = "([^"]+)"', handle.read(), re.MULTILINE)
    except OSError:
        found = None
    low, high = (".".join(map(str, v)) for v in CHESS_VERSIONS)
    wanted = f"python-chess {low}.x (pip install 'chess>={low},<{high}')"
    if found is None:
        return f"the installed python-chess has no version; the build needs {wanted}"
    version = found.group(1)
    try:
        numbers = tuple(int(part) for part in version.split(".")[:2])
    except ValueError:
        numbers = ()
    if not CHESS_VERSIONS[0] <= numbers < CHESS_VERSIONS[1]:
        return f"python-chess {version} is installed; the build with it needs {wanted}"
    return None


def _chess_sources(folder: str) -> dict[str, str]:
    """SHA-256 of each Python file of the python-chess package in ``folder``."""
    return {
        name: _source_hash(os.path.join(folder, name))
        for name in sorted(os.listdir(folder))
        if name.endswith(".py")
    }


def full_build(pkg: Optional[str] = None) -> tuple[Optional[str], str]:
    """The build with python-chess: its folder, or ``None`` and why it cannot run
    (not built, or built from other sources, another python-chess or Python)."""
    pkg = pkg or package_dir()
    root = os.path.join(pkg, FULL_DIR)
    try:
        with open(os.path.join(root, MANIFEST), encoding="utf-8") as handle:
            manifest = json.load(handle)
        engine_hashes = dict(manifest["sources"])
        chess_hashes = dict(manifest["chess"])
        python = manifest["python"]
    except OSError:
        return None, "not compiled"
    except (ValueError, KeyError, TypeError):
        return None, "its manifest is unreadable: run `cutoff compile`"
    if python != sys.version.split()[0]:
        return None, f"compiled for Python {python}: run `cutoff compile`"
    if not os.path.isdir(os.path.join(root, FULL_MODULES)):
        # Built before FULL_MODULES (its modules in an engine/ folder): loaded, it
        # would break the processes the cutoff process starts.
        return None, "built by an older Cutoff: run `cutoff compile`"
    changed = _changed_sources(pkg, engine_hashes)
    if changed:
        return None, f"{changed[0]}.py changed since the build: run `cutoff compile`"
    installed = installed_chess_dir(pkg)
    if installed is None:
        return None, "the installed python-chess is not found"
    if _chess_sources(installed) != chess_hashes:
        return None, "python-chess changed since the build: run `cutoff compile`"
    return root, "compiled"


def _forget_full_build(root: str) -> None:
    """Undo ``use_full_build``'s changes to the import system."""
    if root in sys.path:
        sys.path.remove(root)
    engine_path = getattr(sys.modules.get(COMPILED_PACKAGE), "__path__", None)
    shims = os.path.join(root, FULL_MODULES)
    if engine_path is not None and shims in engine_path:
        engine_path.remove(shims)
    for name in list(sys.modules):
        top = name.split(".")[0]
        if top in ("chess", FULL_GROUP + "__mypyc"):
            del sys.modules[name]


def use_full_build(pkg: Optional[str] = None) -> bool:
    """Load the search and python-chess from the build with python-chess for the
    rest of this process and the processes it starts. False when it does not run:
    turned off (``CUTOFF_FULL_BUILD=0``), not built, stale or broken (these two say
    so on stderr), or too late (python-chess or a compiled module imported already).
    """
    if os.environ.get(FULL_ENV) == "0":
        return False
    if "chess" in sys.modules or any(
        f"{COMPILED_PACKAGE}.{module}" in sys.modules for module in COMPILED_MODULES
    ):
        return full_build_loaded()
    if any(isinstance(finder, _SourceFinder) for finder in sys.meta_path):
        return False  # the sources run (a stale build, or `cutoff stats`)
    root, reason = full_build(pkg)
    if root is None:
        if reason != "not compiled":
            sys.stderr.write(f"cutoff: the build with python-chess is not used: {reason}\n")
        return False
    # chess and the group's library are found at the top of the folder; the search's
    # modules in FULL_MODULES, which joins COMPILED_PACKAGE's path ahead of the
    # engine-only build beside the sources.
    if root not in sys.path:  # (a started process has its parent's sys.path)
        sys.path.insert(0, root)
    engine_path = getattr(_compiled_package_module(), "__path__", None)
    if engine_path is not None:
        engine_path.insert(0, os.path.join(root, FULL_MODULES))
    try:
        import chess  # noqa: F401 (the compiled copy, or the error below)
    except Exception as error:  # a broken build must not stop the engine
        _forget_full_build(root)
        sys.stderr.write(
            f"cutoff: the build with python-chess does not load ({error}); running the "
            "engine-only build: run `cutoff compile` again\n"
        )
        return False
    os.environ[FULL_ENV] = "1"
    return True


def full_build_loaded() -> bool:
    """Whether the ``chess`` module of this process is the compiled copy."""
    module = sys.modules.get("chess")
    origin = getattr(module, "__file__", None) or ""
    return os.sep + FULL_DIR + os.sep in origin and not origin.endswith(".py")


def _patch_file(path: str, patches: tuple[tuple[str, str], ...]) -> None:
    """``patches`` applied to the file at ``path``; CompileError when one does not
    apply (another python-chess, or a position.py, than they were written for)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    for old, new in patches:
        if text.count(old) != 1:
            raise CompileError(f"{path} has no single {old.strip()!r}")
        text = text.replace(old, new)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _extension(folder: str, stem: str) -> Optional[str]:
    """The extension module ``stem`` in ``folder``, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, stem + suffix)
        if os.path.exists(path):
            return path
    return None


def build_full(pkg: Optional[str] = None, out: Callable[[str], None] = print) -> list[str]:
    """Compile ``COMPILED_MODULES`` of ``pkg`` with a copy of the installed
    python-chess's core module into ``pkg``'s FULL_DIR; returns the files written."""
    import shutil
    import tempfile

    pkg = pkg or package_dir()
    missing = missing_tools()
    if missing:
        raise CompileError(f"needs {' and '.join(missing)}: pip install 'cutoff-chess[compile]'")
    problem = chess_version_problem(pkg)
    if problem is not None:
        raise CompileError(problem)
    installed = installed_chess_dir(pkg)
    assert installed is not None  # chess_version_problem found it
    with tempfile.TemporaryDirectory(prefix="cutoff-compile-full-") as root:
        shutil.copytree(
            _top_dir(pkg), os.path.join(root, _PACKAGE), ignore=shutil.ignore_patterns(*NOT_SOURCES)
        )
        scratch = os.path.join(root, "chess")
        shutil.copytree(installed, scratch, ignore=shutil.ignore_patterns(*NOT_SOURCES))
        chess_hashes = _chess_sources(scratch)
        engine_hashes = {
            m: _source_hash(os.path.join(root, *_PACKAGE_PATH, m + ".py")) for m in COMPILED_MODULES
        }
        _patch_file(os.path.join(scratch, "__init__.py"), _CHESS_PATCHES)
        _patch_file(os.path.join(root, *_PACKAGE_PATH, "position.py"), _POSITION_PATCHES)
        with open(os.path.join(root, "mypy.ini"), "w", encoding="utf-8") as handle:
            handle.write(_FULL_MYPY_CONFIG)
        out("compiling the search with python-chess's core module (two to four minutes)...")
        _run_mypyc(root, FULL_GROUP, [*_engine_sources(), os.path.join("chess", "__init__.py")])
        library = _extension(root, FULL_GROUP + "__mypyc")
        chess_shim = _extension(scratch, "__init__")
        shims = [_extension(os.path.join(root, *_PACKAGE_PATH), m) for m in COMPILED_MODULES]
        if library is None or chess_shim is None or None in shims:
            raise CompileError("mypyc did not build every extension of the group")
        target = os.path.join(pkg, FULL_DIR)
        if os.path.isdir(target):
            shutil.rmtree(target)
        # The compiled chess package's submodules (pgn, engine, ...) are found beside
        # its core: the whole package is copied, as installed.
        shutil.copytree(
            scratch,
            os.path.join(target, "chess"),
            ignore=shutil.ignore_patterns("__pycache__", "*.c", "*.h"),
        )
        os.makedirs(os.path.join(target, FULL_MODULES))
        shutil.copy2(library, target)
        for shim in shims:
            assert shim is not None
            shutil.copy2(shim, os.path.join(target, FULL_MODULES))
        manifest = {
            "sources": engine_hashes,
            "chess": chess_hashes,
            "python": sys.version.split()[0],
        }
        with open(os.path.join(target, MANIFEST), "w", encoding="utf-8") as handle:
            json.dump(manifest, handle, indent=1)
    written: list[str] = []
    for folder, _, names in os.walk(target):
        written.extend(os.path.join(folder, name) for name in names)
    return written
