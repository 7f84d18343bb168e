"""Engine-vs-engine matches and the tools around them.

Responsible for playing UCI engines against each other and reporting the result:
``match`` (the runner's entry point, ``cutoff-match``) with the modules it is split
into by concern, ``stats`` (the pure statistics), ``epd_suite`` (test suites,
``cutoff-epd``), ``variant`` (engine copies with switched constants), ``sprt.sh``
(the project's standard strength test) and ``openings/`` (the shipped openings).

Nothing in this package imports the Cutoff engine: engines are only ever commands
(``variant`` copies the engine's source, it does not import it). The one import from
``engine`` is its execution layer, ``engine.analysis.parallel`` (which knows nothing about
chess), for matches on Dask (``match --scheduler``).
"""
