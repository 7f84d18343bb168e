"""Engines as the runner sees them: the ``--engine`` spec and the running process.

Responsible for parsing an engine spec (``cmd=... name=... dir=... option.X=...
env.X=...`` plus per-engine limits), starting an engine through python-chess's
asyncio UCI protocol (in its own process group, with its environment, a start-up
timeout and its options set), restarting,
quitting and killing it, and describing how it died. It must not play games or keep
score: the game loop and the tally do that, and every fault is reported, not hidden.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import chess
import chess.engine

from ..common import uci_option_values
from .errors import MatchError
from .time_controls import Limits, parse_tc, positive_float, positive_int

# Seconds an engine gets to answer `uci` with `uciok` (python-chess waits 10 s, cutechess 35 s;
# a Python engine on a loaded machine needs more than the former).
STARTUP_TIMEOUT_S = 30.0
# Seconds an engine gets to exit after `quit` before it is killed (cutechess waits 5 s).
QUIT_TIMEOUT_S = 5.0
# The same when the runner is interrupted: supervisors follow SIGTERM with SIGKILL after
# a grace period (often 10 s), and an engine deep in a search may not read `quit` at all.
INTERRUPT_QUIT_TIMEOUT_S = 1.0


@dataclass
class EngineSpec:
    """One engine as given on the command line."""

    command: list[str]
    name: Optional[str] = None
    workdir: Optional[str] = None
    options: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables set for this engine's process (``env.NAME=value``): how
    ``cutoff-tune`` hands each engine its constants (``CUTOFF_TUNE``)."""


def parse_engine_spec(text: str, defaults: Limits) -> EngineSpec:
    """Parse ``cmd=... name=... dir=... option.Name=value env.NAME=value tc=... st=...
    depth=N nodes=N``.

    Tokens are split like a shell line, so ``cmd='python -m engine'`` keeps its spaces.
    A string without any ``cmd=`` token is the command itself.
    """
    try:
        tokens = shlex.split(text)
    except ValueError as err:
        raise MatchError(f"bad engine {text!r}: {err}") from None
    if not any(token.startswith("cmd=") for token in tokens):
        tokens = ["cmd=" + text]
    spec = EngineSpec(command=[])
    tc, movetime, depth, nodes = defaults.tc, defaults.movetime_s, defaults.depth, defaults.nodes
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise MatchError(f"bad engine token {token!r} in {text!r} (expected key=value)")
        if key == "cmd":
            try:
                spec.command = shlex.split(value)
            except ValueError as err:
                raise MatchError(f"bad engine command {value!r}: {err}") from None
        elif key == "name":
            spec.name = value
        elif key == "dir":
            spec.workdir = value
        elif key.startswith("option."):
            spec.options[key[len("option.") :]] = value
        elif key.startswith("env.") and len(key) > len("env."):
            spec.env[key[len("env.") :]] = value
        elif key == "tc":
            tc = parse_tc(value)
        elif key in ("st", "movetime"):
            movetime = positive_float(value, "movetime")
        elif key == "depth":
            depth = positive_int(value, "depth")
        elif key == "nodes":
            nodes = positive_int(value, "nodes")
        else:
            raise MatchError(f"unknown engine key {key!r} in {text!r}")
    if not spec.command:
        raise MatchError(f"engine {text!r} has an empty command")
    program = spec.command[0]
    # A relative program path means "relative to where the runner was started", even
    # when dir= moves the engine elsewhere (subprocess would resolve it against dir=).
    if os.sep in program and not os.path.isabs(program):
        spec.command[0] = os.path.abspath(program)
    spec.limits = Limits(tc, movetime, depth, nodes)
    if spec.limits.is_empty():
        raise MatchError("no limit for an engine: give --tc, --movetime, --depth or --nodes")
    return spec


STARTUP_INFO_LINES = 4
"""How many ``info string`` lines of the UCI handshake are kept (Cutoff sends one)."""
STARTUP_INFO_CHARS = 200


class _RecordingUciProtocol(chess.engine.UciProtocol):
    """python-chess's UCI protocol that keeps the engine's last stderr lines for
    reports, and the ``info string`` lines it sends before ``uciok`` (Cutoff says
    there which build it is) for the PGN."""

    def __init__(self) -> None:
        super().__init__()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=3)
        self.startup_info: list[str] = []

    def line_received(self, line: str) -> None:
        startup = not self.initialized and line.startswith("info string ")
        if startup and len(self.startup_info) < STARTUP_INFO_LINES:
            self.startup_info.append(line[len("info string ") :].strip()[:STARTUP_INFO_CHARS])

    def error_line_received(self, line: str) -> None:
        # Kept for fault reports instead of python-chess's warning per line.
        self.stderr_tail.append(line)
        logging.getLogger("chess.engine").debug("%s: stderr >> %s", self, line)


class EngineProcess:
    """One running engine process, restartable, with its display name."""

    def __init__(self, spec: EngineSpec, name: str) -> None:
        self.spec = spec
        self.name = name
        self.transport: Optional[asyncio.SubprocessTransport] = None
        self.protocol: Optional[_RecordingUciProtocol] = None
        self.identity = "?"
        """What the engine said it is at its last start (``_identity``), for the PGN."""

    def proto(self) -> _RecordingUciProtocol:
        if self.protocol is None:
            raise chess.engine.EngineTerminatedError("engine not started")
        return self.protocol

    async def start(self) -> None:
        """Spawn, handshake and configure; raise MatchError with the reason on failure."""
        what = f"engine {self.name!r} ({shlex.join(self.spec.command)})"
        try:
            # setpgrp: a Ctrl-C in the terminal goes to the whole foreground process
            # group; the runner ends its engines itself, after recording the games.
            env = {**os.environ, **self.spec.env} if self.spec.env else None
            transport, protocol = await _RecordingUciProtocol.popen(
                self.spec.command,
                cwd=self.spec.workdir,
                env=env,
                stderr=subprocess.PIPE,
                setpgrp=True,
            )
        except OSError as err:
            raise MatchError(f"{what} cannot be started: {err.strerror or err}") from None
        self.transport, self.protocol = transport, protocol
        try:
            await asyncio.wait_for(protocol.initialize(), STARTUP_TIMEOUT_S)
            self.identity = self._identity(protocol)
            await protocol.configure(self._option_values(protocol))
        except asyncio.TimeoutError:
            self.kill()
            raise MatchError(f"{what} sent no uciok within {STARTUP_TIMEOUT_S:g}s") from None
        except chess.engine.EngineError as err:
            tail = _stderr_hint(protocol)
            self.kill()
            raise MatchError(f"{what} failed during start-up: {err}{tail}") from None

    def _identity(self, protocol: _RecordingUciProtocol) -> str:
        """What the engine said it is: its ``id name`` and the ``info string`` lines
        of its handshake (for Cutoff: version, sources' digest, commit, build)."""
        name = protocol.id.get("name", "").strip()
        parts = [name] if name else []
        for info in protocol.startup_info:
            if name and info.startswith(name):
                parts = [info]  # it repeats the name: said once
            else:
                parts.append(info)
        return "; ".join(parts) or "?"

    def _option_values(
        self, protocol: chess.engine.UciProtocol
    ) -> dict[str, chess.engine.ConfigValue]:
        try:
            return uci_option_values(self.spec.options, protocol.options)
        except ValueError as err:
            raise chess.engine.EngineError(str(err)) from None

    async def new_game(self, game: object, timeout_s: float) -> None:
        """Send ucinewgame and wait for readyok, so that this work is not on the clock."""
        protocol = self.proto()
        if hasattr(protocol, "_ucinewgame"):
            # python-chess would otherwise send ucinewgame inside the first play() and
            # the engine's reset work would count against its clock (cutechess and
            # fastchess start the clock only after readyok).
            protocol._ucinewgame()
            protocol.game = game
        await asyncio.wait_for(protocol.ping(), timeout_s)

    def kill(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.transport = None
        self.protocol = None

    async def quit(self, timeout_s: float = QUIT_TIMEOUT_S) -> None:
        protocol = self.protocol
        if protocol is not None and not protocol.returncode.done():
            with contextlib.suppress(asyncio.TimeoutError, chess.engine.EngineError):
                await asyncio.wait_for(protocol.quit(), timeout_s)
        self.kill()

    def exit_description(self) -> str:
        """Exit code and last stderr line of a dead engine, for the crash report."""
        protocol = self.protocol
        if protocol is None:
            return "not running"
        code = "exit code ?"
        if protocol.returncode.done():
            code = f"exit code {protocol.returncode.result()}"
        return code + _stderr_hint(protocol)


def _stderr_hint(protocol: _RecordingUciProtocol) -> str:
    if not protocol.stderr_tail:
        return ""
    return f"; last stderr: {protocol.stderr_tail[-1].strip()[:200]}"


def spec_settings(spec: EngineSpec) -> str:
    """How the engine was set to play, in the spec's own words: its options
    (``option.X=V``), environment (``env.X=V``) and limits (``tc=``, ``st=``,
    ``depth=``, ``nodes=``); ``-`` when none but the defaults."""
    words = [f"option.{name}={value}" for name, value in spec.options.items()]
    words += [f"env.{name}={value}" for name, value in spec.env.items()]
    words += [f"{key}={value}" for key, value in spec.limits.fields()]
    return shlex.join(words) or "-"


def default_names(specs: Sequence[EngineSpec]) -> list[str]:
    """Names before the engines have said theirs: ``name=``, else ``engine1``/``engine2``."""
    return [spec.name or f"engine{i + 1}" for i, spec in enumerate(specs)]


async def start_first_engines(
    specs: Sequence[EngineSpec],
) -> tuple[list[EngineProcess], list[str]]:
    """Start one engine of each kind up front: bad commands fail before any game."""
    engines = [EngineProcess(spec, name) for spec, name in zip(specs, default_names(specs))]
    try:
        for engine in engines:
            await engine.start()
    except BaseException:
        for engine in engines:
            engine.kill()
        raise
    names = name_engines(engines)
    return engines, names


def name_engines(engines: Sequence[EngineProcess]) -> list[str]:
    """Give started engines their display names (and return them): ``name=``, else the
    engine's ``id name``, else the program's file name; ``#1``/``#2`` tell equals apart."""
    names = []
    for engine in engines:
        reported = engine.proto().id.get("name", "").strip()
        names.append(engine.spec.name or reported or Path(engine.spec.command[0]).name)
    if names[0] == names[1]:
        names = [f"{names[0]} #1", f"{names[1]} #2"]
    for engine, name in zip(engines, names):
        engine.name = name
    return names
