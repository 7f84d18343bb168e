"""Playing: the UCI session and what it drives.

Owns the UCI session, the controller between protocol and search, the option
table, boards from the outside (``position`` arguments, playability, perft), the
opening book, weakened play, Lazy SMP and the bench. The modules, one line each:
the map in engine/__init__.py's docstring.

It imports the search core and nothing above it. It must not analyse files, write
reports or plot: that is the analysis layer, which uses this one.
"""
