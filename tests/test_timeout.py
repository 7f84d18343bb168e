"""The test run's per-test timeout (pytest-timeout, [tool.pytest.ini_options] in
pyproject.toml): a test that hangs fails alone, and the run goes on, serially and
over xdist's workers.

A hung engine (a broken ``stop``, a ``bestmove`` that never comes) leaves a test
blocked reading the engine's output; without the timeout it held the whole run.
The tiny test file below hangs that way, and is run under this repository's own
configuration with only the timeout shortened.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HANGS = """
import subprocess
import sys


def test_an_engine_that_never_answers():
    silent = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], stdout=subprocess.PIPE
    )
    try:
        silent.stdout.readline()  # blocks: the child writes nothing
    finally:
        silent.kill()
        silent.wait()


def test_an_ordinary_test():
    assert True
"""


@pytest.mark.parametrize("workers", ["0", "2"], ids=["serial", "xdist"])
def test_a_hanging_test_fails_alone_and_the_run_goes_on(tmp_path: Path, workers: str) -> None:
    (tmp_path / "test_hangs.py").write_text(HANGS)
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"),
            "--rootdir", str(tmp_path), "-p", "no:cacheprovider", "-o", "timeout=3",
            "-n", workers, "-rf", str(tmp_path / "test_hangs.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,  # without the plugin's timeout the child's 120 s sleep ends it
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Timeout (>3.0s) from pytest-timeout" in done.stdout, done.stdout
    assert "FAILED" in done.stdout and "test_an_engine_that_never_answers" in done.stdout
    assert "1 failed, 1 passed" in done.stdout, done.stdout
