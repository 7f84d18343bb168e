"""an exception inside the search still gives info string + a legal bestmove.

The session runs in-process on byte streams, with ``Searcher.search`` replaced
by a failing one (fault injection); input ends with EOF, which lets queued
work finish before the session returns.
"""

from __future__ import annotations

import io
import threading
from typing import Any, Callable, Optional

import chess
import pytest

from engine.core import search
from engine.play.uci import UciSession


def run_session(commands: list[str], timeout: float = 20.0) -> list[str]:
    stdin = io.BytesIO(("\n".join(commands) + "\n").encode())
    stdout = io.BytesIO()
    session = UciSession(stdin, stdout)
    thread = threading.Thread(target=session.run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), "session did not finish"
    return stdout.getvalue().decode("ascii").splitlines()


def failing_search(after_iterations: int) -> Callable[..., Any]:
    real = search.Searcher.search

    def fake(
        self: search.Searcher,
        board: chess.Board,
        params: search.SearchParams,
        control: search.SearchControl,
        on_iteration: Optional[Callable[[search.IterationInfo], None]] = None,
    ) -> search.SearchResult:
        seen = 0

        def counting(info: search.IterationInfo) -> None:
            nonlocal seen
            if on_iteration is not None:
                on_iteration(info)
            seen += 1
            if seen >= after_iterations:
                raise RuntimeError("injected fault")

        if after_iterations == 0:
            raise RuntimeError("injected fault")
        return real(self, board, params, control, counting)

    return fake


@pytest.mark.parametrize("after", [0, 2])
def test_exception_in_search_gives_fallback_bestmove(
    monkeypatch: pytest.MonkeyPatch, after: int
) -> None:
    monkeypatch.setattr(search.Searcher, "search", failing_search(after))
    lines = run_session(["position startpos moves e2e4", "go depth 5", "isready", "go depth 2"])
    errors = [line for line in lines if line.startswith("info string") and "injected" in line]
    assert len(errors) == 2
    bestmoves = [line for line in lines if line.startswith("bestmove ")]
    assert len(bestmoves) == 2
    board = chess.Board()
    board.push_uci("e2e4")
    for line in bestmoves:
        assert chess.Move.from_uci(line.split()[1]) in board.legal_moves
        # the last info line before bestmove (info string aside, as fastchess reads
        # it) is an exact score line whose pv starts with the move
        earlier = lines[: lines.index(line)]
        before = [x for x in earlier if x.startswith("info ") and "info string" not in x][-1]
        assert " score " in before and "bound" not in before
        assert before.split(" pv ")[1].split()[0] == line.split()[1]
    assert "readyok" in lines


def test_exception_in_infinite_search_waits_for_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search.Searcher, "search", failing_search(0))
    lines = run_session(["position startpos", "go infinite", "isready", "stop"])
    assert lines.index("readyok") < lines.index(next(x for x in lines if x.startswith("bestmove")))
