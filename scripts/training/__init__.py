"""Training data and training of Cutoff's learned evaluation (issue 68).

Responsible for making labelled positions (labelled by a teacher engine, with one
tool, or by Cutoff itself), their file format, the engines the tools drive (the one
self-play loop and the one labeller), training the network (numba, from the
optional ``train`` extra), and all of it in one command. The modules, one line each:
the map in scripts/__init__.py's docstring. These tools write only the files they
are told to write. The engine must never import this package.
"""
