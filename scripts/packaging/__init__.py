"""Ways to ship the engine to users who do not run ``pip``.

Responsible for the one-file PyInstaller build and the Windows GUI launcher
(``cutoff.cmd``, a data file). The modules, one line each: the map in
scripts/__init__.py's docstring. Nothing here changes the engine's code.
"""
