"""Tuning: Texel tuning of the evaluation, and SPSA of the search's and clock's constants.

Responsible for making tuning data (self-play positions with game results and the
playing engine's scores), fitting the evaluation weights to it, fitting Cutoff's
win/draw/loss model to its games, and tuning the engine's constants by games against
an outside opponent (``spsa``, ``cutoff-tune``). The data is the training data's format
(scripts.training.dataset): a deeper search's scores replace the playing engine's
with scripts.training's one labeller (``datagen --fens FILE.gz``); the games are
played by the one self-play loop, in scripts.training.engines. The modules, one line each: the
map in scripts/__init__.py's docstring. These tools write only the files they are
told to write; in particular ``tune`` replaces the shipped
``engine/core/weights.json`` only with ``--install``. The engine must never import
this package.
"""
