"""Texel tuning of the evaluation: labelled positions, engine scores and the fit.

Responsible for making tuning data (self-play positions with game results, and an
engine's search score added), fitting the evaluation weights to it, and fitting
Cutoff's win/draw/loss model to its games. The data is the training data's format
(scripts.training.dataset); the games and labels come from scripts.training.engines
(the one self-play loop and the one labeller). The modules, one line each: the map in
scripts/__init__.py's docstring. These tools write only the files they are told to
write; in particular ``tune`` replaces the shipped ``engine/core/weights.json`` only
with ``--install``. The engine must never import this package.
"""
