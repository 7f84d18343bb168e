"""Make a copy of the engine with some module constants changed, for a match.

    python -m scripts.matches.variant DIR search.NULL_MOVE_MIN_DEPTH=99 search.LMR_BASE=1.0

copies ``engine/`` to ``DIR/engine`` and rewrites each named top-level constant
(``MODULE.NAME=VALUE``, MODULE a module's name or its dotted path in the package;
the line must start with ``NAME =``). Run the copy with
``cmd='python -m engine' dir=DIR`` in the match runner. The working tree is never
changed; a name that is not found is an error, so a typo cannot pass as a test.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from engine.compiled import NOT_SOURCES

from ..common import ToolParser

# The checkout's engine package, beside scripts/ (this file is scripts/matches/variant.py).
ENGINE = Path(__file__).resolve().parents[2] / "engine"


def _module_file(package: Path, module: str) -> Path:
    """The file of ``module`` in the copied package: a dotted path below it
    (``core.search``), or a module name found once anywhere in it (``search``)."""
    path = package.joinpath(*module.split(".")).with_suffix(".py")
    if path.is_file():
        return path
    found = sorted(package.rglob(f"{module.split('.')[-1]}.py"))
    if len(found) != 1:
        raise ValueError(
            f"no module {module} in engine/" if not found else f"{module} is ambiguous"
        )
    return found[0]


def make_variant(target: Path, overrides: list[str]) -> None:
    """Copy the engine package under ``target`` and apply ``MODULE.NAME=VALUE`` overrides."""
    destination = target / "engine"
    if destination.exists():
        shutil.rmtree(destination)
    # Not a compiled build: it was built from the sources the overrides change.
    shutil.copytree(
        ENGINE,
        destination,
        ignore=shutil.ignore_patterns(*NOT_SOURCES),
    )
    for override in overrides:
        name, sep, value = override.partition("=")
        module, dot, constant = name.rpartition(".")
        if not sep or not dot or not constant.isidentifier():
            raise ValueError(f"expected MODULE.NAME=VALUE, got {override!r}")
        path = _module_file(destination, module)
        text = path.read_text()
        pattern = re.compile(rf"^{re.escape(constant)}(: [^=]+)? = .*$", re.MULTILINE)
        found = list(pattern.finditer(text))
        if len(found) != 1:
            shown = path.relative_to(target).as_posix()
            raise ValueError(f"{shown}: {len(found)} definitions of {constant}")
        match = found[0]
        line = f"{constant}{match.group(1) or ''} = {value}"
        text = text[: match.start()] + line + text[match.end() :]
        path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="variant", description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("overrides", nargs="*", metavar="MODULE.NAME=VALUE")
    args = parser.parse_args(argv)
    try:
        make_variant(args.dir, args.overrides)
    except (ValueError, OSError) as error:
        print(f"variant: {error}", file=sys.stderr)
        return 2
    print(args.dir / "engine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
