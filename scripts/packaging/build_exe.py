"""Build a one-file Cutoff executable with PyInstaller (for GUIs that want one file).

Usage: python -m scripts.packaging.build_exe [--dist DIR] [--name NAME]

Needs PyInstaller (``pip install -e .[exe]``). The result is ``DIR/NAME``
(``NAME.exe`` on Windows); it is the UCI engine, like ``cutoff``, and takes the
same subcommands. PyInstaller builds for the platform it runs on: build on
Windows to get a Windows ``.exe``. Work files go to ``build/pyinstaller``.
It runs from a checkout (the engine is bundled from the repository's ``engine/``) and
must not change any tracked file: it writes only ``DIR`` and ``build/pyinstaller``.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

from ..common import ToolParser

# The repository root (this file is scripts/packaging/build_exe.py).
REPO = Path(__file__).resolve().parents[2]
ENTRY = "import sys\nfrom engine.__main__ import main\nsys.exit(main())\n"


DATA_FILES = ("engine/core/weights.json", "engine/core/cutoff.nnue")


def _data_arg(name: str) -> str:
    """PyInstaller's SOURCE{pathsep}DEST for a package data file of the checkout."""
    return f"{REPO / name}{os.pathsep}{Path(name).parent.as_posix()}"


def build(dist: Path, name: str) -> Path:
    work = REPO / "build" / "pyinstaller"
    work.mkdir(parents=True, exist_ok=True)
    entry = work / "cutoff_entry.py"
    entry.write_text(ENTRY)
    command = [
        sys.executable, "-m", "PyInstaller",
        "--onefile", "--noconfirm", "--clean", "--log-level", "WARN",
        "--name", name,
        "--distpath", str(dist),
        "--workpath", str(work),
        "--specpath", str(work),
        "--paths", str(REPO),
        # engine modules imported lazily (after uciok) must still be bundled
        "--collect-submodules", "engine",
        # and the data files they read beside themselves: the weights, the network
        *[arg for name in DATA_FILES for arg in ("--add-data", _data_arg(name))],
        str(entry),
    ]  # fmt: skip
    subprocess.run(command, check=True, cwd=str(REPO))
    suffix = ".exe" if sys.platform == "win32" else ""
    return dist / f"{name}{suffix}"


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="build_exe", description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=REPO / "dist")
    parser.add_argument("--name", default="cutoff")
    args = parser.parse_args(argv)
    # Only whether it is there: PyInstaller runs as its own process (python -m PyInstaller).
    if importlib.util.find_spec("PyInstaller") is None:
        print("build_exe: PyInstaller is not installed (pip install -e .[exe])", file=sys.stderr)
        return 2
    path = build(args.dist.resolve(), args.name)
    print(f"built {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
