"""One way in: every tool a user runs says its own name in ``--help``, shows its help
text as written, and the ``cutoff`` subcommands and ``cutoff-*`` scripts are the names
pyproject.toml installs.

Run from the checkout as the tests run everything (``python -m``); the installed
console script runs the same ``main``, so its usage line is the same.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO, pyproject

SUBCOMMANDS = ("analyse", "annotate", "stats", "bench", "compile")


def _help(*argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-m", *argv, "--help"],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _console_scripts() -> dict[str, str]:
    scripts: dict[str, str] = pyproject()["project"]["scripts"]
    return scripts


@pytest.mark.parametrize("name", [name for name in _console_scripts() if name != "cutoff"])
def test_each_console_script_names_itself_in_its_help(name: str) -> None:
    target = _console_scripts()[name]
    module = "scripts" + target.partition(":")[0][len("cutoff_scripts") :]
    text = _help(module)
    assert text.startswith(f"usage: {name} "), text.splitlines()[0]
    assert "%%" not in text


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_each_cutoff_subcommand_names_itself_and_shows_its_text(command: str) -> None:
    text = _help("engine", command)
    assert text.startswith(f"usage: cutoff {command} "), text.splitlines()[0]
    assert "%%" not in text


def test_the_help_texts_keep_their_percent_signs() -> None:
    """The two texts that showed ``%%``: the PGN comment and the interval."""
    assert "[%eval]" in " ".join(_help("engine", "annotate").split())
    assert "95% interval" in " ".join(_help("scripts.matches.match").split())
