"""Fit Cutoff's win/draw/loss model (engine/core/wdl.py) to Cutoff's own games.

    python -m scripts.tuning.fit_wdl GAMES.pgn [...] [--holdout 4] [--plot FILE]
                                     [--json FILE] [--write]

The games are match PGNs (plain or gzip'd) as ``cutoff-match`` writes them: every move's comment
starts with the mover's score (``+0.25/12``, ``-M3/9``). Each scored move gives
one sample: the mover's score in centipawns, the material on the board before
the move (engine/core/wdl.py's ``material``) and the game's result from the mover's
side. Mate scores are left out (the model treats them as certain).

The fit maximises the likelihood of the results under the model
``win = 1 / (1 + exp((a - cp) / b))``, ``loss = 1 / (1 + exp((a + cp) / b))``,
``a`` and ``b`` quadratic in ``material / 78``, by gradient descent (Adam, fixed
start, fixed step count: the same games give the same figures). Every
``--holdout``-th game (by its order in the files) is kept out of the fit and used
to check it: for bins of the score, the expected score the model predicts
against the one observed in those games, and the mean squared error of both
models (Cutoff's and lichess's formula) on them.

``--write`` replaces the ``CUTOFF_MODEL`` line of engine/core/wdl.py with the fit;
``--plot`` draws the fit and the check (matplotlib, the ``plot`` extra).
This script reads games and writes only the files it is asked to.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import chess
import chess.pgn
import numpy as np
import numpy.typing as npt

from engine.core.wdl import MATERIAL_MAX, WdlModel, lichess_winning_chances, material

from ..common import REPORTED_FAILURES, ToolParser, UsageError, report_failure

DEGREE = 2
"""Polynomial degree of a(m) and b(m) by default (``--degree``)."""
STEPS = 4000
LEARNING_RATE = 0.05
SCORE_LIMIT_CP = 2000
"""Larger (non-mate) scores are left out: won positions the engine had not yet converted."""
BIN_EDGES_CP = (-1000, -400, -200, -100, -50, 0, 50, 100, 200, 400, 1000)

_SCORE = re.compile(r"^\s*([+-])(M?)(\d+(?:\.\d+)?)/")
F64 = npt.NDArray[np.float64]


@dataclass
class Samples:
    """Scored moves: the mover's score, the material and the mover's result (1, 0.5, 0)."""

    cp: F64
    material: F64
    result: F64
    games: int

    @classmethod
    def empty(cls) -> Samples:
        return cls(np.zeros(0), np.zeros(0), np.zeros(0), 0)


def read_samples(paths: Sequence[Path], holdout: int) -> tuple[Samples, Samples]:
    """(fit, check) samples from every game of every file; every ``holdout``-th game checks."""
    rows: tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]] = ([], [])
    counts = [0, 0]
    number = 0
    for path in paths:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                white_result = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(
                    game.headers.get("Result", "*")
                )
                if white_result is None or game.errors:
                    continue
                number += 1
                side = 1 if holdout and number % holdout == 0 else 0
                counts[side] += 1
                board = game.board()
                for node in game.mainline():
                    match = _SCORE.match(node.comment)
                    if match is not None and not match.group(2):
                        cp = float(match.group(3)) * 100 * (1 if match.group(1) == "+" else -1)
                        if abs(cp) <= SCORE_LIMIT_CP:
                            mover_result = white_result if board.turn else 1.0 - white_result
                            rows[side].append((cp, float(material(board)), mover_result))
                    board.push(node.move)

    def samples(part: int) -> Samples:
        if not rows[part]:
            return Samples.empty()
        data = np.array(rows[part], dtype=np.float64)
        return Samples(data[:, 0], data[:, 1], data[:, 2], counts[part])

    return samples(0), samples(1)


def _powers(material_count: F64, degree: int) -> F64:
    m = material_count / MATERIAL_MAX
    return np.stack([m**i for i in range(degree + 1)], axis=1)


def _sigmoid(x: F64) -> F64:
    out: F64 = 1.0 / (1.0 + np.exp(-np.clip(x, -500, 500)))
    return out


def fit(samples: Samples, degree: int = DEGREE) -> WdlModel:
    """The maximum-likelihood model for ``samples`` (Adam on the mean negative log-likelihood)."""
    powers = _powers(samples.material, degree)
    wins = samples.result == 1.0
    losses = samples.result == 0.0
    # Parameters scaled so that one step moves every coefficient alike.
    scale = 100.0
    theta = np.zeros(2 * (degree + 1))
    theta[0], theta[degree + 1] = 1.5, 1.0  # a = 150 cp, b = 100 cp
    first, second = np.zeros_like(theta), np.zeros_like(theta)
    for step in range(1, STEPS + 1):
        a = powers @ theta[: degree + 1] * scale
        b = np.maximum(powers @ theta[degree + 1 :] * scale, 1.0)
        p_win = _sigmoid((samples.cp - a) / b)
        p_loss = _sigmoid((-samples.cp - a) / b)
        p_draw = np.maximum(1.0 - p_win - p_loss, 1e-9)
        # d p_win / d a = -p_win (1 - p_win) / b; d p_win / d b = -p_win (1 - p_win) (cp - a) / b^2
        dw = p_win * (1 - p_win)
        dl = p_loss * (1 - p_loss)
        dwin_da, dloss_da = -dw / b, -dl / b
        dwin_db = -dw * (samples.cp - a) / b**2
        dloss_db = -dl * (-samples.cp - a) / b**2
        # d(-log p)/d(param) for the observed outcome of each sample
        grad_a = np.where(
            wins,
            -dwin_da / np.maximum(p_win, 1e-9),
            np.where(losses, -dloss_da / np.maximum(p_loss, 1e-9), (dwin_da + dloss_da) / p_draw),
        )
        grad_b = np.where(
            wins,
            -dwin_db / np.maximum(p_win, 1e-9),
            np.where(losses, -dloss_db / np.maximum(p_loss, 1e-9), (dwin_db + dloss_db) / p_draw),
        )
        gradient = np.concatenate([powers.T @ grad_a, powers.T @ grad_b]) * scale / len(powers)
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient**2
        corrected = first / (1 - 0.9**step) / (np.sqrt(second / (1 - 0.999**step)) + 1e-12)
        theta -= LEARNING_RATE * corrected
    a_coefficients = tuple(round(float(c) * scale, 3) for c in theta[: degree + 1])
    b_coefficients = tuple(round(float(c) * scale, 3) for c in theta[degree + 1 :])
    return WdlModel(a_coefficients, b_coefficients, samples.games, len(samples.cp))


def expected_scores(model: WdlModel, samples: Samples) -> F64:
    """The model's expected score (win + draw / 2) of every sample."""
    out = np.empty(len(samples.cp))
    for i, (cp, count) in enumerate(zip(samples.cp, samples.material)):
        win, draw, _ = model.probabilities(float(cp), int(count))
        out[i] = win + draw / 2
    return out


def lichess_scores(samples: Samples) -> F64:
    """lichess's formula as an expected score, (1 + winning chances) / 2."""
    return np.array(
        [(1 + lichess_winning_chances(chess.engine.Cp(int(cp)))) / 2 for cp in samples.cp]
    )


def check(model: WdlModel, samples: Samples) -> dict[str, object]:
    """Predicted against observed expected score on held-out games, by score bin."""
    predicted = expected_scores(model, samples)
    lichess = lichess_scores(samples)
    bins = []
    edges = (-SCORE_LIMIT_CP, *BIN_EDGES_CP, SCORE_LIMIT_CP + 1)
    for low, high in zip(edges, edges[1:]):
        inside = (samples.cp >= low) & (samples.cp < high)
        count = int(inside.sum())
        if count:
            bins.append(
                {
                    "cp": [low, high],
                    "positions": count,
                    "observed": round(float(samples.result[inside].mean()), 4),
                    "predicted": round(float(predicted[inside].mean()), 4),
                }
            )
    return {
        "games": samples.games,
        "positions": len(samples.cp),
        "mse_cutoff": round(float(((predicted - samples.result) ** 2).mean()), 5),
        "mse_lichess": round(float(((lichess - samples.result) ** 2).mean()), 5),
        "largest_bin_gap": max(
            (abs(b["observed"] - b["predicted"]) for b in bins if b["positions"] >= 100),  # type: ignore[operator]
            default=0.0,
        ),
        "bins": bins,
    }


def model_line(model: WdlModel) -> str:
    """The statement of engine/core/wdl.py that holds the fitted model, as ruff formats it
    (one line when it fits in 100 characters)."""
    arguments = f"a={model.a}, b={model.b}, games={model.games}, positions={model.positions}"
    line = f"CUTOFF_MODEL: Final = WdlModel({arguments})"
    return line if len(line) <= 100 else f"CUTOFF_MODEL: Final = WdlModel(\n    {arguments}\n)"


_MODEL_STATEMENT = re.compile(r"^CUTOFF_MODEL: Final = WdlModel\((?:[^()]|\([^()]*\))*\)", re.M)


def write_model(model: WdlModel, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    new, count = _MODEL_STATEMENT.subn(lambda _: model_line(model), text, count=1)
    if count != 1:
        raise UsageError(f"{path}: no CUTOFF_MODEL statement to replace")
    path.write_text(new, encoding="utf-8")


def plot(model: WdlModel, held_out: Samples, report: dict[str, object], path: Path) -> None:
    """Win/draw/loss curves at three materials, and the held-out check."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from engine.extras import install_hint

        raise UsageError(f"--plot needs matplotlib: {install_hint('plot')}") from None
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    scores = np.linspace(-600, 600, 241)
    for count, colour in ((78, "#1f5fa8"), (45, "#2ca02c"), (20, "#d62728")):
        wdl = [model.probabilities(float(cp), count) for cp in scores]
        left.plot(scores, [w for w, _, _ in wdl], color=colour, label=f"win, material {count}")
        left.plot(scores, [d for _, d, _ in wdl], color=colour, linestyle="--", label="draw")
    left.set_xlabel("Cutoff's score (cp, side to move)")
    left.set_ylabel("probability")
    left.set_title("Cutoff's WDL model")
    left.legend(fontsize=7, frameon=False)
    bins = report["bins"]
    assert isinstance(bins, list)
    centres = [sum(b["cp"]) / 2 for b in bins]
    right.plot(centres, [b["observed"] for b in bins], "o", label="observed (held-out games)")
    right.plot(centres, [b["predicted"] for b in bins], "-", label="Cutoff's model")
    lichess = [(1 + lichess_winning_chances(chess.engine.Cp(int(c)))) / 2 for c in centres]
    right.plot(centres, lichess, ":", label="lichess's formula")
    right.set_xlabel("score bin centre (cp)")
    right.set_ylabel("expected score")
    right.set_title(f"check on {held_out.games} held-out games")
    right.legend(fontsize=7, frameon=False)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(
        prog="python -m scripts.tuning.fit_wdl",
        description="Fit Cutoff's win/draw/loss model to its own match games.",
    )
    parser.add_argument("pgn", nargs="+", type=Path, help="match PGNs with score comments")
    parser.add_argument("--holdout", type=int, default=4, help="every Nth game checks the fit")
    parser.add_argument("--plot", type=Path, help="draw the fit and the check to this PNG")
    parser.add_argument("--json", type=Path, help="write the fit and the check as JSON")
    parser.add_argument(
        "--degree", type=int, default=DEGREE, help=f"degree of a(m), b(m) (default {DEGREE})"
    )
    parser.add_argument("--write", action="store_true", help="update engine/core/wdl.py")
    args = parser.parse_args(argv)
    try:
        for path in args.pgn:
            if not path.is_file():
                raise UsageError(f"{path}: no such file")
        fitted, held_out = read_samples(args.pgn, args.holdout)
        if len(fitted.cp) < 50:
            raise UsageError(f"only {len(fitted.cp)} scored moves: too few to fit")
        model = fit(fitted, args.degree)
        report: dict[str, object] = {
            "model": {
                "a": model.a,
                "b": model.b,
                "games": model.games,
                "positions": model.positions,
            },
            "check": check(model, held_out) if len(held_out.cp) else None,
        }
        print(model_line(model))
        print(json.dumps(report["check"], indent=1))
        if args.json:
            args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        if args.plot and report["check"] is not None:
            plot(model, held_out, report["check"], args.plot)  # type: ignore[arg-type]
        if args.write:
            write_model(model, Path(__file__).resolve().parents[2] / "engine" / "core" / "wdl.py")
    except REPORTED_FAILURES as error:
        return report_failure(parser.prog, error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
