"""Cutoff: a UCI chess engine in Python, built on python-chess.

Architecture map (one concept per module):

- ``__main__``   ``cutoff``: the UCI loop by default, the subcommands with arguments.
- ``cli``        the subcommands on argparse: analyse, annotate, stats, bench.
- ``uci``        the UCI session; the only module that reads stdin or writes stdout.
- ``uci_text``   the text of output lines: info, moves, the ``d`` board (pure).
- ``boards``     boards from outside: ``position`` arguments, playability, perft.
- ``options``    the UCI option table.
- ``controller`` facade between protocol and search; owns position, TT, histories.
- ``limits``     ``SearchLimits``: a parsed ``go`` command.
- ``timeman``    limits + clock -> deadlines, and when to stop deepening (pure).
- ``position``   chess.Board plus incremental Zobrist key, evaluation terms and key history.
- ``search``     iterative deepening, aspiration, PVS negamax, quiescence.
- ``movepick``   the staged move picker: TT move, captures, killers, quiets, bad captures.
- ``tt``         bounded transposition table.
- ``see``        static exchange evaluation.
- ``score``      score constants, mate helpers, UCI score formatting.
- ``evaluate``   static evaluation from the side to move's view (fast, cached).
- ``features``   the evaluation's terms as counts: layout and reference extractor.
- ``weights``    the tuned evaluation weights (engine/weights.json, written by the tuner).
- ``psqt``       the weights' piece-square block folded for incremental updates.
- ``pesto``      PeSTO's tables: the tuner's starting point (data only).
- ``bench``      fixed positions to a fixed depth: node count and speed.
- ``book``       the opening book (Polyglot, through chess.polyglot).
- ``tablebase``  Syzygy and Gaviota tables: root moves and tree probes.
- ``strength``   weakened play: UCI_Elo and Skill Level.
- ``smp``        Lazy SMP: helper processes over a shared-memory table.
- ``analysis``   the Python API: Analyser, results as python-chess InfoDicts.
- ``inputs``     positions from FENs, EPD and PGN files, stdin.
- ``batch``      batch analysis: one record per position, JSON/CSV/table writers.
- ``parallel``   the execution layer: here, local processes, or Dask.
- ``annotate``   annotated games: evaluations, judgements, summary, graph.
- ``textbook``   minimax, alpha-beta and PVS as taught, instrumented.
- ``stats``      cutoff stats: what alpha-beta saves, measured.
- ``plots``      matplotlib, optional and headless: the rule annotate and stats share.
- ``compiled``   cutoff compile: the hot modules built by mypyc; the stale-build guard.

Glossary:

- ply: one half-move; depth is counted in plies.
- alpha, beta: the window; scores <= alpha fail low, scores >= beta fail high.
- pv: principal variation, the line the search expects.
- tt: transposition table, a cache of search results keyed by Zobrist key.
- qsearch: quiescence search, captures only, to reach quiet positions.
- cp: centipawn, 1/100 of a pawn; scores are in cp from the side to move's view.
- mvv-lva: most valuable victim, least valuable attacker (capture ordering).
- killer: a quiet move that caused a beta cutoff at the same ply in a sibling.
- history: per (colour, from, to) score of quiet moves: raised when one causes a
  cutoff, lowered when one searched before the cutoff failed (bounded: "gravity").
- counter move: the quiet move that last refuted a given opponent move (by its
  from and to squares).
- lmr: late move reductions; see: static exchange evaluation.
- mg, eg: middlegame and endgame parts of a score, blended by the game phase.
- texel tuning: fitting evaluation weights to game results through a logistic.
"""

__version__ = "0.1.0"
ENGINE_NAME = "Cutoff"
ENGINE_AUTHOR = "the Cutoff developers"

from engine.compiled import guard as _guard  # noqa: E402 (after the constants)

_guard()  # before any other engine module: a stale compiled build must not load
