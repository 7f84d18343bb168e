"""Training data and training of Cutoff's learned evaluation (issue 68).

Responsible for making labelled positions (``datagen``: self-play, match PGNs and
FEN files, labelled by a teacher engine), their file format (``dataset``), giving
relabelled positions back their games (``regroup``), sampling the positions the
search evaluates (``leaves``), keeping match games compactly (``games``), training
the network (``train``, PyTorch from the optional ``train`` extra), all of it in one
command (``recipe``), and timing the network's accumulator forms
(``bench_accumulator``). These tools write only the files they are told to write.
The engine must never import this package.
"""
