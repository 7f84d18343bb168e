"""Cutoff's tools, by task: matches, tuning, training, speed, robustness and packaging.

Responsible for nothing itself: it makes ``scripts`` a package, so that every tool
runs as ``python -m scripts.<task>.<tool>`` from the repository root and the tools
share code through relative imports. ``pip install .`` installs the same package as
``cutoff_scripts`` (console scripts ``cutoff-match``, ``cutoff-epd``, ``cutoff-ladder``,
``cutoff-pool`` and ``cutoff-tune``).

Nothing here may be imported by the engine, and modules here must not change
``sys.path``: they import each other relatively and the engine as ``engine``.

The tools' map, by task (one line per module; names are relative to ``scripts``).
This is the one map of scripts/'s modules: the subpackages' docstrings say what a
package is for and point here, and tests/test_architecture.py fails when a module is
missing here or a name here is no module. The engine's map is engine/__init__.py's.

What the tools share:

- ``common``                      the argument parser, ``--engine`` parsing, output files,
                                  failures as one line.

``matches``: engine-vs-engine matches and the tools around them (data: ``sprt.sh``, the
project's standard strength test, and ``openings/``, the shipped openings):

- ``matches.match``               ``cutoff-match``: two UCI engines, colour-swapped game
                                  pairs, Elo and SPRT.
- ``matches.match_args``          the match's command line: options, presets, validation.
- ``matches.config``              the validated settings of one match.
- ``matches.errors``              the runner's two exceptions: bad input, a stop before any game.
- ``matches.engines``             the ``--engine`` spec and the running engine process.
- ``matches.time_controls``       what bounds an engine's moves: clocks, movetime, depth, nodes.
- ``matches.match_openings``      the starting positions of a match, read and checked.
- ``matches.games``               one game: the game loop, clocks, watchdogs, the PGN record.
- ``matches.adjudication``        ending a game early by the engines' own scores.
- ``matches.runner``              the match itself: concurrent workers, stop rules, signals.
- ``matches.pairs``               one colour-swapped pair as a task of the execution layer.
- ``matches.dispatch``            the match on Dask (``match --scheduler``).
- ``matches.tally``               the score so far and the summary (text or JSON).
- ``matches.elo``                 the statistics: Elo, 95 % intervals, LOS, the SPRT (pure).
- ``matches.pool``                ``cutoff-pool``: several match PGNs of one engine as one match.
- ``matches.ladder``              ``cutoff-ladder``: one engine against calibrated levels.
- ``matches.calibrate``           weakened play's anchors measured by ladders, written as data.
- ``matches.drivers``             what the tools that play match after match check first.
- ``matches.epd_suite``           ``cutoff-epd``: an engine over an EPD test suite.
- ``matches.variant``             a copy of the engine with module constants changed.
- ``matches.match_pgn``           reading match PGNs for the post-match tools.
- ``matches.clock_use``           where the clock went: the engines' time use in a match.
- ``matches.turning_points``      where a match's games were decided, by the engines' scores.
- ``matches.turning_evals``       what Stockfish's and Cutoff's evaluations said at those points.
- ``matches.paired``              two versions of an engine on the same openings, paired.
- ``matches.opening_lines``       opening positions (EPD or FEN lines) written as PGN games.
- ``matches.polyglot_book``       a Polyglot book (``.bin``) from the first moves of PGN games.

``tuning``: Texel tuning of the hand-written evaluation, the WDL model's fit, and SPSA
of the engine's constants:

- ``tuning.make_tuning_data``     labelled positions from self-play games of a UCI engine.
- ``tuning.tune``                 the Texel fit of the evaluation weights (numpy).
- ``tuning.pesto``                PeSTO's tables: the fit's starting point (data only).
- ``tuning.fit_wdl``              Cutoff's win/draw/loss model fitted to its own games.
- ``tuning.spsa``                 ``cutoff-tune``: SPSA of the search's and clock's constants
                                  against an outside opponent.
- ``tuning.spsa_history``         ``cutoff-tune report``: a run's constants against the
                                  games' noise, whether they settled, its plot.

``training``: training data and training of the learned evaluation (issue 68):

- ``training.recipe``             one command from nothing to a trained network.
- ``training.datagen``            the labelling tool: positions from self-play, PGNs, FEN
                                  lists or data files, labelled by a teacher, written as data.
- ``training.dataset``            the data file: gzip'd ``FEN;SCORE;RESULT`` lines, and its reader.
- ``training.records``            the binary data file: 32-byte position records, their reader
                                  and the network's inputs of a batch (numpy).
- ``training.store``              chunked stores of records with committed manifests:
                                  convert, verify, dedup, split, info.
- ``training.engines``            the UCI engines the data tools drive: the self-play loop
                                  (``GameRunner``) and a teacher's search (``Labeller``).
- ``training.games``              match games kept compactly as training data.
- ``training.leaves``             the positions the search evaluates, sampled for labels.
- ``training.distill``            positions relabelled with Cutoff's own static evaluation.
- ``training.fit``                how well evaluations fit labelled positions.
- ``training.teachers``           which teacher to label with: label error against machine time.
- ``training.train``              the network trained (text data or stores; the ``train``
                                  extra, numba) and written; checkpoints, a benchmark.
- ``training.kernel``             the trainer's arithmetic: forward, gradients, Adam (numba).

``speed``: speed measurements of the engine:

- ``speed.speed``                 the search's speed against python-chess's raw perft.
- ``speed.yardstick``             python-chess's perft rate: the host's speed, which
                                  scales a ladder's clock.
- ``speed.compare_nps``           bench nodes/s of several builds, alternating, as ratios.
- ``speed.widths``                what a network of each width costs the search, on one tree.
- ``speed.eval_profile``          where the evaluation's time goes.
- ``speed.startup_bench``         process start to ``uciok`` (median of N runs).
- ``speed.latency``               how late an engine answers ``go movetime``, as a GUI sees it.

``robustness``: hostile use of the engine process:

- ``robustness.fuzz_sessions``    hostile UCI sessions: bad files, small /dev/shm, kills.

``packaging``: the engine for users who do not run ``pip`` (data: ``cutoff.cmd``, the
Windows GUI launcher):

- ``packaging.build_exe``         the one-file PyInstaller executable.
"""
