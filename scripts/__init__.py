"""Cutoff's tools, by task: matches, tuning, speed measurement and packaging.

Responsible for nothing itself: it makes ``scripts`` a package, so that every tool
runs as ``python -m scripts.<task>.<tool>`` from the repository root and the tools
share code through relative imports. ``pip install .`` installs the same package as
``cutoff_scripts`` (console scripts ``cutoff-match`` and ``cutoff-epd``).

Subpackages: ``matches`` (engine-vs-engine matches, their statistics, EPD suites,
engine variants), ``tuning`` (labelled positions and the Texel fit), ``speed``
(nodes/s, start-up and answer latency, the evaluation's cost) and ``packaging``
(the one-file executable, the Windows launcher). ``common`` holds what the tools
share: the argument parser, ``--engine`` parsing, output and failure reporting.

Nothing here may be imported by the engine, and modules here must not change
``sys.path``: they import each other relatively and the engine as ``engine``.
"""
