"""Robustness tools: hostile sessions against the engine process."""
