"""Cutoff: a UCI chess engine in Python, built on python-chess.

Architecture map, by layer (one concept per module). This is the one map of engine/'s
modules, and of perft's: the packages' own docstrings say what a package is for and
point here. Names are relative to ``engine``, perft's are written in full.
tests/test_architecture.py fails when a module is missing here or a name here is no
module. The tools' map is scripts/__init__.py's docstring.

The package root, the compiled build, the extras' install hint and child processes
(``engine``, ``engine.compiled``, ``engine.extras``, ``engine.processes``):

- ``compiled``           cutoff compile: the hot modules built by mypyc; the stale-build guard.
- ``extras``             the one install hint for an optional extra (``pip install '...[plot]'``).
- ``processes``          child processes (helpers, workers) started without the caller's
                         ``__main__``.

``engine.core``: the search:

- ``core.bitboards``     the search board's constants, bit helpers, attack tables and Zobrist keys.
- ``core.board``         the search board in native 64-bit integers (mypyc): make/unmake, Polyglot
                         keys, repetitions, psqt sums and the network's accumulator: what the
                         search runs on.
- ``core.evaluate``      static evaluation of the search board, side to move's view (cached).
- ``core.exchange``      static exchange on the search board: ``see_ge``, ``see``.
- ``core.features``      the evaluation's terms as counts: layout and reference extractor.
- ``core.limits``        ``SearchLimits``: a parsed ``go`` command.
- ``core.movegen``       legal moves on the search board in the picker's stages, checks, perft.
- ``core.movepick``      the staged move picker: TT move, captures, killers, quiets, bad captures.
- ``core.nnue``          the learned evaluation's network: its file format, and its evaluation in
                         integers.
- ``core.nnue_eval``     the network as the search's evaluation: ``NetworkEvaluator``.
- ``core.psqt``          the weights' piece-square block folded for incremental updates.
- ``core.score``         score constants, mate helpers, UCI score formatting.
- ``core.search``        iterative deepening, aspiration, PVS negamax, quiescence.
- ``core.tablebase``     Syzygy and Gaviota tables: root moves and tree probes.
- ``core.timeman``       limits + clock -> deadlines, and when to stop deepening (pure).
- ``core.tt``            bounded transposition table.
- ``core.tunables``      the search's and clock's tunable constants (``CUTOFF_TUNE``).
- ``core.wdl``           win/draw/loss: what a score means in games, by Cutoff's own model or
                         lichess's formula.
- ``core.weights``       the tuned evaluation weights (engine/core/weights.json, written by the
                         tuner).

``engine.play``: playing, the UCI session:

- ``play.bench``         fixed positions to a fixed depth: node count and speed.
- ``play.boards``        boards from outside: ``position`` arguments, playability, perft.
- ``play.book``          the opening book (Polyglot, through chess.polyglot).
- ``play.controller``    facade between protocol and search; owns position, TT, histories.
- ``play.options``       the UCI option table.
- ``play.smp``           Lazy SMP: helper processes over a shared-memory table.
- ``play.uci``           the UCI session; the only module that reads stdin or writes stdout.
- ``play.uci_text``      the text of output lines: info, moves, the ``d`` board (pure).
- ``play.weakened``      weakened play: UCI_Elo and Skill Level (anchors: calibration.json).

``engine.analysis``: analysis from Python and files:

- ``analysis.accuracy``  accuracy and average centipawn loss of each side of a game, overall and by
                         phase.
- ``analysis.annotate``  annotated games: evaluations, judgements, summary, graph.
- ``analysis.api``       the Python API: Analyser, results as python-chess InfoDicts.
- ``analysis.batch``     batch analysis: one record per position, JSON/CSV/table writers.
- ``analysis.inputs``    positions from FENs, EPD and PGN files, stdin.
- ``analysis.outputs``   output files checked against the inputs: no tool overwrites what it reads.
- ``analysis.parallel``  the execution layer: here, local processes, or Dask.
- ``analysis.plots``     matplotlib, optional and headless: the rule annotate and stats share.
- ``analysis.stats``     cutoff stats: what alpha-beta saves, measured.
- ``analysis.textbook``  minimax, alpha-beta and PVS as taught, instrumented.

The command line (``engine.cli``, ``engine.__main__``):

- ``__main__``           ``cutoff``: the UCI loop by default, the subcommands with arguments.
- ``cli``                the subcommands on argparse: analyse, annotate, stats, bench.

``perft``, beside the engine (it uses the engine, never the reverse): leaf counts of the
legal move tree, to validate move generation and the incremental state:

- ``perft.core``         the walks: ``perft``, ``divide``, ``perft_checked`` (which also
                         verifies the engine's incremental state at every node).
- ``perft.native``       the native search board (``core.board``) as a perft walker and the
                         ``--check-state`` walker.
- ``perft.suite``        EPD perft suites (shipped in perft/suites): finding and parsing them.
- ``perft.cli``          the ``python -m perft`` command line: one position or a suite.
- ``perft.__main__``     ``python -m perft``: hands the command line to ``perft.cli``.

Dependency rule (tests/test_architecture.py reads the list below): a module
imports only from its own layer and the layers listed before it, and no imports form
a cycle anywhere in the repository. ``NAME.*`` is a package and all its modules; a
bare name is that module alone. perft and scripts use the engine; the engine imports
neither.

    layer 0: engine engine.compiled engine.extras engine.processes
    layer 1: engine.core.*
    layer 2: engine.play.*
    layer 3: engine.analysis.*
    layer 4: engine.cli engine.__main__
    layer 5: perft.*
    layer 6: scripts.*

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
