"""A tiny UCI engine for the match-runner tests: legal moves, or a chosen fault.

Responsible for speaking just enough UCI (uci, isready, ucinewgame, position, go, quit)
to play whole games, picking a legal move deterministically from the position, and,
when asked, misbehaving on purpose after a number of its own moves:

* ``--fault illegal``: answer ``go`` with an illegal (but well-formed) move;
* ``--fault hang``: never answer ``go`` (but keep reading stdin);
* ``--fault exit``: exit with status 3 instead of answering ``go``;
* ``--fault think``: think for an hour before answering ``go``, without reading stdin
  meanwhile, as an engine deep in a long search does (``quit`` and EOF go unseen);
  ``--think-file PATH`` is created when the thinking starts.

``--score CP`` makes it report that score (its own point of view) and ``--sleep S``
makes every move take S seconds. ``--pid-file PATH`` appends its process id there at
start, so that a test can check that the tool driving it left no engine running. Its
one UCI option, ``Pick`` (``hash`` by default, or ``first``: the first legal move in
UCI order), lets a test see that an option reached it.
It must not search or be strong; it is test scaffolding.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from typing import Optional

import chess


def pick_move(board: chess.Board, pick: str = "hash") -> chess.Move:
    """A legal move chosen from the position alone, so runs are reproducible."""
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    if pick == "first":
        return moves[0]
    return moves[zlib.crc32(board.fen().encode()) % len(moves)]


def illegal_move(board: chess.Board) -> chess.Move:
    """A well-formed king move that no rule allows (five or more squares away)."""
    king = board.king(board.turn)
    assert king is not None
    for to_square in chess.SQUARES:
        move = chess.Move(king, to_square)
        if chess.square_distance(king, to_square) >= 5 and not board.is_legal(move):
            return move
    raise RuntimeError("no illegal king move found")


def parse_position(tokens: list[str]) -> Optional[chess.Board]:
    try:
        if tokens[1] == "startpos":
            board = chess.Board()
            rest = tokens[2:]
        else:
            end = tokens.index("moves") if "moves" in tokens else len(tokens)
            board = chess.Board(" ".join(tokens[2:end]))
            rest = tokens[end:]
        for uci in rest[1:]:
            board.push_uci(uci)
    except (IndexError, ValueError):
        return None
    return board


def main(argv: Optional[list[str]] = None, fault: str = "none") -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--fault", choices=["none", "illegal", "hang", "exit", "think"], default=fault
    )
    parser.add_argument("--after", type=int, default=2, help="own moves before the fault")
    parser.add_argument("--score", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--name", default=f"stub-{fault}")
    parser.add_argument("--pid-file", default=None, help="append this process's id here")
    parser.add_argument("--think-file", default=None, help="created when --fault think starts")
    args = parser.parse_args(argv)
    if args.pid_file:
        # Appended, one per line: a match starts several copies with the same path.
        with open(args.pid_file, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")

    board = chess.Board()
    played = 0
    pick = "hash"
    for line in sys.stdin:
        tokens = line.split()
        if not tokens:
            continue
        command = tokens[0]
        if command == "uci":
            print(f"id name {args.name}\nid author Cutoff tests", flush=True)
            print("option name Pick type combo default hash var hash var first", flush=True)
            print("uciok", flush=True)
        elif command == "setoption" and tokens[1:4] == ["name", "Pick", "value"]:
            pick = tokens[4] if len(tokens) > 4 and tokens[4] in ("hash", "first") else pick
        elif command == "isready":
            print("readyok", flush=True)
        elif command == "position":
            board = parse_position(tokens) or board
        elif command == "go":
            if args.fault != "none" and played >= args.after:
                if args.fault == "exit":
                    return 3
                if args.fault == "hang":
                    continue
                if args.fault == "think":
                    if args.think_file:
                        open(args.think_file, "w").close()
                    time.sleep(3600)
                    move = pick_move(board)
                else:
                    move = illegal_move(board)
            else:
                move = pick_move(board, pick)
            played += 1
            if args.sleep:
                time.sleep(args.sleep)
            print(f"info depth 1 score cp {args.score} nodes 1 time 0 pv {move.uci()}", flush=True)
            print(f"bestmove {move.uci()}", flush=True)
        elif command == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
