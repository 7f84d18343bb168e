"""scripts/ as a package: its console scripts, its installed layout and its import rules.

Checks what pyproject.toml declares against the tree (every task folder installed as
``cutoff_scripts.<task>``, the shipped openings as package data, each console script
pointing at a function that exists) and that ``python -m scripts.matches.match`` runs
from a checkout. The real ``pip install .`` is tried by hand, not here: it is slow.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

from tests.conftest import REPO, pyproject

SCRIPTS = REPO / "scripts"


def test_console_scripts_point_at_functions_that_exist() -> None:
    declared = pyproject()["project"]["scripts"]
    assert declared["cutoff-match"] == "cutoff_scripts.matches.match:main"
    assert declared["cutoff-epd"] == "cutoff_scripts.matches.epd_suite:main"
    for name, target in declared.items():
        if not target.startswith("cutoff_scripts."):
            continue
        # In a checkout the installed name cutoff_scripts is the package scripts.
        module_name, _, function = target.partition(":")
        module = importlib.import_module("scripts" + module_name[len("cutoff_scripts") :])
        assert callable(getattr(module, function)), name


def test_every_task_folder_is_installed_with_its_data() -> None:
    setuptools = pyproject()["tool"]["setuptools"]
    assert setuptools["package-dir"] == {"cutoff_scripts": "scripts"}
    folders = {path.parent.name for path in SCRIPTS.glob("*/__init__.py")}
    installed = {
        package.split(".", 1)[1]
        for package in setuptools["packages"]
        if package.startswith("cutoff_scripts.")
    }
    assert "cutoff_scripts" in setuptools["packages"]
    assert installed == folders
    data = setuptools["package-data"]
    for package, patterns in data.items():
        if not package.startswith("cutoff_scripts"):
            continue
        folder = SCRIPTS.joinpath(*package.split(".")[1:])
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: {pattern} matches nothing"
    assert "openings/*.epd" in data["cutoff_scripts.matches"]


def test_match_runner_runs_as_a_module_from_the_checkout() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scripts.matches.match", "--help"],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: ") and "--engine SPEC" in done.stdout


def test_no_module_changes_sys_path() -> None:
    # Relative imports only: a path hack would break the installed cutoff_scripts.
    offenders = [
        str(path.relative_to(REPO))
        for path in SCRIPTS.rglob("*.py")
        if re.search(r"sys\.path\.(insert|append)", path.read_text())
    ]
    assert offenders == []


def test_no_module_imports_scripts_by_its_checkout_name() -> None:
    # Installed, the package is cutoff_scripts: "from scripts.x import" fails there
    # (two post-match tools and the pooling tool once did), a relative import works.
    offenders = [
        str(path.relative_to(REPO))
        for path in SCRIPTS.rglob("*.py")
        if re.search(r"^\s*(from|import) scripts[.\s]", path.read_text(), re.MULTILINE)
    ]
    assert offenders == []
