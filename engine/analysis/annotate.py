"""Annotated games: evaluation comments, judgements, the better move, accuracy, a graph.

From the analysis of every position of a game (``Analyser.analyse_game``), this
module writes what viewers such as lichess show:

* every move gets an ``[%eval ...]`` comment: the evaluation after it, from
  White's view, in pawns or as ``#n`` for a mate;
* a move that throws away winning chances gets a NAG by lichess's rule: the
  mover's winning chances (-1 to +1) drop by at least 0.1 for an inaccuracy
  (``?!``), 0.2 for a mistake (``?``) and 0.3 for a blunder (``??``), that is
  10, 20 and 30 points on lichess's -100..+100 scale. The winning chances come
  from Cutoff's own win/draw/loss model (win minus loss probability, from the
  score and the material: engine/core/wdl.py) or, with ``win_model="lichess"``, from
  lichess's formula ``2 / (1 + exp(-0.00368208 * cp)) - 1`` (cp capped at
  +-1000), for figures that compare with lichess's;
* after such a move, the engine's better line is added as a variation;
* each side's accuracy and average centipawn loss (each move's loss against the
  best move's score, scores capped at +-1000 cp), for the game and by phase
  (engine/analysis/accuracy.py), in the PGN headers ``WhiteAccuracy``, ``BlackAccuracy``,
  ``WhiteACPL``, ``BlackACPL`` and in the game's summary comment.

``plot_evaluation`` draws the evaluation graph with matplotlib, an optional
extra (``engine.extras.install_hint("plot")``), imported only when called. This
module must not search: it reads analyses it is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

import chess
import chess.engine
import chess.pgn

from engine.analysis.accuracy import PHASES, SideFigures, game_figures, phases, win_percent
from engine.analysis.api import GamePosition
from engine.analysis.plots import save_figure, use_file_backend
from engine.core.wdl import lichess_winning_chances, model_winning_chances

CP_CEILING = 1000
"""Centipawn scores are capped here for centipawn loss."""
VARIATION_PLIES = 8
"""Longest better line added as a variation."""
WIN_MODELS = ("cutoff", "lichess")
"""Where winning chances come from: Cutoff's fitted WDL model, or lichess's formula."""

JUDGEMENTS: tuple[tuple[float, int, str], ...] = (
    (0.3, chess.pgn.NAG_BLUNDER, "Blunder"),
    (0.2, chess.pgn.NAG_MISTAKE, "Mistake"),
    (0.1, chess.pgn.NAG_DUBIOUS_MOVE, "Inaccuracy"),
)
"""(least drop in winning chances, NAG, name), worst first."""


def capped_cp(score: chess.engine.Score) -> int:
    """Centipawns capped at +-CP_CEILING; a mate counts as the cap."""
    return max(-CP_CEILING, min(CP_CEILING, score.score(mate_score=100_000) or 0))


def winning_chances(score: chess.engine.Score, board: chess.Board, win_model: str) -> float:
    """The winning chances (-1 to +1) of the side whose score it is, in ``board``."""
    if win_model == "lichess":
        return lichess_winning_chances(score)
    return model_winning_chances(score, board)


@dataclass(frozen=True)
class MoveJudgement:
    """What the analysis says of one move of the game."""

    ply: int
    mover: chess.Color
    move: chess.Move
    best: chess.engine.PovScore
    """The position's score before the move (best play)."""
    after: chess.engine.PovScore
    """The score after the move played."""
    best_line: list[chess.Move]
    drop: float
    """Loss of the mover's winning chances (0 when the move kept them)."""
    centipawn_loss: int
    nag: Optional[int]
    name: Optional[str]


@dataclass
class SideSummary:
    inaccuracies: int = 0
    mistakes: int = 0
    blunders: int = 0
    losses: list[int] = field(default_factory=list)
    figures: dict[str, SideFigures] = field(default_factory=dict)
    """Accuracy and ACPL for the game (``"game"``) and each phase."""

    @property
    def average_loss(self) -> float:
        return sum(self.losses) / len(self.losses) if self.losses else 0.0

    def text(self) -> str:
        counts = (
            (self.inaccuracies, "inaccuracy", "inaccuracies"),
            (self.mistakes, "mistake", "mistakes"),
            (self.blunders, "blunder", "blunders"),
        )
        parts = [f"{n} {one if n == 1 else many}" for n, one, many in counts]
        text = ", ".join(parts) + f", average centipawn loss {self.average_loss:.0f}"
        game = self.figures.get("game")
        if game is not None and game.accuracy is not None:
            text += f", accuracy {game.accuracy:.0f} %"
            by_phase = [
                f"{phase} {figures.accuracy:.0f} % / {figures.acpl:.0f}"
                for phase, figures in self.figures.items()
                if phase in PHASES and figures.accuracy is not None and figures.acpl is not None
            ]
            if by_phase:
                text += " (accuracy / ACPL: " + ", ".join(by_phase) + ")"
        return text


def judge(positions: list[GamePosition], win_model: str = "cutoff") -> list[MoveJudgement]:
    """One judgement per move: each position's analysis against the next one's."""
    judgements = []
    for before, after in zip(positions, positions[1:]):
        move = before.move
        assert move is not None
        mover = before.board.turn
        best = before.info["score"]
        played = after.info["score"]
        drop = max(
            0.0,
            winning_chances(best.pov(mover), before.board, win_model)
            - winning_chances(played.pov(mover), after.board, win_model),
        )
        loss = max(0, capped_cp(best.pov(mover)) - capped_cp(played.pov(mover)))
        best_line = list(before.info.get("pv", []))
        nag = name = None
        # The engine's own choice is never judged: a drop after it is the horizon's.
        if not best_line or best_line[0] != move:
            for least, code, label in JUDGEMENTS:
                if drop >= least:
                    nag, name = code, label
                    break
        judgements.append(
            MoveJudgement(
                before.ply,
                mover,
                move,
                best,
                played,
                list(before.info.get("pv", [])),
                drop,
                loss,
                nag,
                name,
            )
        )
    return judgements


def white_win_percents(positions: list[GamePosition], win_model: str = "cutoff") -> list[float]:
    """White's win % (0..100) in every position of the game."""
    return [
        win_percent(winning_chances(p.info["score"].white(), p.board, win_model)) for p in positions
    ]


def summarise(
    judgements: list[MoveJudgement],
    positions: Optional[list[GamePosition]] = None,
    win_model: str = "cutoff",
) -> dict[chess.Color, SideSummary]:
    """Each side's counts, ACPL and (given the positions) accuracy, overall and by phase."""
    sides = {chess.WHITE: SideSummary(), chess.BLACK: SideSummary()}
    for judgement in judgements:
        side = sides[judgement.mover]
        side.losses.append(judgement.centipawn_loss)
        if judgement.name == "Inaccuracy":
            side.inaccuracies += 1
        elif judgement.name == "Mistake":
            side.mistakes += 1
        elif judgement.name == "Blunder":
            side.blunders += 1
    if positions is not None and judgements:
        figures = game_figures(
            white_win_percents(positions, win_model),
            [j.centipawn_loss for j in judgements],
            [j.mover for j in judgements],
            phases([p.board for p in positions])[: len(judgements)],
        )
        for color, side in sides.items():
            side.figures = figures[color]
    return sides


def game_report(positions: list[GamePosition], win_model: str = "cutoff") -> dict[str, object]:
    """The game's figures as JSON-ready data: per side and phase, and per move."""
    judgements = judge(positions, win_model)
    sides = summarise(judgements, positions, win_model)
    names = {chess.WHITE: "white", chess.BLACK: "black"}
    return {
        "win_model": win_model,
        "sides": {
            names[color]: {
                "inaccuracies": side.inaccuracies,
                "mistakes": side.mistakes,
                "blunders": side.blunders,
                **{part: figures.as_dict() for part, figures in side.figures.items()},
            }
            for color, side in sides.items()
        },
        "moves": [
            {
                "ply": j.ply,
                "move": j.move.uci(),
                "drop": round(j.drop, 4),
                "centipawn_loss": j.centipawn_loss,
                "judgement": j.name,
            }
            for j in judgements
        ],
    }


def annotate_game(
    game: chess.pgn.Game,
    positions: list[GamePosition],
    engine_label: str,
    win_model: str = "cutoff",
    stopped: Optional[str] = None,
) -> chess.pgn.Game:
    """A copy of ``game``'s main line with evaluations, NAGs, better lines and a summary.

    ``stopped``: why the source game's main line was cut where it ends ("illegal move
    Ke3"), said in a comment there, so that the shorter game is not taken for the whole.
    """
    annotated = chess.pgn.Game()
    annotated.headers.update(game.headers)
    # The annotations are the engine's (the source's own comments are not copied); the
    # tag is also how a later run knows the file as its own (``outputs.CUTOFF_PGN``).
    annotated.headers["Annotator"] = engine_label
    annotated.setup(game.board())
    judgements = judge(positions, win_model)
    node: chess.pgn.GameNode = annotated
    for judgement in judgements:
        parent = node
        node = parent.add_variation(judgement.move)
        if judgement.nag is not None:
            node.nags.add(judgement.nag)
            line = judgement.best_line
            if line and line[0] != judgement.move:
                board = parent.board()
                node.comment = f"{judgement.name}. {board.san(line[0])} was best."
                variation = parent.add_variation(line[0])
                variation.add_line(line[1:VARIATION_PLIES])
        node.set_eval(judgement.after)
    sides = summarise(judgements, positions, win_model)
    for color, name in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
        game_figures_ = sides[color].figures.get("game")
        if game_figures_ is not None and game_figures_.accuracy is not None:
            annotated.headers[f"{name}Accuracy"] = f"{game_figures_.accuracy:.1f}"
            annotated.headers[f"{name}ACPL"] = f"{game_figures_.acpl or 0:.1f}"
    model = "Cutoff's WDL model" if win_model == "cutoff" else "lichess's formula"
    annotated.comment = (
        f"{engine_label}; winning chances by {model}. "
        f"White: {sides[chess.WHITE].text()}. Black: {sides[chess.BLACK].text()}."
    )
    if stopped is not None:
        # On the last move kept (on the game itself when none is): where a reader
        # of the annotated game sees the moves end.
        note = f"Cutoff: the game stops here: {stopped} in the source"
        node.comment = f"{node.comment} {note}" if node.comment else note
    return annotated


def move_axis(positions: list[GamePosition]) -> list[float]:
    """Each position's place on the graph's move axis: after White's move N at N,
    after Black's move N at N + 1/2 (so the start position, before 1. e4, is at 0.5).

    From the board's own move number and side to move, so that a game from a FEN
    header (Black to move at move 12, say) puts Black's first move at 12.5.
    """
    return [
        position.board.fullmove_number - (0.5 if position.board.turn == chess.WHITE else 0.0)
        for position in positions
    ]


def plot_evaluation(
    positions: list[GamePosition],
    path: Union[str, Path],
    title: str,
    win_model: str = "cutoff",
) -> None:
    """The evaluation graph (White's winning chances by move) as a PNG at ``path``."""
    use_file_backend()
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    moves = move_axis(positions)
    chances = white_win_percents(positions, win_model)
    figure, axes = plt.subplots(figsize=(10, 3.6), dpi=100)
    axes.fill_between(moves, chances, 50, where=[c >= 50 for c in chances], color="#e8e8e8")
    axes.fill_between(moves, chances, 50, where=[c < 50 for c in chances], color="#404040")
    axes.plot(moves, chances, color="#1f5fa8", linewidth=1.5)
    marks = {"Inaccuracy": "#56b4e9", "Mistake": "#e69f00", "Blunder": "#d62728"}
    for index, judgement in enumerate(judge(positions, win_model)):
        if judgement.name is not None:
            # At the position the move led to, where the curve shows the drop.
            x, y = moves[index + 1], chances[index + 1]
            axes.scatter([x], [y], color=marks[judgement.name], zorder=3, s=28)
    for name, colour in marks.items():
        axes.scatter([], [], color=colour, label=name, s=28)
    axes.axhline(50, color="#888888", linewidth=0.8)
    axes.set_ylim(0, 100)
    axes.set_xlim(moves[0], max(moves[-1], moves[0] + 0.5))
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # ticks at move numbers
    axes.set_xlabel("move")
    axes.set_ylabel("White's winning chances (%)")
    axes.set_title(title)
    axes.legend(loc="lower left", fontsize=8, frameon=False)
    figure.tight_layout()
    save_figure(figure, path)
    plt.close(figure)
