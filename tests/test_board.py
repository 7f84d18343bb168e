"""Tests of the native search board (engine.core.board) against python-chess.

Perft counts of the shipped suites (and ../shared/data's when present) run through
``python -m perft --board native``, with ``--check-state`` comparing the native
board's incremental state with a fresh computation and python-chess at every node.
Seeded random games (standard and Chess960) compare, in every position reached: the
legal moves, the generation stages, the Polyglot key, checkers, the fifty-move counter,
repetitions, exchange values with a played-out exchange (tests/references.py), the
search's repetition rule with python-chess's keys, the psqt sums and the network's
accumulator with a from-scratch computation, and what unmake restores. The
default run takes a small sample; the full suites and more games are marked slow.
Whichever build of the module the guard loads (compiled or source) is the one tested.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import chess
import chess.polyglot
import pytest

from engine.core import bitboards, exchange, movegen
from engine.core.board import Board
from engine.core.nnue import SHIPPED_NETWORK, Incremental, load
from tests.conftest import run_perft
from tests.networks import random_network
from tests.references import checking_squares, psqt_sums, see_value

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
SPECIAL_FENS = [
    KIWIPETE,
    # En passant: discovered checks along the rank, a pinned capturer.
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/8/8/2k5/3Pp3/8/8/4K2Q b - d3 0 1",
    "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",
    "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2",
    # Castling through and out of check, Chess960-like rights.
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/8/8/8/1r2K2R w Kkq - 0 1",
    # Promotions with and without captures, both sides.
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    # Pins along every direction, and double check.
    "3r3k/b5b1/8/2NNQ3/r1RKP2r/2PBB3/8/q2q2b1 w - - 0 1",
    "7k/8/8/r1N1K1Rr/8/4B3/8/4q3 w - - 0 1",
    "1k6/8/8/8/8/2q5/8/K1N1R2r w - - 0 1",
    "4k3/8/8/8/8/5n2/8/4K2r w - - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
]


def suite_files() -> list[str]:
    """The repository's suites, and ../shared/data's perft suites when present and not
    the same as the repository's copy (test_perft checks they are: counting them
    twice took the slow tests eight more minutes on a busy machine)."""
    suites = REPO_ROOT / "perft" / "suites"
    files = sorted(str(path) for path in suites.glob("*.epd"))
    for name in ("perftsuite.epd", "perft_cpw.epd"):
        shared = SHARED_DATA / name
        ours = suites / name
        if shared.exists() and not (ours.exists() and ours.read_bytes() == shared.read_bytes()):
            files.append(str(shared))
    return files


def assert_suite_passed(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "FAIL" not in result.stdout
    assert "all passed" in result.stdout.splitlines()[-1]


# --- perft through python -m perft ----------------------------------------------


def test_perft_native_suites_sample() -> None:
    for suite in suite_files():
        assert_suite_passed(run_perft("--suite", suite, "--board", "native", "--max-depth", "2"))


def test_perft_native_position_and_divide() -> None:
    result = run_perft("startpos", "3", "--divide", "--board", "native")
    assert result.returncode == 0, result.stderr
    assert "Nodes searched: 8902" in result.stdout
    assert "e2e4: 600" in result.stdout.splitlines()
    result = run_perft(*KIWIPETE.split(), "3", "--board", "native")
    assert "Nodes searched: 97862" in result.stdout


def test_perft_native_check_state_sample() -> None:
    result = run_perft("--suite", "cpw", "--board", "native", "--max-depth", "2", "--check-state")
    assert_suite_passed(result)
    assert "incremental state checked at every node" in result.stdout


def test_check_state_catches_a_broken_native_board(monkeypatch: pytest.MonkeyPatch) -> None:
    from perft import cli
    from perft.native import NativeWalker

    class Broken(NativeWalker):
        def push(self, move: chess.Move) -> None:
            super().push(move)
            if self.board.is_capture(move) or len(self.board.move_stack) == 2:
                self.native.key ^= 1

    status = cli.run(["--check-state", "--board", "native", KIWIPETE, "2"], factory=Broken)
    assert status == cli.EXIT_FAILED


@pytest.mark.slow
@pytest.mark.timeout(3700)  # the perft run's own limit first
@pytest.mark.parametrize("suite", suite_files())
def test_perft_native_suites_full(suite: str) -> None:
    assert_suite_passed(
        run_perft("--suite", suite, "--board", "native", "--max-depth", "4", timeout=3600)
    )


@pytest.mark.slow
@pytest.mark.timeout(3700)
def test_perft_native_check_state_suites() -> None:
    for suite in suite_files():
        assert_suite_passed(
            run_perft(
                "--suite", suite, "--board", "native", "--max-depth", "3", "--check-state",
                timeout=3600,
            )
        )  # fmt: skip


# --- random games against python-chess ------------------------------------------


rng_claims = random.Random(7)
"""Which positions also check can_claim_threefold (python-chess's is slow)."""


def can_claim_threefold(native: Board) -> bool:
    """python-chess's ``can_claim_threefold_repetition`` on the native board: the
    position has occurred three times, or a legal move makes it so."""
    if native.is_game_repetition(3):
        return True
    for move in movegen.legal_moves(native):
        native.make(move)
        repeated = native.is_game_repetition(3)
        native.unmake()
        if repeated:
            return True
    return False


def check_position(native: Board, board: chess.Board) -> None:
    """Everything the native board says about this position equals python-chess."""
    fen = board.fen()
    assert native.fen() == fen
    assert native.state_errors() == []
    assert native.polyglot_key() == chess.polyglot.zobrist_hash(board), fen
    assert native.checkers() == Board.from_bits(board.checkers_mask()), fen
    assert native.is_check() == board.is_check()
    assert native.halfmove_clock == board.halfmove_clock
    assert native.is_fifty_moves() == (board.halfmove_clock >= 100)
    assert native.is_game_repetition(2) == board.is_repetition(2), fen
    assert native.is_game_repetition(3) == board.is_repetition(3), fen
    if native.is_game_repetition(2) or rng_claims.random() < 0.1:
        assert can_claim_threefold(native) == board.can_claim_threefold_repetition(), fen
    us = native.turn
    assert movegen.pinned(native, us) == Board.from_bits(pinned_mask(board)), fen

    legal = movegen.legal_moves(native)
    moves = [native.to_chess_move(move) for move in legal]
    assert len(set(moves)) == len(moves)
    assert set(moves) == set(board.legal_moves), fen
    for move, chess_move in zip(legal, moves):
        assert native.from_chess_move(chess_move) == move

    noisy = movegen.noisy_moves(native)
    quiets = movegen.quiet_moves(native)
    if board.is_check():
        assert sorted(movegen.evasions(native)) == sorted(legal)
    assert sorted(noisy + quiets) == sorted(legal)
    for move in noisy:
        chess_move = native.to_chess_move(move)
        assert board.is_capture(chess_move) or chess_move.promotion
    for move in quiets:
        chess_move = native.to_chess_move(move)
        assert not board.is_capture(chess_move) and not chess_move.promotion
    checks = {native.to_chess_move(move) for move in quiets if movegen.gives_check(native, move)}
    quiet_moves = [native.to_chess_move(move) for move in quiets]
    assert checks == {move for move in quiet_moves if board.gives_check(move)}
    for move, chess_move in zip(legal, moves):
        assert movegen.gives_check(native, move) == board.gives_check(chess_move), (fen, chess_move)
        assert native.is_capture(move) == board.is_capture(chess_move)
        if board.is_capture(chess_move) or chess_move.promotion:
            value = see_value(board, chess_move)
            assert exchange.see(native, move) == value, (fen, chess_move)
            for threshold in (-400, -1, 0, 1, 100, 250, 500):
                expected = value >= threshold
                assert exchange.see_ge(native, move, threshold) == expected, (
                    fen,
                    chess_move,
                    threshold,
                )
                assert (exchange.see(native, move) >= threshold) == expected, (
                    fen,
                    chess_move,
                    threshold,
                )
        # make/unmake restores everything.
        key = native.key
        native.make(move)
        native.unmake()
        assert native.key == key
        assert native.fen() == fen

    if not board.is_check():
        native.make_null()
        board.push(chess.Move.null())
        assert native.polyglot_key() == chess.polyglot.zobrist_hash(board)
        assert native.fen() == board.fen()
        board.pop()
        native.unmake()
        assert native.fen() == fen
        assert native.polyglot_key() == chess.polyglot.zobrist_hash(board)


def pinned_mask(board: chess.Board) -> int:
    own = board.occupied_co[board.turn]
    return sum(1 << sq for sq in chess.scan_forward(own) if board.is_pinned(board.turn, sq))


def play_random_game(
    board: chess.Board,
    rng: random.Random,
    plies: int,
    check: Callable[[Board, chess.Board], None] = check_position,
) -> None:
    """Plays ``plies`` random moves on both boards, checking every position with
    ``check``, and shuffles back and forth sometimes so that positions repeat."""
    native = Board.from_chess(board)
    check(native, board)
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves or (board.is_repetition(3) and rng.random() < 0.5):
            break
        if len(board.move_stack) >= 2 and rng.random() < 0.4:
            # Take our last move back by moving the piece home, if legal: repetitions.
            last = board.move_stack[-2]
            move = chess.Move(last.to_square, last.from_square)
            if move not in moves:
                move = rng.choice(moves)
        else:
            captures = [m for m in moves if board.is_capture(m) or m.promotion]
            pool = captures if captures and rng.random() < 0.4 else moves
            move = rng.choice(pool)
        native.make(native.from_chess_move(move))
        board.push(move)
        check(native, board)
    # Unmake all the way back: the root is restored.
    while board.move_stack:
        board.pop()
        native.unmake()
        assert native.fen() == board.fen()
        assert native.polyglot_key() == chess.polyglot.zobrist_hash(board)


@pytest.mark.parametrize("seed", range(4))
def test_random_games_standard(seed: int) -> None:
    rng = random.Random(seed)
    play_random_game(chess.Board(), rng, 80)


@pytest.mark.parametrize("seed", range(2))
def test_random_games_chess960(seed: int) -> None:
    rng = random.Random(100 + seed)
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    board.chess960 = True
    play_random_game(board, rng, 50)


@pytest.mark.parametrize("fen", SPECIAL_FENS)
def test_special_positions(fen: str) -> None:
    rng = random.Random(fen)
    play_random_game(chess.Board(fen), rng, 8)


def test_from_chess_replays_the_move_stack_for_repetitions() -> None:
    board = chess.Board()
    for uci in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]:
        board.push_uci(uci)
    native = Board.from_chess(board)
    assert board.is_repetition(3) and native.is_game_repetition(3)
    assert native.fen() == board.fen()
    assert native.polyglot_key() == chess.polyglot.zobrist_hash(board)
    # Castling in both notations, and the chess960 flag's notation on the way out.
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    native = Board.from_chess(board)
    assert native.from_chess_move(chess.Move.from_uci("e1g1")) == native.from_chess_move(
        chess.Move.from_uci("e1h1")
    )
    assert native.to_chess_move(native.from_chess_move(chess.Move.from_uci("e1h1"))).uci() == "e1g1"
    board.chess960 = True
    native = Board.from_chess(board)
    assert native.to_chess_move(native.from_chess_move(chess.Move.from_uci("e1g1"))).uci() == "e1h1"


def test_repetition_ignores_an_en_passant_square_that_cannot_be_taken() -> None:
    # After d7d5 the pawn on e5 stands beside d5 (Polyglot counts the file) but is
    # pinned: python-chess sees the position again when the kings come back.
    board = chess.Board("4r1k1/3p4/8/4P3/8/8/8/4K3 b - - 0 1")
    native = Board.from_chess(board)
    for uci in ["d7d5", "e1f1", "g8h8", "f1e1", "h8g8", "e1f1", "g8h8", "f1e1", "h8g8"]:
        move = chess.Move.from_uci(uci)
        native.make(native.from_chess_move(move))
        board.push(move)
        assert native.polyglot_key() == chess.polyglot.zobrist_hash(board)
        assert native.is_game_repetition(2) == board.is_repetition(2), uci
        assert native.is_game_repetition(3) == board.is_repetition(3), uci
        assert native.state_errors() == []
    assert native.is_game_repetition(3)


def chess960_middlegames(count: int, seed: int) -> list[chess.Board]:
    """Chess960 starts with a few random moves played: castling rights of all shapes."""
    rng = random.Random(seed)
    boards = []
    for _ in range(count):
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        board.chess960 = True
        for _ in range(rng.randrange(4, 14)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        boards.append(board)
    return boards


@pytest.mark.parametrize("board", chess960_middlegames(4, 960), ids=lambda board: board.fen())
def test_chess960_perft_matches_python_chess(board: chess.Board) -> None:
    from engine.play.boards import perft

    assert movegen.perft(Board.from_chess(board), 3) == perft(board, 3)


@pytest.mark.slow
@pytest.mark.parametrize("board", chess960_middlegames(40, 9600), ids=lambda board: board.fen())
def test_chess960_perft_matches_python_chess_many(board: chess.Board) -> None:
    from engine.play.boards import perft

    assert movegen.perft(Board.from_chess(board), 3) == perft(board, 3)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_random_games_many(seed: int) -> None:
    rng = random.Random(1000 + seed)
    if seed % 2:
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        board.chess960 = True
    else:
        board = chess.Board()
    play_random_game(board, rng, 150)


def test_module_helpers() -> None:
    # Square masks of the high squares survive the build's representation.
    for sq in (0, 31, 32, 62, 63):
        assert bitboards._popcount(Board.from_bits(1 << sq)) == 1
        assert bitboards._lsb(Board.from_bits(1 << sq)) == sq
    assert bitboards._popcount(Board.from_bits(0xFFFFFFFFFFFFFFFF)) == 64


# --- the search's move checks and repetitions -------------------------------------


def sample_codes(native: Board, board: chess.Board, rng: random.Random) -> set[int]:
    """Move codes to ask ``legal_move`` about: every legal move's, every from/to pair
    of our pieces, every promotion of the legal moves and of our pawns' steps, and
    random 15-bit ints."""
    codes = {0, 0x7FFF}
    for move in movegen.legal_moves(native):
        code = move & 0x7FFF
        for promotion in range(8):
            codes.add((code & 0xFFF) | promotion << 12)
    for frm in chess.scan_forward(board.occupied_co[board.turn]):
        for to in range(64):
            codes.add(frm | to << 6)
        if board.piece_type_at(frm) == chess.PAWN:
            ahead = frm + (8 if board.turn else -8)
            for to in range(max(0, ahead - 9), min(64, ahead + 10)):
                for promotion in range(1, 8):
                    codes.add(frm | to << 6 | promotion << 12)
        codes.add(frm | rng.randrange(64) << 6 | rng.randrange(1, 8) << 12)
    codes.update(rng.randrange(1 << 15) for _ in range(200))
    return codes


def check_legal_move(native: Board, board: chess.Board) -> None:
    """``legal_move(code)`` is the generated move with that code, else 0; a sample of
    the codes also against python-chess's is_legal (chess960 notation: castling is
    the king taking its own rook, as the codes write it)."""
    rng = random.Random(board.fen())
    legal = {move & 0x7FFF: move for move in movegen.legal_moves(native)}
    oracle = board.copy(stack=False)
    oracle.chess960 = True
    fen = board.fen()
    for code in sorted(sample_codes(native, board, rng)):
        move = movegen.legal_move(native, code)
        assert move == legal.get(code, 0), (fen, code)
        if move or rng.random() < 0.1:
            promotion = code >> 12
            chess_move = chess.Move(code & 63, code >> 6 & 63, promotion or None)
            assert (move != 0) == oracle.is_legal(chess_move), (fen, chess_move)
    assert native.fen() == fen


def quiet_checks(board: chess.Board) -> list[chess.Move]:
    """The reference (the picker's rule on python-chess's board): quiet moves of
    knights, then bishops and queens onto diagonal checking squares, then rooks and
    queens onto straight ones, pseudo-legal, each group in python-chess's order
    (pieces from the highest square down, each one's targets likewise)."""
    squares = checking_squares(board)
    ours = board.occupied_co[board.turn]
    empty = chess.BB_ALL ^ board.occupied
    groups = (
        (board.knights & ours, squares[chess.KNIGHT] & empty),
        ((board.bishops | board.queens) & ours, squares[chess.BISHOP] & empty),
        ((board.rooks | board.queens) & ours, squares[chess.ROOK] & empty),
    )
    moves: list[chess.Move] = []
    for pieces, targets in groups:
        for square in chess.scan_reversed(pieces):
            reach = board.attacks_mask(square) & targets
            moves.extend(chess.Move(square, target) for target in chess.scan_reversed(reach))
    return moves


def check_direct_quiet_checks(native: Board, board: chess.Board) -> None:
    expected = [move for move in quiet_checks(board) if board.is_legal(move)]
    moves = movegen.direct_quiet_checks(native)
    assert [native.to_chess_move(move) for move in moves] == expected, board.fen()
    legal = set(movegen.legal_moves(native))
    assert all(move in legal for move in moves)


def check_search_helpers(native: Board, board: chess.Board) -> None:
    check_legal_move(native, board)
    check_direct_quiet_checks(native, board)


@pytest.mark.parametrize("seed", range(2))
def test_search_helpers_random_games(seed: int) -> None:
    rng = random.Random(200 + seed)
    play_random_game(chess.Board(), rng, 60, check_search_helpers)
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    board.chess960 = True
    play_random_game(board, rng, 40, check_search_helpers)


@pytest.mark.parametrize("fen", SPECIAL_FENS)
def test_search_helpers_special_positions(fen: str) -> None:
    play_random_game(chess.Board(fen), random.Random(fen), 6, check_search_helpers)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20))
def test_search_helpers_random_games_many(seed: int) -> None:
    rng = random.Random(2000 + seed)
    board = chess.Board()
    if seed % 2:
        board = chess.Board.from_chess960_pos(rng.randrange(960))
        board.chess960 = True
    play_random_game(board, rng, 120, check_search_helpers)


def test_direct_quiet_checks_order_and_pins() -> None:
    # Knights first, then bishops and queens onto diagonal checks, then rooks and
    # queens onto straight ones, highest squares first; the pinned rook's e3d3 goes.
    board = chess.Board("3k4/4r3/8/2B3N1/8/2N1R3/1Q6/R3K3 w - - 0 1")
    native = Board.from_chess(board)
    moves = [native.to_chess_move(move).uci() for move in movegen.direct_quiet_checks(native)]
    assert moves == ["g5f7", "g5e6", "c5b6", "b2b6", "b2b8", "b2d2", "a1a8", "a1d1"]
    assert "e3d3" in [move.uci() for move in quiet_checks(board)]
    # In check: only blocks, and none in double check (h2g1 would block the rook).
    for fen, expected in [
        ("8/8/1k6/8/8/8/7B/4K2r w - - 0 1", ["h2g1"]),
        ("8/8/1k6/8/8/3n4/7B/4K2r w - - 0 1", []),
    ]:
        board = chess.Board(fen)
        native = Board.from_chess(board)
        moves = [native.to_chess_move(move).uci() for move in movegen.direct_quiet_checks(native)]
        assert moves == expected
        assert moves == [move.uci() for move in quiet_checks(board) if board.is_legal(move)]


def repeats_in_search(keys: list[int], halfmove_clock: int) -> bool:
    """The search's repetition rule on python-chess's keys: the last key occurred 4, 6,
    8, ... plies back, within the fifty-move counter and the keys of the walk."""
    last = len(keys) - 1
    reach = min(halfmove_clock, last)
    return any(keys[last - back] == keys[last] for back in range(4, reach + 1, 2))


def search_game(
    fen: str, rng: random.Random, plies: int, chess960: bool = False
) -> tuple[int, int]:
    """A random walk as a search makes it, on the native board and python-chess's side
    by side: moves that shuffle pieces back and forth, null moves (both resetting the
    fifty-move counter, as the search does), and moves taken back. Compares
    ``is_search_repetition`` with the rule on python-chess's keys at every step. Returns
    how many repetitions it saw, and how many times an earlier equal key lay beyond the
    fifty-move counter's reach."""
    board = chess.Board(fen, chess960=chess960)
    native = Board.from_chess(board)
    made: list[bool] = []  # True for a null move
    keys = [chess.polyglot.zobrist_hash(board)]
    repetitions = cut_off = 0
    for _ in range(plies):
        assert native.polyglot_key() == keys[-1], board.fen()
        expected = repeats_in_search(keys, board.halfmove_clock)
        assert native.is_search_repetition() == expected, (board.fen(), board.move_stack)
        assert native.halfmove_clock == board.halfmove_clock
        repetitions += expected
        # Past the fifty-move counter (only a null move can cut a repetition off here).
        cut_off += (not expected) and keys[-1] in keys[-5::-2]
        moves = list(board.legal_moves)
        roll = rng.random()
        if made and (roll < 0.1 or not moves):
            made.pop()
            board.pop()  # restores the fifty-move counter a null move reset
            native.unmake()
            keys.pop()
            continue
        if not moves:
            break
        if roll < 0.2 and not board.is_check():
            board.push(chess.Move.null())
            board.halfmove_clock = 0
            native.make_null()
            native.halfmove_clock = 0
            made.append(True)
            keys.append(chess.polyglot.zobrist_hash(board))
            continue
        move = rng.choice(moves)
        if len(board.move_stack) >= 4 and roll < 0.8:
            # Move back the piece this side moved last: positions repeat.
            last = board.move_stack[-2]
            back = chess.Move(last.to_square, last.from_square)
            if back in moves and not board.is_capture(back):
                move = back
        native.make(native.from_chess_move(move))
        board.push(move)
        made.append(False)
        keys.append(chess.polyglot.zobrist_hash(board))
    return repetitions, cut_off


@pytest.mark.parametrize("seed", range(3))
def test_search_repetition_random_walks(seed: int) -> None:
    rng = random.Random(300 + seed)
    fens = [
        chess.STARTING_FEN,
        KIWIPETE,
        # A nonzero fifty-move counter: the look-back ends at the board's first move.
        "4k3/2n5/8/8/8/8/5N2/4K3 w - - 37 60",
        "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    ]
    games = [search_game(fen, rng, 120) for fen in fens]
    chess960 = chess.Board.from_chess960_pos(rng.randrange(960)).fen()
    games.append(search_game(chess960, rng, 120, chess960=True))
    assert sum(game[0] for game in games) >= 5
    assert sum(game[1] for game in games) >= 1


def test_search_repetition_knights_shuffling() -> None:
    board = chess.Board("4k3/8/8/8/8/8/8/1N2K1n1 w - - 7 40")
    native = Board.from_chess(board)
    keys = [chess.polyglot.zobrist_hash(board)]
    seen = []
    for uci in ["b1c3", "g1f3", "c3b1", "f3g1", "b1c3", "g1f3", "c3b1", "f3g1"]:
        move = chess.Move.from_uci(uci)
        native.make(native.from_chess_move(move))
        board.push(move)
        keys.append(chess.polyglot.zobrist_hash(board))
        seen.append(native.is_search_repetition())
        assert seen[-1] == repeats_in_search(keys, board.halfmove_clock)
    assert seen == [False, False, False, True, True, True, True, True]
    # Taking moves back restores the counter the look-back stops at.
    native.unmake()
    native.unmake()
    assert native.is_search_repetition() and native.halfmove_clock == 13
    # After a null move (the search resets the counter) nothing before it counts.
    native.make_null()
    native.halfmove_clock = 0
    for uci in ["g1f3", "b1c3", "f3g1"]:
        native.make(native.from_chess_move(chess.Move.from_uci(uci)))
        assert not native.is_search_repetition()


# --- psqt sums and the network's accumulator ------------------------------------


@pytest.fixture(scope="module")
def networks() -> list[Incremental]:
    """The shipped network's columns and a random network's (another width)."""
    return [Incremental(load(SHIPPED_NETWORK)), Incremental(random_network(24, seed=5))]


ALL_KINDS = {"null", "capture", "en passant", "castling", "promotion"}
SUMS_FENS = [*SPECIAL_FENS, "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"]
"""SPECIAL_FENS and a legal en passant capture (theirs are mostly illegal ones)."""


def assert_same_sums(native: Board, board: chess.Board, network: Optional[Incremental]) -> None:
    """The native board's incremental sums (and accumulator) equal a recomputation
    from python-chess's pieces."""
    context = board.fen()
    assert (native.mg, native.eg, native.phase) == psqt_sums(board), context
    if network is not None:
        assert native.acc == network.accumulator(board), context
    assert native.state_errors() == [], context


def play_sums_game(
    board: chess.Board, rng: random.Random, plies: int, network: Optional[Incremental]
) -> set[str]:
    """Random moves (captures, promotions, castling and en passant preferred, null
    moves sometimes, moves taken back sometimes) on the native board and python-chess's
    side by side; returns the kinds of moves made."""
    kinds: set[str] = set()
    board = board.copy()
    native = Board.from_chess(board)
    native.use_network(network)
    assert_same_sums(native, board, network)
    for _ in range(plies):
        if rng.random() < 0.1 and not board.is_check():
            native.make_null()
            board.push(chess.Move.null())
            kinds.add("null")
            assert_same_sums(native, board, network)
            # A null move stays on the stacks, as in a search.
        moves = list(board.legal_moves)
        if not moves:
            break
        captures = [m for m in moves if board.is_capture(m) or m.promotion]
        move = rng.choice(captures if captures and rng.random() < 0.5 else moves)
        rare = [m for m in moves if board.is_castling(m) or board.is_en_passant(m)]
        if rare and rng.random() < 0.8:
            move = rng.choice(rare)
        for kind, test in (
            ("capture", board.is_capture(move)),
            ("en passant", board.is_en_passant(move)),
            ("castling", board.is_castling(move)),
            ("promotion", move.promotion),
        ):
            if test:
                kinds.add(kind)
        native.make(native.from_chess_move(move))
        board.push(move)
        assert_same_sums(native, board, network)
        if rng.random() < 0.2:
            native.unmake()
            board.pop()
            assert_same_sums(native, board, network)
            native.make(native.from_chess_move(move))
            board.push(move)
    while board.move_stack:
        native.unmake()
        board.pop()
        assert_same_sums(native, board, network)
    return kinds


@pytest.mark.parametrize("seed", range(3))
def test_psqt_sums_follow_python_chess(seed: int) -> None:
    rng = random.Random(200 + seed)
    kinds = play_sums_game(chess.Board(), rng, 120, None)
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    board.chess960 = True
    kinds |= play_sums_game(board, rng, 80, None)
    for fen in SUMS_FENS:
        kinds |= play_sums_game(chess.Board(fen), rng, 6, None)
    assert kinds == ALL_KINDS


@pytest.mark.parametrize("which", [0, 1])
def test_accumulator_follows_python_chess(networks: list[Incremental], which: int) -> None:
    rng = random.Random(300 + which)
    kinds = play_sums_game(chess.Board(), rng, 100, networks[which])
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    board.chess960 = True
    kinds |= play_sums_game(board, rng, 60, networks[which])
    for fen in SUMS_FENS:
        kinds |= play_sums_game(chess.Board(fen), rng, 6, networks[which])
    assert kinds == ALL_KINDS


def test_use_network_after_moves_restores_on_unmake(networks: list[Incremental]) -> None:
    board = chess.Board()
    for uci in ["e2e4", "d7d5", "e4d5", "g8f6", "f1b5", "c7c6"]:
        board.push_uci(uci)
    native = Board.from_chess(board)
    native.use_network(networks[0])
    assert native.acc == networks[0].accumulator(board)
    for _ in range(6):
        board.pop()
        native.unmake()
        assert native.acc == networks[0].accumulator(board)
    native.use_network(None)
    assert native.acc == 0 and not native.has_network and native.state_errors() == []


def test_state_errors_catch_broken_sums(networks: list[Incremental]) -> None:
    native = Board.from_chess(chess.Board(KIWIPETE))
    native.use_network(networks[1])
    native.eg += 1
    assert any("psqt" in error for error in native.state_errors())
    native.eg -= 1
    native.acc += 1
    assert any("accumulator" in error for error in native.state_errors())
