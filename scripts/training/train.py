"""Train the learned evaluation's network from datagen's data and write its file.

    python -m scripts.training.train DATA.gz [DATA2.gz ...] --out engine/nnue.bin
        [--hidden N] [--epochs E] [--batch-size B] [--lr LR] [--k K] [--lam L]
        [--val-fraction F] [--seed S] [--threads T] [--max-positions M] [--plot PNG]
        [--base hand [--correction-scale C]]

The network is engine.core.nnue's 768 -> N -> 1 with two perspectives (the same feature
weights for White's and Black's view, the board mirrored for Black, the output
reading [side to move, other side]), a clipped ReLU in [0, 1], trained in PyTorch
(the optional ``train`` extra, CPU only). The target of a position, from the side to
move's view, is ``lam * sigmoid(score / K) + (1 - lam) * result`` (``result`` 1, 0.5
or 0; positions whose result is unknown use the score alone), the loss the mean
squared error of ``sigmoid(output)`` against it, so the network's output times K
is centipawns. Whole games (datagen's work units) are held out for validation.
Fixed seed: the same data and arguments give the same network.

It prints the train and validation loss after every epoch (and plots them with
``--plot``), writes the quantised network (feature weights and bias times QA = 255,
output weights times QB = 64, int16, see engine.core.nnue), then reports on the validation
positions the quantised network's loss and the hand-written evaluation's
(engine.core.evaluate) on the same labels, with K as given and with the K that suits it
best, since its centipawns need not be Stockfish's.

With ``--base hand`` the network learns a correction added to the hand-written
evaluation; ``--correction-scale C`` writes it at C times its fitted size (the file's
cp per unit is K times C). The fitted correction is the one that predicts the labels
best, not the one the search plays best with: n16 played even with the hand-written
evaluation at 5,000 nodes a move, and +121 Elo ahead at half its size
(docs/training.md).

This tool writes only ``--out`` (and ``--plot``). It must not make data (datagen does).
"""

from __future__ import annotations

import copy
import importlib.util
import math
import sys
import time
from pathlib import Path
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from engine.core.nnue import BASE_HAND, BASE_NONE, INPUTS, MIRROR, Network

from ..common import ToolParser, UsageError
from .dataset import DataError, Sample, read_records, read_samples
from .fit import K

PROG = "train"
QA = 255
QB = 64
PAD = INPUTS
"""Index of the all-zero feature row that pads a position's list to MAX_PIECES."""
MAX_PIECES = 32
WEIGHT_CLIP = 1.98
"""Feature weights and bias stay within this, so an accumulator (bias plus at most 32
columns) stays within 16 bits after quantisation by QA."""
HAND_EVAL_MAX = 20_000
"""Validation positions the (slow) hand-written evaluation is measured on, at most."""
_PIECES = {c: (0 if c.isupper() else 1, "pnbrqk".index(c.lower())) for c in "PNBRQKpnbrqk"}
_RESULT = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}


def fen_features(fen: str) -> tuple[list[int], bool]:
    """White's-perspective feature indices of a FEN, and whether White is to move."""
    board, turn = fen.split(" ", 2)[:2]
    square = 56
    active = []
    for char in board:
        if char == "/":
            square -= 16
        elif char.isdigit():
            square += int(char)
        else:
            colour, kind = _PIECES[char]
            active.append(colour * 384 + kind * 64 + square)
            square += 1
    return active, turn == "w"


class Data:
    """Positions as arrays: padded White-perspective features, side to move, labels."""

    def __init__(self, paths: list[Path], limit: Optional[int]) -> None:
        rows: list[list[int]] = []
        turns: list[bool] = []
        scores: list[int] = []
        results: list[float] = []
        units: list[int] = []
        unit = 0
        for path in paths:
            if not path.exists():
                raise UsageError(f"cannot read {str(path)!r}: no such file")
            for _, record in read_records(path):
                if limit is not None and len(rows) >= limit:
                    break
                if not isinstance(record, Sample):  # a #done line: the unit ends
                    unit += 1
                    continue
                sample = record
                try:
                    active, white = fen_features(sample.fen)
                except (KeyError, ValueError, IndexError):
                    raise DataError(f"{path}: bad FEN {sample.fen[:70]!r}") from None
                if len(active) > MAX_PIECES:
                    raise DataError(f"{path}: more than {MAX_PIECES} pieces: {sample.fen!r}")
                rows.append(active + [PAD] * (MAX_PIECES - len(active)))
                turns.append(white)
                scores.append(sample.score)
                results.append(_RESULT.get(sample.result, math.nan))
                units.append(unit)
            unit += 1
        if not rows:
            raise UsageError("no positions in the data")
        self.white = np.array(rows, dtype=np.int16)
        table = np.array([*MIRROR, PAD], dtype=np.int16)
        self.black = table[self.white]
        self.white_to_move = np.array(turns, dtype=bool)
        self.score = np.array(scores, dtype=np.float32)  # White's view
        self.result = np.array(results, dtype=np.float32)  # White's view, nan = unknown
        self.unit = np.array(units, dtype=np.int64)
        """The work unit (a game, a chunk of a FEN file) of each position: datagen
        writes ``#done UNIT`` after each unit's positions."""

    def split(self, fraction: float, seed: int) -> tuple[Any, Any]:
        """(validation, training) indexes: whole work units held out, so that no game
        has positions on both sides (neighbouring positions of a game are nearly the
        same); by position when the data has a single unit."""
        rng = np.random.default_rng(seed)
        units = np.unique(self.unit)
        if len(units) < 2:
            order = rng.permutation(len(self))
            n_val = max(1, int(len(self) * fraction))
            return order[:n_val], order[n_val:]
        held = rng.permutation(units)[: max(1, int(len(units) * fraction))]
        mask = np.isin(self.unit, held)
        val = np.flatnonzero(mask)
        trn = rng.permutation(np.flatnonzero(~mask))
        return val, trn

    def __len__(self) -> int:
        return len(self.white)

    def target(self, k: float, lam: float) -> npt.NDArray[np.float32]:
        """The side to move's target probability of every position."""
        sign = np.where(self.white_to_move, 1.0, -1.0).astype(np.float32)
        from_score = 1.0 / (1.0 + np.exp(-sign * self.score / k))
        result = np.where(self.white_to_move, self.result, 1.0 - self.result)
        blended = np.where(np.isnan(result), from_score, lam * from_score + (1 - lam) * result)
        out: npt.NDArray[np.float32] = blended.astype(np.float32)
        return out


def build_model(hidden: int, correction: bool = False) -> Any:
    """The network in PyTorch; with ``correction`` its output starts at zero (it is
    added to the hand-written evaluation, which it should first leave alone)."""
    import torch
    from torch import nn

    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ft = nn.Embedding(INPUTS + 1, hidden, padding_idx=PAD)
            self.ft_bias = nn.Parameter(torch.zeros(hidden))
            self.out = nn.Linear(2 * hidden, 1)
            nn.init.normal_(self.ft.weight, std=0.1)
            with torch.no_grad():
                self.ft.weight[PAD].zero_()
                self.ft_bias.fill_(0.1)
                if correction:
                    self.out.weight.mul_(0.01)
                    self.out.bias.zero_()

        def forward(self, white: Any, black: Any, white_to_move: Any) -> Any:
            w = self.ft(white).sum(dim=1) + self.ft_bias
            b = self.ft(black).sum(dim=1) + self.ft_bias
            stm = white_to_move.unsqueeze(1)
            us = torch.where(stm, w, b)
            them = torch.where(stm, b, w)
            hidden_out = torch.cat([us, them], dim=1).clamp(0.0, 1.0)
            return self.out(hidden_out).squeeze(1)

        def clip(self) -> None:
            with torch.no_grad():
                self.ft.weight.clamp_(-WEIGHT_CLIP, WEIGHT_CLIP)
                self.ft.weight[PAD].zero_()
                self.ft_bias.clamp_(-WEIGHT_CLIP, WEIGHT_CLIP)
                # Output weights times QB must fit int16.
                self.out.weight.clamp_(-32767 / QB, 32767 / QB)

    return Model()


def quantise(model: Any, k: float, base: int = BASE_NONE) -> Network:
    ft = model.ft.weight.detach().numpy()[:INPUTS]
    bias = model.ft_bias.detach().numpy()
    out_w = model.out.weight.detach().numpy()[0]
    out_b = float(model.out.bias.detach().numpy()[0])
    return Network(
        hidden=len(bias),
        qa=QA,
        qb=QB,
        scale=round(k),
        ft_weights=np.round(ft * QA).astype(np.int16),
        ft_bias=np.round(bias * QA).astype(np.int16),
        out_weights=np.round(out_w * QB).astype(np.int16),
        out_bias=round(out_b * QA * QB),
        base=base,
    )


def quantised_cp(net: Network, data: Data, index: npt.NDArray[np.int64]) -> Any:
    """The integer network's cp (side to move's view) of the positions ``index``, as
    engine.core.nnue computes them, vectorised."""
    table = np.vstack([net.ft_weights, np.zeros((1, net.hidden), np.int16)]).astype(np.int64)
    white = table[data.white[index]].sum(axis=1) + net.ft_bias
    black = table[data.black[index]].sum(axis=1) + net.ft_bias
    stm = data.white_to_move[index][:, None]
    us = np.clip(np.where(stm, white, black), 0, net.qa)
    them = np.clip(np.where(stm, black, white), 0, net.qa)
    weights = net.out_weights.astype(np.int64)
    dot = us @ weights[: net.hidden] + them @ weights[net.hidden :] + net.out_bias
    return dot * net.scale // (net.qa * net.qb)


def mse(cp: Any, target: Any, k: float) -> float:
    return float(np.mean((1.0 / (1.0 + np.exp(-np.asarray(cp, np.float64) / k)) - target) ** 2))


def best_k_mse(cp: Any, target: Any) -> tuple[float, float]:
    """(K, loss) with the K in 50..1000 that gives ``cp`` the lowest loss."""
    best = min((mse(cp, target, k), k) for k in range(50, 1001, 10))
    return best[1], best[0]


def hand_eval_cp(
    index: npt.NDArray[np.int64], fens: list[str], progress: bool = False
) -> list[int]:
    """engine.core.evaluate's cp (side to move's view) of the positions ``index``."""
    import chess

    from engine.core.board import Board
    from engine.core.evaluate import Evaluator

    evaluator = Evaluator()
    began = time.monotonic()
    scores = []
    for count, i in enumerate(index, 1):
        scores.append(evaluator.evaluate(Board.from_chess(chess.Board(fens[i]))))
        if progress and count % 100_000 == 0:
            print(
                f"hand-written evaluation: {count}/{len(index)} positions "
                f"({time.monotonic() - began:.0f} s)",
                flush=True,
            )
    return scores


def parse_args(argv: Optional[list[str]]) -> Any:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+", help="datagen output files")
    parser.add_argument("--out", type=Path, required=True, help="network file to write")
    parser.add_argument("--hidden", type=int, default=128, help="hidden width N")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4096)
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate")
    parser.add_argument(
        "--weight-decay", type=float, default=0.0, help="AdamW's decoupled weight decay"
    )
    parser.add_argument("--k", type=float, default=K, help="cp per logistic unit")
    parser.add_argument("--lam", type=float, default=0.75, help="weight of the score")
    parser.add_argument(
        "--val-fraction", type=float, default=0.05, help="share of the games held out"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--max-positions", type=int, help="read at most this many")
    parser.add_argument("--max-steps", type=int, help="stop after this many batches")
    parser.add_argument("--plot", type=Path, help="plot the losses to this image")
    parser.add_argument(
        "--base",
        choices=("none", "hand"),
        default="none",
        help="'hand': the network learns a correction added to the hand-written "
        "evaluation (scored for every position before training; the file says so)",
    )
    parser.add_argument(
        "--scale",
        default="k",
        help="cp per output unit in the file: 'k' (--k: the labels' centipawns), 'hand' "
        "(the K that fits the hand-written evaluation best on the validation positions: "
        "the network's cp then in its units) or a number",
    )
    parser.add_argument(
        "--correction-scale",
        type=float,
        default=1.0,
        help="with --base hand: the file's correction is this fraction of the fitted one "
        "(its cp per unit K times it; n16 played 121 Elo a node better at 0.5 than at 1)",
    )
    args = parser.parse_args(argv)
    if not 0 < args.val_fraction < 1:
        parser.error("--val-fraction must be between 0 and 1")
    if not 0 <= args.lam <= 1:
        parser.error("--lam must be between 0 and 1")
    parser.require_positive(args, "hidden", "epochs", "batch_size", "threads")
    parser.require_non_negative(args, "weight_decay")
    if args.k <= 0 or args.lr <= 0:
        parser.error("--k and --lr must be positive")
    if args.base == "hand" and args.scale != "k":
        parser.error("--base hand keeps the labels' centipawns: --scale must be 'k'")
    if args.correction_scale <= 0:
        parser.error("--correction-scale must be positive")
    if args.base != "hand" and args.correction_scale != 1:
        parser.error("--correction-scale needs --base hand")
    if args.scale not in ("k", "hand"):
        try:
            if float(args.scale) <= 0:
                raise ValueError
        except ValueError:
            parser.error("--scale must be 'k', 'hand' or a positive number")
    return args


def _fens(paths: list[Path], limit: Optional[int]) -> list[str]:
    fens = [sample.fen for path in paths for sample in read_samples(path)]
    return fens[:limit] if limit is not None else fens


def train(args: Any) -> int:
    for path in args.data:
        if not path.is_file():
            raise UsageError(f"cannot read {str(path)!r}: no such file")
    if args.plot is not None:
        # Checked before the training, not found out after it.
        if importlib.util.find_spec("matplotlib") is None:
            from engine.extras import install_hint

            raise UsageError(f"--plot needs matplotlib: {install_hint('plot')}")
        from engine.analysis.plots import plot_problem

        problem = plot_problem(args.plot)
        if problem is not None:
            raise UsageError(f"--plot {problem}")
    try:
        import torch
    except ImportError:
        from engine.extras import install_hint

        raise UsageError(f"training needs PyTorch: {install_hint('train')}") from None
    began = time.monotonic()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    data = Data(args.data, args.max_positions)
    target = data.target(args.k, args.lam)
    val, trn = data.split(args.val_fraction, args.seed)
    if len(trn) < 1:
        raise UsageError(f"{len(data)} positions: too few to hold out a validation set")
    print(
        f"positions {len(data)} (train {len(trn)}, validation {len(val)}) "
        f"read in {time.monotonic() - began:.1f} s",
        flush=True,
    )
    # The base every output is added to, in cp from the side to move's view: none, or
    # the hand-written evaluation (the network then learns only its error).
    correction = args.base == "hand"
    base = np.zeros(len(data), dtype=np.int64)
    if correction:
        fens = _fens(args.data, args.max_positions)
        base[:] = hand_eval_cp(np.arange(len(data)), fens, progress=True)
    # int32 indices (the embedding takes them) halve the memory of int64 ones.
    tensors = (
        torch.from_numpy(data.white.astype(np.int32)),
        torch.from_numpy(data.black.astype(np.int32)),
        torch.from_numpy(data.white_to_move),
        torch.from_numpy(target),
        torch.from_numpy((base / args.k).astype(np.float32)),
    )
    model = build_model(args.hidden, correction=correction)
    optimiser = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=args.epochs)
    generator = torch.Generator().manual_seed(args.seed)
    trn_t = torch.from_numpy(trn)
    val_t = torch.from_numpy(val)

    def loss_of(index: Any) -> Any:
        out = model(tensors[0][index], tensors[1][index], tensors[2][index]) + tensors[4][index]
        return torch.mean((torch.sigmoid(out) - tensors[3][index]) ** 2)

    def validation() -> float:
        model.eval()
        with torch.no_grad():
            total = sum(
                float(loss_of(val_t[i : i + 65536])) * len(val_t[i : i + 65536])
                for i in range(0, len(val_t), 65536)
            )
        model.train()
        return total / len(val_t)

    history: list[tuple[int, float, float]] = []
    steps = 0
    # Early stopping: the epoch with the lowest validation loss is the one written.
    best_loss, best_epoch = validation(), 0
    best_state = copy.deepcopy(model.state_dict())
    print(f"before training: validation {best_loss:.6f}", flush=True)
    for epoch in range(1, args.epochs + 1):
        shuffled = trn_t[torch.randperm(len(trn_t), generator=generator)]
        total, count = 0.0, 0
        for i in range(0, len(shuffled), args.batch_size):
            batch = shuffled[i : i + args.batch_size]
            loss = loss_of(batch)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            model.clip()
            total += float(loss.detach()) * len(batch)
            count += len(batch)
            steps += 1
            if args.max_steps is not None and steps >= args.max_steps:
                break
        schedule.step()
        history.append((epoch, total / count, validation()))
        print(
            f"epoch {epoch} train {history[-1][1]:.6f} validation {history[-1][2]:.6f} "
            f"({time.monotonic() - began:.0f} s)",
            flush=True,
        )
        if history[-1][2] < best_loss:
            best_loss, best_epoch = history[-1][2], epoch
            best_state = copy.deepcopy(model.state_dict())
        if args.max_steps is not None and steps >= args.max_steps:
            break
    model.load_state_dict(best_state)
    print(f"kept epoch {best_epoch} (validation {best_loss:.6f})", flush=True)
    if best_epoch == 0:
        # Still written (the run is reproducible), but what training learnt did not
        # hold on other games: say so where the run is read.
        start = (
            "the hand-written evaluation plus a near-zero correction" if correction else "random"
        )
        print(
            f"{PROG}: warning: no epoch did better on the held-out games than before "
            f"training: the file is the untrained network ({start})",
            file=sys.stderr,
            flush=True,
        )
    hand_index = val[:HAND_EVAL_MAX]
    if correction:
        hand_cp = base[hand_index].tolist()
    else:
        hand_cp = hand_eval_cp(hand_index, _fens(args.data, args.max_positions))
    hand_k, hand_best = best_k_mse(hand_cp, target[hand_index])
    scale = {"k": args.k, "hand": hand_k}.get(args.scale) or float(args.scale)
    if correction:
        # A damped correction: its loss is worse, its play was better (docs/training.md).
        scale = args.k * args.correction_scale
    net = quantise(model, scale, BASE_HAND if correction else BASE_NONE)
    net.write(args.out)
    size = args.out.stat().st_size
    net_cp = quantised_cp(net, data, val) + base[val]
    added = ", added to the hand-written evaluation" if correction else ""
    if correction and args.correction_scale != 1:
        added += f" at {args.correction_scale:g} of its fitted size"
    print(f"wrote {args.out} ({size} bytes, hidden {args.hidden}, {net.scale} cp per unit{added})")
    # The loss of sigmoid(output / K): a correction's cp are the labels' (K is --k),
    # a network alone's in the units its file gives them.
    loss_k = args.k if correction else net.scale
    print(f"validation loss, quantised network: {mse(net_cp, target[val], loss_k):.6f}")
    on_same = mse(net_cp[: len(hand_index)], target[hand_index], loss_k)
    print(
        f"on {len(hand_index)} validation positions: network {on_same:.6f}, "
        f"hand-written evaluation {mse(hand_cp, target[hand_index], args.k):.6f} at K {args.k:g}, "
        f"{hand_best:.6f} at its best K {hand_k:g}"
    )
    if args.plot is not None:
        plot(history, args.plot, args.hidden)
    print(f"seconds {time.monotonic() - began:.1f}")
    return 0


def plot(history: list[tuple[int, float, float]], path: Path, hidden: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    epochs = [h[0] for h in history]
    axes.plot(epochs, [h[1] for h in history], marker="o", label="train")
    axes.plot(epochs, [h[2] for h in history], marker="o", label="validation")
    axes.set_xlabel("epoch")
    axes.set_ylabel("loss (MSE of win probability)")
    axes.set_title(f"768 -> {hidden} -> 1")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        return train(args)
    except (UsageError, DataError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
