"""Hostile UCI sessions against the ``cutoff`` process: bad files, small /dev/shm, kills.

    python -m scripts.robustness.fuzz_sessions [--sessions 1000] [--seed 1] [--jobs 2]
        [--engine CMD] [--syzygy DIR] [--gaviota DIR] [--json FILE] [--failures DIR]

Each session starts the engine in a process group of its own and plays a short,
seeded script of commands a hostile GUI, user or container could send:

* ``SyzygyPath``, ``GaviotaTbPath`` and ``BookFile`` pointing at truncated, empty,
  random and FIFO files named like real ones (and at the real tables when given);
* ``Threads 2`` with ``Hash`` up to 256 MB, a fifth of those sessions in a private
  mount namespace whose /dev/shm is a 16 MB tmpfs (as Docker's 64 MB default, only
  smaller; needs root and ``unshare``, else they run normally and are counted so);
* endgame positions the tables answer, and random garbage lines between commands;
* searches by depth, nodes, movetime, clock and ``infinite`` (ended by ``stop``);
* in one session in ten, ``kill -9`` of the engine's process (as a GUI kills it) a
  moment after ``setoption name Threads value 2`` and a search start, the moment
  helpers are being started.

It checks what a GUI depends on: every ``go`` gets exactly one ``bestmove``, legal
in the position it was sent for; no traceback on stdout or stderr; the process
ends with status 0 after ``quit`` (within 10 s); nothing of the process group is
left alive after it ends or is killed; no /dev/shm entry is left behind (other than
multiprocessing's semaphores, which the engine never makes). Failing sessions are
written, with their commands and output, to ``--failures``.

This tool only drives the engine: it changes nothing in the repository.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import chess
from tqdm import tqdm

from ..common import ToolParser, engine_command

POSITIONS = (
    chess.STARTING_FEN,
    "8/8/8/4k3/8/8/8/KQ6 w - - 0 1",  # KQvK
    "8/8/8/4k3/8/8/8/KR6 w - - 0 1",  # KRvK
    "8/3r4/8/4k3/8/8/8/KQ6 w - - 0 1",  # KQvKR
    "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1",  # KPvK
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
)
GOES = (
    "go depth 1",
    "go depth 3",
    "go nodes 500",
    "go nodes 3000",
    "go movetime 30",
    "go movetime 120",
    "go wtime 1000 btime 1000",
    "go wtime 300 btime 300 winc 10 binc 10",
    "go infinite",
)
KILL_SHARE = 0.1
SMALL_SHM_SHARE = 0.2
SMALL_SHM_MB = 16
QUIT_WAIT_S = 10.0
ANSWER_WAIT_S = 60.0


@dataclass
class Files:
    """The bad (and good) table and book paths the sessions point the engine at."""

    syzygy: list[str]
    gaviota: list[str]
    books: list[str]


def make_files(root: Path, syzygy: Optional[Path], gaviota: Optional[Path]) -> Files:
    """Truncated, empty, random and FIFO files named like real tables and books."""
    rng = random.Random(0)
    bad_syzygy = root / "syzygy-bad"
    bad_syzygy.mkdir()
    if syzygy is not None and (syzygy / "KQvK.rtbw").is_file():
        (bad_syzygy / "KQvK.rtbw").write_bytes((syzygy / "KQvK.rtbw").read_bytes()[:200])
        shutil.copy(syzygy / "KQvK.rtbz", bad_syzygy / "KQvK.rtbz")
    else:
        (bad_syzygy / "KQvK.rtbw").write_bytes(rng.randbytes(200))
    (bad_syzygy / "KRvK.rtbw").write_bytes(b"")
    (bad_syzygy / "KQvKR.rtbw").write_bytes(rng.randbytes(4096))
    os.mkfifo(bad_syzygy / "KPvK.rtbw")
    bad_gaviota = root / "gaviota-bad"
    bad_gaviota.mkdir()
    (bad_gaviota / "kqk.gtb.cp4").write_bytes(rng.randbytes(4096))
    (bad_gaviota / "kpk.gtb.cp4").write_bytes(b"")
    os.mkfifo(bad_gaviota / "krk.gtb.cp4")
    books = root / "books"
    books.mkdir()
    (books / "truncated.bin").write_bytes(rng.randbytes(37))
    (books / "random.bin").write_bytes(rng.randbytes(16 * 500))
    (books / "empty.bin").write_bytes(b"")
    os.mkfifo(books / "fifo.bin")
    return Files(
        syzygy=[str(bad_syzygy), str(root / "missing")]
        + ([str(syzygy)] if syzygy else [])
        + ([f"{syzygy}{os.pathsep}{bad_syzygy}"] if syzygy else []),
        gaviota=[str(bad_gaviota)] + ([str(gaviota)] if gaviota else []),
        books=[str(p) for p in sorted(books.iterdir())],
    )


def _garbage(rng: random.Random) -> str:
    """A line no UCI command starts with: bytes, token soup or a cut command."""
    kind = rng.randrange(3)
    if kind == 0:
        return "x" + "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randint(0, 80)))
    if kind == 1:
        words = ["name", "value", "fen", "moves", "depth", "e2e4", "-1", "nan", "\u2603"]
        return "xx " + " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
    return "positio" + " startpos"[: rng.randint(0, 9)]


@dataclass
class Session:
    number: int
    commands: list[str] = field(default_factory=list)
    boards: list[chess.Board] = field(default_factory=list)
    """The position each ``go`` was sent for, in order."""
    kill_after_s: Optional[float] = None
    small_shm: bool = False


def plan(
    number: int,
    seed: int,
    files: Files,
    kill_share: float = KILL_SHARE,
    small_shm_share: float = SMALL_SHM_SHARE,
) -> Session:
    rng = random.Random(seed * 1_000_003 + number)
    session = Session(number)
    board = chess.Board()
    commands = session.commands
    commands.append("uci")
    kill = rng.random() < kill_share
    threads = kill or rng.random() < 0.3
    if threads:
        session.small_shm = rng.random() < small_shm_share
        commands.append(f"setoption name Hash value {rng.choice((16, 64, 256))}")
        commands.append("setoption name Threads value 2")
    if kill:
        commands += ["position startpos", "go depth 6"]
        session.boards.append(chess.Board())
        session.kill_after_s = rng.uniform(0.0, 0.4)
        return session
    for _ in range(rng.randint(2, 7)):
        roll = rng.random()
        if roll < 0.15:
            commands.append(f"setoption name SyzygyPath value {rng.choice(files.syzygy)}")
        elif roll < 0.25:
            commands.append(f"setoption name GaviotaTbPath value {rng.choice(files.gaviota)}")
        elif roll < 0.32:
            commands.append(f"setoption name BookFile value {rng.choice(files.books)}")
            commands.append("setoption name OwnBook value true")
        elif roll < 0.42:
            commands.append(_garbage(rng))
        elif roll < 0.47:
            commands.append("ucinewgame")
        else:
            fen = rng.choice(POSITIONS)
            board = chess.Board(fen)
            commands.append(f"position fen {fen}")
            go = rng.choice(GOES)
            commands.append(go)
            session.boards.append(board.copy())
            if go == "go infinite" or rng.random() < 0.2:
                commands.append("stop")
            if rng.random() < 0.3:
                commands.append("isready")
    return session


@dataclass
class Outcome:
    number: int
    searches: int
    bestmoves: int
    problems: list[str]
    killed: bool
    small_shm: bool
    transcript: str


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _command(engine: list[str], small_shm: bool) -> list[str]:
    if not small_shm:
        return engine
    mount = f'mount -t tmpfs -o size={SMALL_SHM_MB}m tmpfs /dev/shm && exec "$@"'
    return ["unshare", "-m", "sh", "-c", mount, "sh", *engine]


def run_session(engine: list[str], session: Session, small_shm_ok: bool) -> Outcome:
    small = session.small_shm and small_shm_ok
    process = subprocess.Popen(
        _command(engine, small),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        errors="replace",
    )
    problems: list[str] = []
    killed = session.kill_after_s is not None
    script = "\n".join(session.commands) + "\n"
    assert process.stdin is not None
    try:
        if killed:
            process.stdin.write(script)
            process.stdin.flush()
            time.sleep(session.kill_after_s or 0.0)
            # As a GUI does: the engine's process, not its group (the helpers must
            # notice, end and remove the shared table's name themselves).
            process.kill()
            out, err = process.communicate(timeout=QUIT_WAIT_S)
        else:
            script += "stop\nisready\nquit\n"
            out, err = process.communicate(script, timeout=ANSWER_WAIT_S + QUIT_WAIT_S)
    except subprocess.TimeoutExpired:
        problems.append("no exit after quit (killed)")
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
    except BrokenPipeError:
        out, err = process.communicate()
    deadline = time.monotonic() + 3.0
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _group_alive(process.pid):
        problems.append("processes left behind")
        os.killpg(process.pid, signal.SIGKILL)
    bestmoves = [line for line in out.splitlines() if line.startswith("bestmove")]
    if "Traceback" in out or "Traceback" in err:
        problems.append("traceback")
    if not killed:
        if process.returncode != 0:
            problems.append(f"exit status {process.returncode}")
        if len(bestmoves) != len(session.boards):
            problems.append(f"{len(session.boards)} go, {len(bestmoves)} bestmove")
        for board, line in zip(session.boards, bestmoves):
            word = line.split()[1] if len(line.split()) > 1 else ""
            legal = {move.uci() for move in board.legal_moves}
            if word not in legal and not (word == "(none)" and not legal):
                problems.append(f"illegal {line!r} in {board.fen()}")
    elif len(bestmoves) > len(session.boards):
        problems.append("more bestmoves than go")
    transcript = f"# in:\n{script}# out:\n{out}# err:\n{err}"
    return Outcome(
        session.number, len(session.boards), len(bestmoves), problems, killed, small, transcript
    )


def _small_shm_works(engine: list[str]) -> bool:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    probe = subprocess.run(
        _command(["df", "-m", "/dev/shm"], True), capture_output=True, text=True, timeout=30
    )
    return probe.returncode == 0 and f" {SMALL_SHM_MB} " in probe.stdout


OTHERS_SEMAPHORES = "sem.mp-"
"""multiprocessing's named semaphores (its locks and queues). The engine makes none
(its helpers start without multiprocessing's locks), while programs running beside
the fuzz make and remove them all the time (Dask's workers in a parallel test run):
counted, they would be someone else's, so they are not."""


def _shm_entries() -> set[str]:
    try:
        names = os.listdir("/dev/shm")
    except OSError:
        return set()
    return {name for name in names if not name.startswith(OTHERS_SEMAPHORES)}


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(
        prog="python -m scripts.robustness.fuzz_sessions",
        description="Hostile UCI sessions: bad table and book files, a small /dev/shm, "
        "kills while helpers start.",
    )
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="sessions run at once")
    parser.add_argument("--engine", default="cutoff", help="engine command (default cutoff)")
    parser.add_argument("--syzygy", type=Path, help="real Syzygy tables (3-4 pieces)")
    parser.add_argument("--gaviota", type=Path, help="real Gaviota .gtb.cp4 tables")
    parser.add_argument("--json", type=Path, help="write the summary here")
    parser.add_argument("--failures", type=Path, help="write failing sessions' transcripts")
    parser.add_argument(
        "--kill-share", type=float, default=KILL_SHARE, help="share of kill sessions"
    )
    parser.add_argument(
        "--small-shm-share",
        type=float,
        default=SMALL_SHM_SHARE,
        help="share of Threads 2 sessions with a 16 MB /dev/shm",
    )
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    engine = engine_command(args.engine)
    small_ok = _small_shm_works(engine)
    shm_before = _shm_entries()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="cutoff-fuzz-") as tmp:
        files = make_files(Path(tmp), args.syzygy, args.gaviota)
        sessions = [
            plan(n, args.seed, files, args.kill_share, args.small_shm_share)
            for n in range(1, args.sessions + 1)
        ]
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            runs = pool.map(lambda s: run_session(engine, s, small_ok), sessions)
            for outcome in tqdm(runs, total=len(sessions), disable=args.quiet, unit="session"):
                outcomes.append(outcome)
    leaked = sorted(_shm_entries() - shm_before)
    failed = [o for o in outcomes if o.problems]
    summary = {
        "sessions": len(outcomes),
        "searches": sum(o.searches for o in outcomes),
        "bestmoves": sum(o.bestmoves for o in outcomes),
        "killed_during_helper_start": sum(o.killed for o in outcomes),
        "small_shm_sessions": sum(o.small_shm for o in outcomes),
        "small_shm_available": small_ok,
        "tracebacks": sum("traceback" in o.problems for o in outcomes),
        "missing_or_extra_bestmoves": sum(
            any(" go, " in p or "more bestmoves" in p for p in o.problems) for o in outcomes
        ),
        "illegal_bestmoves": sum(
            any(p.startswith("illegal") for p in o.problems) for o in outcomes
        ),
        "bad_exits": sum(
            any(p.startswith(("exit status", "no exit")) for p in o.problems) for o in outcomes
        ),
        "processes_left": sum("processes left behind" in o.problems for o in outcomes),
        "shm_leaked": leaked,
        "failed_sessions": [o.number for o in failed],
    }
    if args.failures is not None and failed:
        args.failures.mkdir(parents=True, exist_ok=True)
        for outcome in failed:
            text = "\n".join(outcome.problems) + "\n" + outcome.transcript
            (args.failures / f"session-{outcome.number}.txt").write_text(text)
    text = json.dumps(summary, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 1 if failed or leaked else 0


if __name__ == "__main__":
    sys.exit(main())
