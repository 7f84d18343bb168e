"""Measure the network's accumulator forms: one big integer per accumulator against numpy.

    python -m scripts.training.bench_accumulator [--hidden 64 128 256] [--moves 2000]
        [--rounds 5] [--net FILE]

For each hidden width (a random network, or ``--net``), plays ``--moves`` random
moves of seeded random games and times, per move, the accumulator's update
(push and pop) and an evaluation, for:

* ``bigint``: engine.core.nnue.Accumulator, each accumulator one Python integer with
  16-bit lanes (Sunfish's trick), the output decoded with numpy;
* ``bigint-py``: the same integers, the output decoded and summed in plain Python;
* ``numpy``: each accumulator an int32 numpy array, copied on make (the old one kept
  for unmake), updated by adding and subtracting weight rows;
* ``board``: python-chess's push and pop alone, included in every form's update time;
* ``swar-head``: the cost of Sunfish's output step alone (see ``swar_head_us``).

Times are CPU times of the process (the machine may be shared), the update's including
python-chess's own push and pop (the same for every form); rounds alternate the forms
and the best round counts. Every form's evaluations are checked equal to Network.evaluate.
This tool only measures; it writes nothing.
"""

from __future__ import annotations

import random
import time
from array import array
from collections.abc import Callable
from typing import Any, Optional

import chess
import numpy as np

from engine.core.nnue import MIRROR, Accumulator, Network, features, load, move_changes

from ..common import ToolParser

PROG = "bench_accumulator"


def random_network(hidden: int, seed: int = 1) -> Network:
    rng = np.random.default_rng(seed)
    return Network(
        hidden,
        255,
        64,
        400,
        rng.integers(-300, 300, (768, hidden)).astype(np.int16),
        rng.integers(-200, 400, hidden).astype(np.int16),
        rng.integers(-100, 100, 2 * hidden).astype(np.int16),
        1234,
    )


class _NoAccumulator:
    """The board's own push and pop alone: the baseline of the update column."""

    def push(self, board: chess.Board, move: chess.Move) -> None:
        pass

    def pop(self) -> None:
        pass


def _no_accumulator(board: chess.Board) -> tuple[_NoAccumulator, None]:
    return _NoAccumulator(), None


class NumpyAccumulator:
    """The same accumulators as int32 arrays, copied on make."""

    def __init__(self, net: Network, board: chess.Board) -> None:
        self.net = net
        self.weights = net.ft_weights.astype(np.int32)
        self.mirror_weights = self.weights[MIRROR]
        bias = net.ft_bias.astype(np.int32)
        self.white = bias + self.weights[features(board, chess.WHITE)].sum(axis=0)
        self.black = bias + self.weights[features(board, chess.BLACK)].sum(axis=0)
        self.stack: list[tuple[Any, Any]] = []
        self.out_us = net.out_weights[: net.hidden].astype(np.int64)
        self.out_them = net.out_weights[net.hidden :].astype(np.int64)

    def push(self, board: chess.Board, move: chess.Move) -> None:
        self.stack.append((self.white, self.black))
        removed, added = move_changes(board, move)
        white = self.white.copy()
        black = self.black.copy()
        for f in removed:
            white -= self.weights[f]
            black -= self.mirror_weights[f]
        for f in added:
            white += self.weights[f]
            black += self.mirror_weights[f]
        self.white, self.black = white, black

    def pop(self) -> None:
        self.white, self.black = self.stack.pop()

    def evaluate(self, turn: chess.Color) -> int:
        us, them = (self.white, self.black) if turn else (self.black, self.white)
        net = self.net
        dot = int(np.clip(us, 0, net.qa) @ self.out_us) + int(
            np.clip(them, 0, net.qa) @ self.out_them
        )
        return (dot + net.out_bias) * net.scale // (net.qa * net.qb)


def python_evaluate(acc: Accumulator) -> Callable[[chess.Color], int]:
    """``acc.evaluate`` with the lanes decoded and summed in plain Python."""
    net = acc.net
    hidden = net.hidden
    weights = net.out_weights.tolist()
    w_us, w_them = weights[:hidden], weights[hidden:]
    qa = net.qa
    offset = 1 << 15
    low, high = offset, offset + qa
    size = 2 * hidden

    def evaluate(turn: chess.Color) -> int:
        us, them = (acc.white, acc.black) if turn else (acc.black, acc.white)
        dot = net.out_bias
        for packed, w in ((us, w_us), (them, w_them)):
            lanes = array("H", packed.to_bytes(size, "little"))
            for value, weight in zip(lanes, w):
                if value > low:
                    dot += ((value if value < high else high) - offset) * weight
        return dot * net.scale // (qa * net.qb)

    return evaluate


def swar_head_us(hidden: int, calls: int = 20_000) -> float:
    """CPU µs of Sunfish's output step on a 2N-lane integer: clipped ReLU by masks and
    lane sums by ``% (2**16 - 1)``, no per-lane work. It needs an output layer folded
    into the lanes (each lane pre-scaled by its output weight, the two perspectives'
    weights opposite), which engine.core.nnue's format does not have: a cost estimate for
    that design, not an evaluation of our networks."""
    bits, value_bits, offset = 16, 15, 1 << 14
    lanes = 2 * hidden
    half = hidden * bits

    def rep(v: int) -> int:
        return sum(v << (bits * i) for i in range(lanes))

    guard, ones_all, low = rep(1 << value_bits), rep((1 << value_bits) - 1), rep(offset)
    rng = random.Random(1)
    ceiling = sum(rng.randrange(100, 4000) << (bits * i) for i in range(lanes))
    ceiling_guard = ceiling | guard
    ones = (1 << value_bits) - 1
    mask_low = (1 << half) - 1
    m16 = (1 << bits) - 1
    accs = [sum((offset + rng.randrange(-3000, 3000)) << (bits * i) for i in range(lanes))]
    acc = accs[0]
    began = time.process_time()
    total = 0
    for _ in range(calls):
        m = ((acc & low) >> 14) * ones
        y = ((acc & m) | low) - low
        m = (((ceiling_guard - y) & guard) >> value_bits) * ones
        y = (y & m) | (ceiling & (m ^ ones_all))
        total += (y & mask_low) % m16 - ((y >> half) & mask_low) % m16
    return 1e6 * (time.process_time() - began) / calls


def game_moves(count: int, seed: int) -> list[list[chess.Move]]:
    """Random games (lists of moves) with ``count`` moves in all."""
    rng = random.Random(seed)
    games: list[list[chess.Move]] = []
    total = 0
    while total < count:
        board = chess.Board()
        moves: list[chess.Move] = []
        while total < count and len(moves) < 100 and not board.is_game_over():
            move = rng.choice(list(board.legal_moves))
            moves.append(move)
            board.push(move)
            total += 1
        games.append(moves)
    return games


def _replay(
    make: Callable[[chess.Board], Any], games: list[list[chess.Move]], evaluating: bool
) -> tuple[float, int]:
    """CPU seconds to play and take back the games (evaluating after each move or not)."""
    boards = [chess.Board() for _ in games]
    forms = [make(board) for board in boards]
    count = 0
    began = time.process_time()
    for moves, board, (acc, evaluate) in zip(games, boards, forms):
        for move in moves:
            acc.push(board, move)
            board.push(move)
            if evaluating:
                evaluate(board.turn)
        for _ in moves:
            board.pop()
            acc.pop()
        count += len(moves)
    return time.process_time() - began, count


def time_form(
    make: Callable[[chess.Board], Any], games: list[list[chess.Move]]
) -> tuple[float, float]:
    """(µs per push+pop, µs per evaluation) over the games, in CPU time (the machine is
    shared: wall time would count other processes' turns). The board's own push and pop
    are in both passes and cancel out of the evaluation; they are in push+pop."""
    plain, count = _replay(make, games, False)
    both, _ = _replay(make, games, True)
    return 1e6 * plain / count, 1e6 * (both - plain) / count


def check(make: Callable[[chess.Board], Any], games: list[list[chess.Move]], net: Network) -> None:
    board = chess.Board()
    acc, evaluate = make(board)
    for move in games[0][:40]:
        acc.push(board, move)
        board.push(move)
        if evaluate(board.turn) != net.evaluate(board):
            raise AssertionError(f"{PROG}: a form disagrees with Network.evaluate at {board.fen()}")


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--moves", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--net", help="a network file instead of random ones")
    args = parser.parse_args(argv)
    games = game_moves(args.moves, 1)
    widths: list[Optional[int]] = [None] if args.net else args.hidden
    print(f"{'hidden':>6} {'form':<10} {'push+pop µs':>12} {'evaluate µs':>12}")
    for width in widths:
        net = load(args.net) if width is None else random_network(width)

        def bigint(board: chess.Board, net: Network = net) -> Any:
            acc = Accumulator(net, board)
            return acc, acc.evaluate

        def bigint_py(board: chess.Board, net: Network = net) -> Any:
            acc = Accumulator(net, board)
            return acc, python_evaluate(acc)

        def numpy_form(board: chess.Board, net: Network = net) -> Any:
            acc = NumpyAccumulator(net, board)
            return acc, acc.evaluate

        forms = {"bigint": bigint, "bigint-py": bigint_py, "numpy": numpy_form}
        best: dict[str, tuple[float, float]] = {}
        for make in forms.values():
            check(make, games, net)
        for _ in range(args.rounds):
            for name, make in forms.items():
                update, evaluation = time_form(make, games)
                old = best.get(name, (float("inf"), float("inf")))
                best[name] = (min(old[0], update), min(old[1], evaluation))
        baseline = min(_replay(_no_accumulator, games, False)[0] for _ in range(args.rounds))
        best["board"] = (1e6 * baseline / sum(len(moves) for moves in games), 0.0)
        for name, (update, evaluation) in best.items():
            print(f"{net.hidden:>6} {name:<10} {update:>12.2f} {evaluation:>12.2f}", flush=True)
        head = min(swar_head_us(net.hidden) for _ in range(args.rounds))
        print(f"{net.hidden:>6} {'swar-head':<10} {'':>12} {head:>12.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
