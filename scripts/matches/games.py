"""One game between two engines: the game loop, clocks, watchdogs and the PGN record.

Responsible for playing a game from its opening: sending each engine its limits and
both clocks, keeping the clocks (increments, moves per period, the overrun margin),
killing an engine that stalls, classifying every end (the rules, adjudication, time
forfeit, illegal move, crash, stall) and writing the PGN game with its reason. Every
way a game can end becomes a ``GameRecord``, never an exception. It must not schedule
games, restart engines or keep score: the runner and the tally do.
"""

from __future__ import annotations

import asyncio
import datetime
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import chess
import chess.engine
import chess.pgn

from .adjudication import MATE_CP, adjudicate
from .config import Config
from .engines import EngineProcess, spec_settings
from .match_openings import Opening
from .time_controls import Limits

# Extra seconds beyond the time budget before a silent engine counts as stalled.
DEFAULT_STALL_TIMEOUT_S = 10.0
# The same when no clock limits the move (depth / nodes only): searches may be long.
DEFAULT_STALL_TIMEOUT_UNTIMED_S = 60.0
# Seconds an engine may overrun its clock (or movetime) before it loses on time.
DEFAULT_MARGIN_S = 0.1
# Termination tag values (PGN standard words where one fits) per fault kind.
FAULT_TERMINATION = {
    "time forfeit": "time forfeit",
    "illegal move": "rules infraction",
    "crash": "abandoned",
    "stall": "stalled connection",
}


@dataclass(frozen=True)
class GameJob:
    number: int  # 1-based game number
    pair: int  # 0-based pair index; both games of a pair use the same opening
    first_is_white: bool  # whether engine 0 (the first --engine) has White
    opening: Opening


@dataclass
class GameRecord:
    job: GameJob
    result: str  # "1-0", "0-1" or "1/2-1/2"
    termination: str  # PGN Termination tag
    reason: str  # human-readable, also the Reason tag
    category: str  # reason without details, for the summary's counts
    fault_slot: Optional[int]  # engine index (0/1) that caused a fault, if any
    fault_kind: Optional[str]
    # The game as PGN text and its moves in UCI, not a chess.pgn.Game: a record is sent
    # back from a worker process (scripts.matches.pairs), and a long game's node tree
    # is deep to pickle.
    pgn: str
    moves: tuple[str, ...]

    @property
    def first_score(self) -> float:
        """Points of engine 0 in this game."""
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == self.job.first_is_white else 0.0


def _score_cp(info: chess.engine.InfoDict, mover: chess.Color) -> Optional[int]:
    score = info.get("score")
    if score is None:
        return None
    return score.pov(mover).score(mate_score=MATE_CP)


def _move_comment(info: chess.engine.InfoDict, mover: chess.Color, elapsed_s: float) -> str:
    parts = []
    score = info.get("score")
    if score is not None:
        pov = score.pov(mover)
        mate = pov.mate()
        text = (f"+M{mate}" if mate > 0 else f"-M{-mate}") if mate is not None else ""
        if mate is None:
            cp = pov.score()
            text = f"{(cp or 0) / 100:+.2f}"
        depth = info.get("depth")
        parts.append(f"{text}/{depth}" if depth is not None else text)
    parts.append(f"{elapsed_s:.3f}s")
    return " ".join(parts)


_ILLEGAL_RE = re.compile(r"(?:illegal|invalid) uci[^']*'([^']*)'")


def _uci_limit(
    limits: dict[chess.Color, Limits],
    clocks: dict[chess.Color, float],
    moves_made: dict[chess.Color, int],
    mover: chess.Color,
) -> chess.engine.Limit:
    """The `go` limits for the side to move: its own limits plus the clocks of both sides."""
    own = limits[mover]
    limit = chess.engine.Limit(time=own.movetime_s, depth=own.depth, nodes=own.nodes)
    if own.tc is None:
        return limit
    # The opponent's clock is sent too when it has one, as GUIs do.
    for colour, lim in limits.items():
        if lim.tc is None:
            continue
        if colour == chess.WHITE:
            limit.white_clock, limit.white_inc = clocks[colour], lim.tc.inc_s
        else:
            limit.black_clock, limit.black_inc = clocks[colour], lim.tc.inc_s
    if own.tc.moves:
        limit.remaining_moves = own.tc.moves - moves_made[mover] % own.tc.moves
    return limit


async def play_game(job: GameJob, engines: Sequence[EngineProcess], cfg: Config) -> GameRecord:
    """Play one game; every way it can end becomes a GameRecord, never an exception."""
    white_slot = 0 if job.first_is_white else 1
    slot_of = {chess.WHITE: white_slot, chess.BLACK: 1 - white_slot}
    board = job.opening.board()
    game = chess.pgn.Game()
    game.setup(chess.Board(job.opening.root_fen))
    node: chess.pgn.GameNode = game
    for move in job.opening.moves:
        node = node.add_variation(move)
    limits = {colour: engines[slot].spec.limits for colour, slot in slot_of.items()}
    clocks: dict[chess.Color, float] = {}
    moves_made: dict[chess.Color, int] = {chess.WHITE: 0, chess.BLACK: 0}
    for colour, lim in limits.items():
        if lim.tc:
            clocks[colour] = lim.tc.base_s
    evals: list[tuple[chess.Color, Optional[int]]] = []
    token = object()

    def finish(
        result: str,
        termination: str,
        reason: str,
        category: str,
        fault: Optional[tuple[chess.Color, str]] = None,
    ) -> GameRecord:
        fault_slot = slot_of[fault[0]] if fault else None
        _fill_headers(game, job, engines, white_slot, cfg, result, termination, reason, board)
        last = game.end()
        last.comment = f"{last.comment}, {reason}" if last.comment else reason
        return GameRecord(
            job,
            result,
            termination,
            reason,
            category,
            fault_slot,
            fault[1] if fault else None,
            str(game),
            tuple(move.uci() for move in game.mainline_moves()),
        )

    def forfeit(loser: chess.Color, kind: str, detail: str = "", why: str = "") -> GameRecord:
        name = engines[slot_of[loser]].name
        result = "0-1" if loser == chess.WHITE else "1-0"
        reason = f"{kind}{detail} by {name}" + (f" ({why})" if why else "")
        return finish(result, FAULT_TERMINATION[kind], reason, kind, (loser, kind))

    untimed_stall = cfg.stall_timeout_s or DEFAULT_STALL_TIMEOUT_UNTIMED_S
    for colour in (chess.WHITE, chess.BLACK):
        engine = engines[slot_of[colour]]
        try:
            await engine.new_game(token, untimed_stall)
        except asyncio.TimeoutError:
            engine.kill()
            return forfeit(colour, "stall", why="no readyok after ucinewgame")
        except chess.engine.EngineError:
            return forfeit(colour, "crash", why=engine.exit_description())

    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            reason = outcome.termination.name.lower().replace("_", " ")
            return finish(outcome.result(), "normal", reason, reason)

        mover = board.turn
        engine = engines[slot_of[mover]]
        lim = limits[mover]
        limit = _uci_limit(limits, clocks, moves_made, mover)
        budget = clocks[mover] if lim.tc else (lim.movetime_s or 0.0)
        if lim.tc and lim.movetime_s is not None:
            budget = min(budget, lim.movetime_s)
        timed = lim.tc is not None or lim.movetime_s is not None
        stall_extra = cfg.stall_timeout_s or (
            DEFAULT_STALL_TIMEOUT_S if timed else DEFAULT_STALL_TIMEOUT_UNTIMED_S
        )
        deadline = budget + cfg.margin_s + stall_extra if timed else stall_extra

        started = time.monotonic()
        try:
            played = await asyncio.wait_for(
                engine.proto().play(
                    board, limit, game=token, info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
                ),
                deadline,
            )
        except asyncio.TimeoutError:
            engine.kill()
            return forfeit(mover, "stall", why=f"no bestmove within {deadline:.1f}s")
        except chess.engine.EngineTerminatedError:
            return forfeit(mover, "crash", why=engine.exit_description())
        except chess.engine.EngineError as err:
            found = _ILLEGAL_RE.search(str(err))
            return forfeit(mover, "illegal move", f" {found.group(1) if found else str(err)}")
        elapsed = time.monotonic() - started

        best = played.move
        if best is None or best not in board.legal_moves:
            return forfeit(mover, "illegal move", f" {best.uci() if best else '(none)'}")

        if lim.tc:
            left = clocks[mover] - elapsed
            if left < -cfg.margin_s:
                return forfeit(
                    mover, "time forfeit", why=f"used {elapsed:.3f}s of {clocks[mover]:.3f}s"
                )
            moves_made[mover] += 1
            clocks[mover] = lim.tc.clock_after_move(left, moves_made[mover])
        if lim.movetime_s is not None and elapsed > lim.movetime_s + cfg.margin_s:
            return forfeit(
                mover, "time forfeit", why=f"used {elapsed:.3f}s of movetime {lim.movetime_s:g}s"
            )

        board.push(best)
        node = node.add_variation(best, comment=_move_comment(played.info, mover, elapsed))
        evals.append((mover, _score_cp(played.info, mover)))
        verdict = adjudicate(board, evals, cfg.adjudication)
        if verdict is not None:
            return finish(verdict[0], "adjudication", verdict[1], verdict[1])


def _fill_headers(
    game: chess.pgn.Game,
    job: GameJob,
    engines: Sequence[EngineProcess],
    white_slot: int,
    cfg: Config,
    result: str,
    termination: str,
    reason: str,
    board: chess.Board,
) -> None:
    white, black = engines[white_slot], engines[1 - white_slot]
    headers = game.headers
    headers["Event"] = cfg.event
    headers["Site"] = "?"
    headers["Date"] = datetime.date.today().strftime("%Y.%m.%d")
    headers["Round"] = f"{job.pair + 1}.{(job.number - 1) % 2 + 1}"
    headers["White"] = white.name
    headers["Black"] = black.name
    headers["Result"] = result
    white_tc = white.spec.limits.pgn_time_control()
    black_tc = black.spec.limits.pgn_time_control()
    if white_tc == black_tc:
        headers["TimeControl"] = white_tc
    else:
        headers["WhiteTimeControl"] = white_tc
        headers["BlackTimeControl"] = black_tc
    headers["Termination"] = termination
    headers["Reason"] = reason
    headers["Opening"] = job.opening.label
    # Which build played, and how it was set: without them a result cannot be traced
    # to what produced it (Cutoff's version does not change between commits).
    for side, engine in (("White", white), ("Black", black)):
        headers[f"{side}Engine"] = engine.identity
        headers[f"{side}Settings"] = spec_settings(engine.spec)
    headers["PlyCount"] = str(len(board.move_stack))
