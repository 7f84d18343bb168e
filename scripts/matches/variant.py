"""Make a copy of the engine with some module constants changed, for a match.

    python -m scripts.matches.variant DIR search.NULL_MOVE_MIN_DEPTH=99 search.LMR_BASE=1.0

copies ``engine/`` to ``DIR/engine`` and rewrites each named top-level constant
(``MODULE.NAME=VALUE``; the line must start with ``NAME =``). Run the copy with
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
        module, dot, constant = name.partition(".")
        if not sep or not dot or not constant.isidentifier():
            raise ValueError(f"expected MODULE.NAME=VALUE, got {override!r}")
        path = destination / f"{module}.py"
        if not path.is_file():
            raise ValueError(f"no module engine/{module}.py")
        text = path.read_text()
        pattern = re.compile(rf"^{re.escape(constant)}(: [^=]+)? = .*$", re.MULTILINE)
        found = list(pattern.finditer(text))
        if len(found) != 1:
            raise ValueError(f"engine/{module}.py: {len(found)} definitions of {constant}")
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
