"""Speed measurements of the engine: nodes/s, start-up time, answer latency, eval cost.

Responsible for measuring and printing. The modules, one line each: the map in
scripts/__init__.py's docstring. These tools must not change the engine or any file
of the repository.
"""
