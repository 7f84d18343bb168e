"""Speed measurements of the engine: nodes/s, start-up time, answer latency, eval cost.

Responsible for measuring and printing (``speed``, ``compare_nps``, ``eval_profile``,
``startup_bench``, ``latency``). These tools must not change the engine or any file
of the repository.
"""
