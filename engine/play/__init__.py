"""Playing: the UCI session and what it drives.

Owns the UCI session (``uci``, ``uci_text``), the controller between protocol and
search (``controller``), the option table (``options``), boards from the outside
(``boards``: ``position`` arguments, playability, perft), the opening book
(``book``), weakened play (``weakened``), Lazy SMP (``smp``) and the bench
(``bench``).

It imports the search core and nothing above it. It must not analyse files, write
reports or plot: that is the analysis layer, which uses this one.
"""
