"""The search core: board state, search, move ordering, evaluation and tables.

Owns what finds a move in a position: the board with incremental state, the search
and its move ordering, the evaluation (hand-tuned weights or the learned network),
the transposition table, endgame tables in the tree, scores and what they mean in
games, and a search's limits and deadlines. The hot modules are the ones ``cutoff
compile`` builds. The modules, one line each: the map in engine/__init__.py's
docstring.

This layer imports nothing else of the engine (only the package root's name and
version). It must not read or write the UCI protocol, know UCI options, start
processes or read users' files.
"""
