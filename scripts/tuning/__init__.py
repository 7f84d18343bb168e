"""Texel tuning of the evaluation: labelled positions, engine scores and the fit.

Responsible for making tuning data (``make_tuning_data``: self-play positions with
game results; ``score_positions``: an engine's search score as the label) and fitting
the evaluation weights to it (``tune``). The data is the training data's format
(scripts.training.dataset), the games and labels come from scripts.training.engines
(the one self-play loop and the one labeller). These tools write only the files they are told
to write; in particular ``tune`` replaces the shipped ``engine/core/weights.json`` only with
``--install``. The engine must never import this package.
"""
