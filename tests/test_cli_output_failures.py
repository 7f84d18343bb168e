"""What ``cutoff analyse``, ``cutoff annotate`` and ``cutoff stats`` do with outputs
they cannot write, through the real commands (issue 103).

A graph format that cannot be written, or a ``--plot`` that is a directory, is refused
with one line before the first search; every format Cutoff writes is recognised as its
own on the next run; a full disk (``/dev/full``) or a file size limit ends the run with
one line, exit status 1, and what was written before stays valid for ``--resume``; a
missing extra names the one install command that works from where the user is.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

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


SOURCES_NOTE = "cutoff stats: the compiled build cannot be observed"
"""What ``cutoff stats`` says in the compiled build once it starts measuring: a note
before a run-time error, not part of it."""


def one_line(
    done: subprocess.CompletedProcess[str], status: int, after_sources_note: bool = False
) -> str:
    """The one line on stderr (with ``after_sources_note``, besides that note)."""
    assert done.returncode == status, done.stderr
    lines = done.stderr.splitlines()
    if after_sources_note:
        lines = [line for line in lines if not line.startswith(SOURCES_NOTE)]
    (line,) = lines
    return line


# ------------------------------------------------------------ graph formats


@pytest.mark.parametrize("name", ["eval.xyz", "eval.raw", "eval.pgf"])
def test_annotate_refuses_a_graph_format_before_any_search(tmp_path: Path, name: str) -> None:
    """Before: eval.xyz analysed game 1, then matplotlib's ValueError traceback, exit 1,
    and the outputs held game 1 only. ``.raw`` (bare pixels, no room for Cutoff's
    mark) and ``.pgf`` (needs LaTeX) are matplotlib's too, and refused the same way."""
    pytest.importorskip("matplotlib")
    (tmp_path / "games.pgn").write_text(GAMES)
    done = cutoff(
        tmp_path, "annotate", "games.pgn", "--depth", "1", "--quiet", "-o", "out.pgn",
        "--json", "out.jsonl", "--plot", name,
    )  # fmt: skip
    line = one_line(done, 2)
    assert line.startswith(f"cutoff annotate: --plot {name}: not a graph format Cutoff writes")
    assert ".png" in line and ".jpg" in line
    assert done.stdout == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["games.pgn"]


def test_stats_refuses_a_graph_format_before_measuring(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    done = cutoff(tmp_path, "stats", "--depth", "1", "--quiet", "--plot", "nodes.xyz")
    assert one_line(done, 2).startswith("cutoff stats: --plot nodes.xyz: not a graph format")
    assert done.stdout == "" and not (tmp_path / "nodes.xyz").exists()


def test_the_trainer_refuses_a_graph_format_before_training(tmp_path: Path) -> None:
    """Before: the trainer met a bad --plot (or a missing matplotlib) after training."""
    pytest.importorskip("matplotlib")
    data = REPO / "tests" / "data" / "tuning_sample.gz"
    done = subprocess.run(
        [sys.executable, "-m", "scripts.training.train", str(data), "--out",
         str(tmp_path / "net.bin"), "--plot", str(tmp_path / "loss.xyz")],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "--plot" in one_line(done, 2) and "not a graph format" in done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == []


@pytest.mark.parametrize("mode", [0o755, 0o555])
def test_a_plot_that_is_a_directory_is_refused(tmp_path: Path, mode: int) -> None:
    """Before: ``--plot DIR`` wrote DIR.png and DIR-2.png beside the directory, exit 0."""
    pytest.importorskip("matplotlib")
    (tmp_path / "games.pgn").write_text(GAMES)
    graphs = tmp_path / "graphs"
    graphs.mkdir(mode=mode)
    done = cutoff(tmp_path, "annotate", "games.pgn", "--depth", "1", "--plot", "graphs")
    assert one_line(done, 2) == "cutoff annotate: --plot graphs: is a directory"
    assert done.stdout == ""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["games.pgn", "graphs"]
    assert list(graphs.iterdir()) == []


def test_annotate_replaces_its_own_jpeg_graphs(tmp_path: Path) -> None:
    """Before: the second run said eval.jpg "is not a plot written by Cutoff"."""
    pytest.importorskip("matplotlib")
    (tmp_path / "games.pgn").write_text(GAMES)
    for _ in range(2):
        done = cutoff(tmp_path, "annotate", "games.pgn", "--depth", "1", "--quiet",
                      "--plot", "eval.jpg")  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    for name in ("eval.jpg", "eval-2.jpg"):
        assert (tmp_path / name).read_bytes()[:3] == b"\xff\xd8\xff"


def test_every_graph_format_written_is_recognised(tmp_path: Path) -> None:
    """What ``save_figure`` writes in each format ``plot_formats`` offers is Cutoff's
    to replace; the same graph saved by matplotlib alone is not."""
    pytest.importorskip("matplotlib")
    from engine.analysis.outputs import PLOT, replace_problem
    from engine.analysis.plots import plot_formats, save_figure, use_file_backend

    use_file_backend()
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots()
    axes.plot([1, 2, 3])
    forms = plot_formats()
    assert {"png", "jpg", "svg", "pdf"} <= set(forms)
    assert not {"raw", "rgba", "pgf"} & set(forms)
    for form in forms:
        ours, theirs = tmp_path / f"ours.{form}", tmp_path / f"theirs.{form}"
        save_figure(figure, ours)
        figure.savefig(theirs)
        assert replace_problem([("--plot", ours, PLOT)]) is None, form
        assert "is not a plot written by Cutoff" in str(
            replace_problem([("--plot", theirs, PLOT)])
        ), form
    plt.close(figure)


# ----------------------------------------------------------------- full disk

needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


@needs_dev_full
@pytest.mark.parametrize(
    "words",
    [
        ["analyse", "six.epd", "--json", "-o", "/dev/full"],
        ["analyse", "six.epd", "--csv", "-o", "/dev/full"],
        ["analyse", "six.epd", ">"],
        ["analyse", "six.epd", "--json", ">"],
        ["annotate", "games.pgn", "-o", "/dev/full"],
        ["annotate", "games.pgn", "--json", "/dev/full"],
        ["annotate", "games.pgn", ">"],
        ["stats", "--depth", "1", "--minimax-depth", "1", ">"],
    ],
)
def test_a_full_disk_is_one_line(tmp_path: Path, words: list[str]) -> None:
    """Before: an ``OSError: [Errno 28]`` traceback."""
    (tmp_path / "six.epd").write_text("".join(EPD))
    (tmp_path / "games.pgn").write_text(GAMES)
    to_stdout = words[-1] == ">"
    args = words[:-1] if to_stdout else words
    done = cutoff(
        tmp_path, *args, "--depth", "1", "--quiet", stdout=Path("/dev/full") if to_stdout else None
    )
    where = "stdout" if to_stdout else "/dev/full"
    line = one_line(done, 1, after_sources_note=True)
    assert line == f"cutoff {words[0]}: no space left writing {where}"


def test_a_reader_that_goes_away_is_no_failure(tmp_path: Path) -> None:
    """``cutoff analyse ... | head -1``: the rest is not written, nothing is said, exit 0
    (a closed pipe is not a full disk)."""
    (tmp_path / "six.epd").write_text("".join(EPD))
    with subprocess.Popen(
        [*engine_command(), "analyse", "six.epd", "--depth", "1", "--quiet"],
        cwd=str(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline().lstrip().startswith("#")
        process.stdout.close()
        assert process.wait(timeout=120) == 0
        assert process.stderr.read() == ""


def _indexes(path: Path) -> list[int]:
    """The indexes of the whole lines of ``path`` (not of a last line cut short)."""
    text = path.read_text()
    return [json.loads(line)["index"] for line in text[: text.rfind("\n") + 1].splitlines()]


def _stable(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in record.items() if k not in ("time", "nps")} for record in records]


def test_a_disk_full_mid_run_leaves_a_file_resume_completes(tmp_path: Path) -> None:
    """A file that cannot grow past 2 KB (what a disk filling up does to it): the run
    stops with one line naming the file, and ``--resume`` finishes it, the same as one
    run without the limit."""
    (tmp_path / "six.epd").write_text("".join(EPD))
    words = ["analyse", "six.epd", "--depth", "1", "--json", "--quiet"]
    done = cutoff(tmp_path, *words, "-o", "out.jsonl", file_limit=2048)
    assert one_line(done, 1) == "cutoff analyse: cannot write out.jsonl: File too large"
    assert 0 < len(_indexes(tmp_path / "out.jsonl")) < len(EPD)
    done = cutoff(tmp_path, *words, "-o", "out.jsonl", "--resume")
    assert done.returncode == 0, done.stderr
    assert _indexes(tmp_path / "out.jsonl") == list(range(1, len(EPD) + 1))
    done = cutoff(tmp_path, *words, "-o", "whole.jsonl")
    assert _stable(tmp_path / "out.jsonl") == _stable(tmp_path / "whole.jsonl")


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
