"""Training data and training of Cutoff's learned evaluation (issue 68).

Responsible for making labelled positions (``datagen``: self-play, match PGNs and
FEN files, labelled by a teacher engine), their file format (``dataset``), sampling
the positions the search evaluates (``leaves``), keeping match games compactly
(``games``), relabelling with Cutoff's own evaluation (``distill``), judging
evaluations on labelled positions (``fit``), training the network (``train``,
PyTorch from the optional ``train`` extra), and all of it in one command
(``recipe``). These tools write only the files they are told to write.
The engine must never import this package.
"""
