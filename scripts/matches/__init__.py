"""Engine-vs-engine matches and the tools around them.

Responsible for playing UCI engines against each other and reporting the result:
the match runner (``cutoff-match``) split by concern, its statistics, pooling and
rating ladders, EPD test suites, engine variants with switched constants, and the
post-match reports on clock use and turning points; with the data ``sprt.sh`` (the
project's standard strength test) and ``openings/`` (the shipped openings). The
modules, one line each: the map in scripts/__init__.py's docstring.

Engines are only ever commands: nothing in this package imports the engine's search
(``variant`` copies the engine's source, it does not import it). What it takes from
``engine`` is its execution layer, ``engine.analysis.parallel`` (which knows nothing
about chess), for matches on Dask (``match --scheduler``), and helpers that play no
game: the tolerant PGN reader (``engine.analysis.inputs``), the board checks
(``engine.play.boards``) and the compiled build's file names (``engine.compiled``).
"""
