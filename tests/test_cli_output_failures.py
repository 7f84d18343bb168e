"""What ``cutoff analyse``, ``cutoff annotate`` and ``cutoff stats`` do with outputs
they cannot write, through the real commands (issue 103).

A missing extra names the one install command that works from where the user is.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Optional

import pytest
from uci_harness import REPO, engine_command

from engine import extras
from engine.extras import install_hint

GAMES = (
    '[Event "one"]\n[White "a"]\n[Black "b"]\n\n1. e4 e5 *\n\n'
    '[Event "two"]\n[White "c"]\n[Black "d"]\n\n1. d4 d5 *\n'
)
EPD = (REPO / "tests" / "data" / "bk12.epd").read_text().splitlines(keepends=True)[:6]


def cutoff(
    tmp_path: Path,
    *args: str,
    stdout: Optional[Path] = None,
    pythonpath: str = str(REPO),
    file_limit: Optional[int] = None,
) -> subprocess.CompletedProcess[str]:
    """``cutoff ARGS`` in ``tmp_path``; its stdout captured, or sent to ``stdout``;
    with ``file_limit``, no file it writes may grow past that many bytes."""

    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    with open(stdout if stdout is not None else os.devnull, "w", encoding="utf-8") as out:
        done = subprocess.run(
            [*engine_command(), *args],
            cwd=str(tmp_path),
            stdin=subprocess.DEVNULL,
            stdout=out if stdout is not None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": pythonpath},
            preexec_fn=limit,
        )
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    return done


def one_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    assert done.returncode == status, done.stderr
    (line,) = done.stderr.splitlines()
    return line


# -------------------------------------------------------------- install hint


def test_a_missing_extra_names_the_checkout(tmp_path: Path) -> None:
    """Before: ``pip install 'cutoff-chess[plot]'``, a package no index has; now the
    checkout Cutoff was installed from (or runs from), which works from any directory."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    for module in ("matplotlib", "distributed"):
        (hidden / f"{module}.py").write_text(f"raise ImportError('no {module} here')\n")
    (tmp_path / "games.pgn").write_text(GAMES)
    path = f"{hidden}{os.pathsep}{REPO}"
    done = cutoff(tmp_path, "annotate", "games.pgn", "--plot", "g.png", pythonpath=path)
    hint = install_hint("plot")
    assert one_line(done, 2) == f"cutoff annotate: --plot needs matplotlib: {hint}"
    done = cutoff(tmp_path, "stats", "--plot", "g.png", pythonpath=path)
    assert one_line(done, 2) == f"cutoff stats: --plot needs matplotlib: {hint}"
    done = cutoff(tmp_path, "analyse", "--depth", "1", "--scheduler", "local:1", pythonpath=path)
    assert one_line(done, 2) == f"cutoff analyse: --scheduler needs Dask: {install_hint('dask')}"
    assert not (tmp_path / "g.png").exists()


def test_install_hint_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The tests run from a checkout: it is named, quoted for the shell.
    assert install_hint("plot") == f"pip install '{extras.checkout()}[plot]'"
    assert extras.checkout() is not None and (extras.checkout() / "pyproject.toml").is_file()

    # What pip recorded: `pip install /some/checkout` (a file URL, quoted characters).
    checkout = tmp_path / "my checkout"
    (checkout / "engine").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("")

    class Installed:
        def __init__(self, url: str) -> None:
            self.url = url

        def read_text(self, name: str) -> str:
            assert name == "direct_url.json"
            return json.dumps({"url": self.url, "dir_info": {}})

    import importlib.metadata

    url = "file://" + str(checkout).replace(" ", "%20")
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Installed(url))
    assert install_hint("dask") == f"pip install '{checkout}[dask]'"
    # From an index or a moved checkout: the running sources, else the words.
    monkeypatch.setattr(
        importlib.metadata, "distribution", lambda name: Installed("https://x/y.whl")
    )
    assert extras._installed_from() is None
    monkeypatch.setattr(extras, "_is_checkout", lambda path: False)
    assert install_hint("plot") == "pip install '.[plot]' in Cutoff's checkout"
