"""The search core: board state, search, move ordering, evaluation and tables.

Owns what finds a move in a position: the board with incremental state
(``position``), the search (``search``), move ordering (``movepick``, ``see``,
``attacks``), the evaluation (``evaluate``, ``features``, ``weights``, ``psqt``,
``pesto``), the transposition table (``tt``), endgame tables in the tree
(``tablebase``), scores (``score``), and a search's limits and deadlines
(``limits``, ``timeman``). The hot modules are the ones ``cutoff compile`` builds.

This layer imports nothing else of the engine (only the package root's name and
version). It must not read or write the UCI protocol, know UCI options, start
processes or read users' files.
"""
