"""Ways to ship the engine to users who do not run ``pip``.

Responsible for the one-file PyInstaller build (``build_exe``) and the Windows GUI
launcher (``cutoff.cmd``, a data file). Nothing here changes the engine's code.
"""
