"""Fuzz: thousands of random, truncated, oversized and hostile lines between valid ones.

The engine must survive all of it and afterwards still answer ``isready`` and
a ``go depth 3`` correctly. Lines are generated from a fixed seed, so a failure
reproduces. ``quit``, ``bench``, ``perft`` and ``Hash`` are left out of the
random vocabulary: they are valid but slow or final, and tested elsewhere.
Every line that would start a search gets ``depth 1`` so the run stays short.
"""

from __future__ import annotations

import random
from pathlib import Path

import chess
from uci_harness import Engine, bestmove_of, field, info_lines

VOCAB = [
    "uci", "debug", "on", "off", "isready", "setoption", "name", "value", "register",
    "later", "ucinewgame", "position", "startpos", "fen", "moves", "go", "stop",
    "ponderhit", "searchmoves", "ponder", "wtime", "btime", "winc", "binc", "movestogo",
    "depth", "nodes", "mate", "movetime", "infinite", "d", "eval", "MultiPV",
    "Move", "Overhead", "UCI_Chess960", "Ponder", "Clear", "true", "false", "<empty>",
    "e2e4", "e7e5", "e1g1", "e1h1", "a7a8q", "e2e5", "0000", "g1f3", "E2E4", "h7h8N",
    "0", "-1", "1", "-999999999999", "99999999999999999999999999", "1e308", "nan", "inf",
    "3.5", "+7", "\u00e9", "\u2603", "\x00", "\x1b[2J", "%s%s%n", "'; DROP TABLE", "\\",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "w", "b", "KQkq", "-", "HAha",
    "8/8/8/8/8/8/8/8", "k7/8/8/8/8/8/8/K7", "kK6/8/8/8/8/8/8/8", "7k/5Q2/6K1/8/8/8/8/8",
]  # fmt: skip

VALID = [
    "isready",
    "ucinewgame",
    "position startpos",
    "position startpos moves e2e4 e7e5 g1f3",
    "position fen 7k/5Q2/6K1/8/8/8/8/8 w - - 0 1",
    "go depth 1",
    "go movetime 20",
    "go infinite",
    "stop",
    "go ponder wtime 100 btime 100",
    "ponderhit",
    "setoption name MultiPV value 2",
    "setoption name MultiPV value 1",
    "setoption name UCI_Chess960 value true",
    "setoption name UCI_Chess960 value false",
    "d",
    "eval",
    "debug on",
    "debug off",
    "uci",
]
FINAL_FEN = "4k3/8/8/8/8/8/8/4K2R w K - 0 1"


def _tokens_line(rng: random.Random) -> bytes:
    words = [rng.choice(VOCAB) for _ in range(rng.randint(1, 12))]
    gaps = [rng.choice([" ", "  ", "\t", " \r "]) for _ in words]
    return "".join(g + w for g, w in zip(gaps, words)).encode("utf-8", "replace")


def _hostile_line(rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:  # random bytes, one line
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
        return data.replace(b"\n", b" ")
    if kind == 1:  # a valid command cut short
        line = rng.choice([*VALID, "position fen " + chess.STARTING_FEN + " moves e2e4 e7e5"])
        return line[: rng.randint(0, len(line))].encode()
    if kind == 2:  # long token soup
        return b" ".join(_tokens_line(rng) for _ in range(rng.randint(20, 200)))
    if kind == 3:  # a long but bogus move list
        moves = " ".join(rng.choice(["e2e4", "e7e5", "a1a1", "zz"]) for _ in range(3000))
        return f"position startpos moves {moves}".encode()
    if kind == 4:  # setoption with odd names and values
        name = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 4)))
        return f"setoption name {name} value {rng.choice(VOCAB)}".encode("utf-8", "replace")
    return _tokens_line(rng)


def _make_safe(line: bytes) -> bytes:
    """Keep the run short: no quit/bench/perft/Hash; any search gets depth 1."""
    for word in (b"quit", b"bench", b"perft", b"hash", b"Hash", b"HASH"):
        line = line.replace(word, b"x")
    if b"go" in line.lower():
        line += b" depth 1"
    return line


def generate(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    out: list[bytes] = []
    for i in range(count):
        roll = rng.random()
        if roll < 0.3:
            out.append(rng.choice(VALID).encode())
        elif roll < 0.9:
            out.append(_make_safe(_hostile_line(rng)))
        else:
            out.append(_make_safe(_tokens_line(rng)))
        if i % 50 == 0:
            out.append(b"stop")
    # Two oversized lines: one over the 1 MB input limit, one just under it.
    out.insert(count // 3, b"position startpos moves " + b"e2e4 " * 300000)
    out.insert(count // 2, b"z" * 900000)
    return out


def test_fuzz_then_still_correct(tmp_path: Path) -> None:
    eng = Engine(tmp_path, protocol_only=False)
    eng.handshake()
    lines = generate(seed=20240601, count=2000)
    assert eng.proc.stdin is not None
    for line in lines:
        eng.proc.stdin.write(line + b"\n")
    eng.proc.stdin.flush()
    eng.send("stop")
    eng.send("debug off")
    eng.send("setoption name MultiPV value 1")
    eng.send("setoption name UCI_Chess960 value false")
    eng.send(f"position fen {FINAL_FEN}")
    eng.send("go depth 3")
    board = chess.Board(FINAL_FEN)

    def final_bestmove(line: str) -> bool:
        if not line.startswith("bestmove "):
            return False
        move = bestmove_of(line)
        try:
            return chess.Move.from_uci(move) in board.legal_moves
        except ValueError:
            return False

    _, best, seen = eng.expect(final_bestmove, timeout=90)
    assert eng.proc.poll() is None
    depths = [field(line, "depth") for line in info_lines(seen)[-3:]]
    assert "3" in depths
    eng.send("isready")
    eng.expect("readyok", timeout=5)
    assert bestmove_of(best) in {m.uci() for m in board.legal_moves}
    eng.close()
    assert b"Traceback" not in eng.stderr
