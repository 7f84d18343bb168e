"""Robustness tools: hostile sessions against the engine process.

Responsible for using the ``cutoff`` process as a hostile GUI, user or container
would, and reporting what broke. The modules, one line each: the map in
scripts/__init__.py's docstring. Nothing here changes the engine's code.
"""
