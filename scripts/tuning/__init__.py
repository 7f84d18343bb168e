"""Texel tuning of the evaluation: labelled positions, engine scores and the fit.

Responsible for making tuning data (``make_tuning_data``: self-play positions with
game results; ``score_positions``: an engine's search score added) and fitting the
evaluation weights to it (``tune``). These tools write only the files they are told
to write; in particular ``tune`` replaces the shipped ``engine/core/weights.json`` only with
``--install``. The engine must never import this package.
"""
