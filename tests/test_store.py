"""scripts/training/store.py through ``python -m scripts.training.store``: converting
text data (bad lines said and skipped, a rerun resuming), verifying chunks against
their manifests (a flipped byte, a missing chunk), dedup and split, info."""

from __future__ import annotations

import hashlib
import json
import lzma
import shlex
from pathlib import Path

import chess
import numpy as np
import pytest

from scripts.training import records, store
from scripts.training.dataset import append_member
from tests.conftest import run_repo_script
from tests.test_records import random_fens


def game_fens(count: int, seed: int) -> list[str]:
    """Positions of seeded random games of up to 120 plies."""
    return random_fens(count, seed, max_plies=120)


def data_file(path: Path, fens: list[str], bad_at: dict[int, str]) -> list[str]:
    """A gzip data file of ``fens`` (scores from their index) in two members, with the
    bad lines ``bad_at`` (index in the data lines -> line); the good lines written."""
    lines = [
        f"{fen};{(i * 37) % 4001 - 2000};{('1-0', '1/2-1/2', '0-1', '*')[i % 4]}"
        for i, fen in enumerate(fens)
    ]
    for index, bad in sorted(bad_at.items()):
        lines.insert(index, bad)
    half = len(lines) // 2
    append_member(path, [*lines[:half], "#done a"])
    append_member(path, [*lines[half:], "#done b"])
    return [line for line in lines if line not in bad_at.values()]


def contents(folder: Path) -> dict[str, object]:
    """A store's files: the chunks' bytes, the manifests but for their dates."""
    found: dict[str, object] = {}
    for path in folder.iterdir():
        if path.suffix == ".json":
            manifest = json.loads(path.read_text())
            del manifest["made_by"]["date"]
            found[path.name] = manifest
        else:
            found[path.name] = path.read_bytes()
    return found


def stored(folder: Path) -> np.ndarray:
    return store.load([folder])


def test_convert_reports_bad_lines_and_verify_catches_damage(tmp_path: Path) -> None:
    data = tmp_path / "data.gz"
    fens = game_fens(50, seed=3)
    bad = {
        5: "not a fen;12;1-0",
        20: f"{fens[0]};twelve;1-0",
        33: "8/8/8/8/8/8/8/8/8 w - - 0 1;1;*",
    }
    good = data_file(data, fens, bad)
    out = tmp_path / "store"
    done = run_repo_script(
        "training.store", "convert", str(data), "--out", str(out), "--chunk-size", "12"
    )
    assert done.returncode == 0, done.stderr
    # Line numbers count the bookkeeping line that ends the first member.
    assert f"error: {data}:6: bad FEN 'not a fen'" in done.stderr
    assert f"error: {data}:21: score 'twelve' is not an integer" in done.stderr
    assert f"error: {data}:35: bad FEN" in done.stderr
    assert (
        "converted 50 records into 5 new chunks (5 in all), bad lines 3, damaged files 0"
        in done.stdout
    )
    array = stored(out)
    assert [records.decode(r)[0].fen() for r in array] == fens
    assert list(array["score"]) == [int(line.split(";")[1]) for line in good]
    assert list(array["result"][:4]) == [1, 0, -1, records.RESULT_UNKNOWN]
    manifest = json.loads((out / "chunk-000001.json").read_text())
    assert manifest["records"] == 12 and manifest["score_side"] == "white"
    assert (
        manifest["sha256"] == hashlib.sha256((out / "chunk-000001.cpos").read_bytes()).hexdigest()
    )
    assert manifest["made_by"]["settings"]["inputs"][0]["path"] == str(data)

    assert run_repo_script("training.store", "verify", str(out)).returncode == 0

    # A rerun skips the finished chunks; an interrupted one (its last chunks lost)
    # resumes after the finished ones and makes the same bytes.
    before = contents(out)
    (out / "chunk-000003.cpos").unlink()
    (out / "chunk-000004.json").unlink()
    again = run_repo_script(
        "training.store", "convert", str(data), "--out", str(out), "--chunk-size", "12"
    )
    assert again.returncode == 0, again.stderr
    assert "resuming after 3 finished chunks" in again.stderr
    assert "converted 14 records into 2 new chunks (5 in all), bad lines 0" in again.stdout
    assert contents(out) == before

    # A flipped byte and a missing chunk: exit 1, each said, and how to remake them.
    chunk = bytearray((out / "chunk-000002.cpos").read_bytes())
    chunk[100] ^= 1
    (out / "chunk-000002.cpos").write_bytes(bytes(chunk))
    (out / "chunk-000004.cpos").unlink()
    checked = run_repo_script("training.store", "verify", str(out))
    assert checked.returncode == 1
    assert (
        f"error: {out / 'chunk-000002.cpos'}: checksum differs from the manifest's (corrupt)"
        in checked.stderr
    )
    assert f"error: {out / 'chunk-000004.cpos'}: missing" in checked.stderr
    assert "remake with: python -m scripts.training.store convert" in checked.stderr
    assert "Traceback" not in checked.stderr


def test_convert_takes_manifests_elsewhere_and_refuses_bad_arguments(tmp_path: Path) -> None:
    data = tmp_path / "data.gz"
    data_file(data, game_fens(10, seed=4), {})
    out, manifests = tmp_path / "chunks", tmp_path / "manifests"
    made = run_repo_script(
        "training.store",
        "convert",
        str(data),
        "--out",
        str(out),
        "--manifests",
        str(manifests),
        "--teacher",
        "stockfish nodes=5000",
    )
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in manifests.iterdir()) == ["chunk-000000.json"]
    assert records.read(out / "chunk-000000.cpos")[0].source == "stockfish nodes=5000"
    assert run_repo_script("training.store", "verify", str(out)).returncode == 0
    empty = run_repo_script("training.store", "verify", str(tmp_path))
    assert empty.returncode == 1 and "no chunk manifests" in empty.stderr
    assert (
        run_repo_script(
            "training.store", "verify", str(out), "--manifests", str(manifests)
        ).returncode
        == 0
    )
    # Remade elsewhere, the committed manifest stays as it was.
    text = (manifests / "chunk-000000.json").read_text()
    other = tmp_path / "other"
    remade = run_repo_script(
        "training.store",
        "convert",
        str(data),
        "--out",
        str(other),
        "--manifests",
        str(manifests),
        "--teacher",
        "stockfish nodes=5000",
    )
    assert remade.returncode == 0 and (manifests / "chunk-000000.json").read_text() == text
    assert (
        run_repo_script(
            "training.store", "verify", str(other), "--manifests", str(manifests)
        ).returncode
        == 0
    )

    missing = run_repo_script(
        "training.store", "convert", str(tmp_path / "none.gz"), "--out", str(out)
    )
    assert missing.returncode == 2 and missing.stderr.strip().splitlines() == [
        f"store: {tmp_path / 'none.gz'}: no such file"
    ]
    zero = run_repo_script(
        "training.store", "convert", str(data), "--out", str(out), "--chunk-size", "0"
    )
    assert zero.returncode == 2 and "--chunk-size must be positive" in zero.stderr


def test_dedup_and_split_keep_each_position_once_and_on_one_side(tmp_path: Path) -> None:
    fens = game_fens(300, seed=5)
    # Every position twice with another label, plus the same positions at other clocks.
    twice = fens + fens + [" ".join([*f.split()[:4], "7", "99"]) for f in fens[:50]]
    data = tmp_path / "data.gz"
    data_file(data, twice, {})
    raw = tmp_path / "raw"
    assert (
        run_repo_script(
            "training.store", "convert", str(data), "--out", str(raw), "--chunk-size", "64"
        ).returncode
        == 0
    )
    distinct = len({" ".join(f.split()[:4]) for f in fens})

    unique = tmp_path / "unique"
    done = run_repo_script(
        "training.store", "dedup", str(raw), "--out", str(unique), "--chunk-size", "50"
    )
    assert done.returncode == 0, done.stderr
    assert f"records {len(twice)}, distinct positions {distinct}" in done.stdout
    kept = stored(unique)
    # The first of each position is kept, with its labels.
    firsts: dict[str, int] = {}
    for index, fen in enumerate(twice):
        firsts.setdefault(" ".join(fen.split()[:4]), index)
    assert [records.decode(r)[0].fen() for r in kept] == [twice[i] for i in sorted(firsts.values())]
    assert run_repo_script("training.store", "verify", str(unique)).returncode == 0

    train, valid = tmp_path / "train", tmp_path / "valid"
    split = run_repo_script(
        "training.store",
        "split",
        str(raw),
        "--train",
        str(train),
        "--valid",
        str(valid),
        "--valid-fraction",
        "0.2",
    )
    assert split.returncode == 0, split.stderr
    train_keys = {bytes(r)[:26] for r in stored(train)}
    valid_keys = {bytes(r)[:26] for r in stored(valid)}
    assert len(stored(train)) + len(stored(valid)) == len(twice)
    assert not train_keys & valid_keys and train_keys | valid_keys
    assert 0.1 < len(valid_keys) / distinct < 0.3
    assert run_repo_script("training.store", "verify", str(valid)).returncode == 0

    # Another salt, another split, and no numpy warning (the salt's product wraps).
    other = run_repo_script(
        "training.store",
        "split",
        str(raw),
        "--train",
        str(tmp_path / "t7"),
        "--valid",
        str(tmp_path / "v7"),
        "--valid-fraction",
        "0.2",
        "--salt",
        "7",
    )
    assert other.returncode == 0 and "Warning" not in other.stderr, other.stderr
    assert {bytes(r)[:26] for r in stored(tmp_path / "v7")} != valid_keys

    shown = run_repo_script("training.store", "info", str(raw))
    assert shown.returncode == 0, shown.stderr
    assert f"records {len(twice)}, chunks {-(-len(twice) // 64)}" in shown.stdout
    assert f"distinct positions {distinct}" in shown.stdout
    same = run_repo_script("training.store", "dedup", str(raw), "--out", str(raw))
    assert same.returncode == 2 and "must not be an input" in same.stderr


def test_split_by_chunk_keeps_whole_chunks_apart(tmp_path: Path) -> None:
    """--by-chunk: every round(1 / fraction)-th input chunk, whole, is validation (a
    datagen chunk is whole games); a training position also in them is dropped."""
    fens = game_fens(300, seed=8)
    # Positions 20-29 again at the end: in chunk 0 (validation) and chunk 5 (training).
    data_file(tmp_path / "data.gz", fens + fens[:30], {})
    raw = tmp_path / "raw"
    made = run_repo_script(
        "training.store", "convert", str(tmp_path / "data.gz"), "--out", str(raw),
        "--chunk-size", "64",
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    chunks = [np.asarray(chunk) for _, chunk in store.open_chunks(store.Store.at(raw))]
    assert len(chunks) == 6  # 330 records
    train, valid = tmp_path / "train", tmp_path / "valid"
    done = run_repo_script(
        "training.store", "split", str(raw), "--train", str(train), "--valid", str(valid),
        "--valid-fraction", "0.25", "--by-chunk", "--chunk-size", "1000",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # Every 4th chunk from 0: chunks 0 and 4, whole and in order.
    assert stored(valid).tobytes() == np.concatenate([chunks[0], chunks[4]]).tobytes()
    valid_keys = {bytes(r)[:26] for r in stored(valid)}
    train_records = stored(train)
    assert not {bytes(r)[:26] for r in train_records} & valid_keys
    others = np.concatenate([chunks[1], chunks[2], chunks[3], chunks[5]])
    kept = [r for r in others if bytes(r)[:26] not in valid_keys]
    assert train_records.tobytes() == np.array(kept, dtype=others.dtype).tobytes()
    dropped = len(others) - len(kept)
    assert dropped > 0 and f"({dropped} training records dropped" in done.stdout
    # --salt 1 shifts the chunks: 3 (and 7, absent).
    shifted = run_repo_script(
        "training.store", "split", str(raw), "--train", str(tmp_path / "t1"), "--valid",
        str(tmp_path / "v1"), "--valid-fraction", "0.25", "--by-chunk", "--salt", "1",
    )  # fmt: skip
    assert shifted.returncode == 0, shifted.stderr
    assert stored(tmp_path / "v1").tobytes() == chunks[3].tobytes()


def test_dedup_is_exact_when_every_hash_collides(monkeypatch: pytest.MonkeyPatch) -> None:
    fens = game_fens(200, seed=6)
    fens += fens[::3]
    parts = [
        records.from_bytes(
            b"".join(records.encode(chess.Board(f), i, 0) for i, f in enumerate(part))
        )
        for part in (fens[:90], fens[90:])
    ]
    expected = [i for i, f in enumerate(fens) if fens.index(f) == i]
    assert list(np.flatnonzero(store.first_of_each_position(parts))) == expected
    # Hashes all equal: every record is compared by its whole key, with the same answer.
    monkeypatch.setattr(
        store, "position_hash", lambda keys, salt=0: np.zeros(len(keys[0]), np.uint64)
    )
    assert list(np.flatnonzero(store.first_of_each_position(parts))) == expected


def test_a_damaged_xz_file_is_said_and_what_was_read_is_kept(tmp_path: Path) -> None:
    fens = game_fens(3000, seed=7)
    text = "".join(f"{fen};{i % 300};1-0\n" for i, fen in enumerate(fens)).encode()
    packed = lzma.compress(text)
    damaged = tmp_path / "cut.xz"
    damaged.write_bytes(packed[: len(packed) * 2 // 3])
    out = tmp_path / "store"
    done = run_repo_script("training.store", "convert", str(damaged), "--out", str(out))
    assert done.returncode == 1
    assert f"error: {damaged}:" in done.stderr and "damaged xz data" in done.stderr
    assert "Traceback" not in done.stderr and "damaged files 1" in done.stdout
    kept = stored(out)
    assert 0 < len(kept) < len(fens)
    assert [records.decode(r)[0].fen() for r in kept] == fens[: len(kept)]
    assert run_repo_script("training.store", "verify", str(out)).returncode == 0


def test_the_committed_manifests_are_of_the_committed_positions() -> None:
    # Changed text data without remade manifests fails here: remake them with the
    # command in docs/training.md, which is the one the manifests record.
    root = Path(__file__).resolve().parents[1]
    folder = root / "scripts" / "training" / "data" / "manifests" / "positions"
    manifests = [json.loads(path.read_text()) for path in sorted(folder.glob("chunk-*.json"))]
    assert manifests
    doc = (root / "docs" / "training.md").read_text(encoding="utf-8")
    begin = doc.index("python -m scripts.training.store convert scripts/training/data/positions")
    lines = []
    for line in doc[begin:].splitlines():
        lines.append(line.rstrip("\\"))
        if not line.endswith("\\"):
            break
    command = shlex.split(" ".join(lines))
    for manifest in manifests:
        assert manifest["version"] == records.VERSION
        assert shlex.split(manifest["remake"]) == command
        for source in manifest["made_by"]["settings"]["inputs"]:
            assert store.sha256_of(root / source["path"]) == source["sha256"], source["path"]
    assert sum(m["records"] for m in manifests) == 1_948_482


@pytest.mark.slow
def test_the_documented_command_remakes_the_committed_chunks(tmp_path: Path) -> None:
    # About 90 s of one core: the committed positions converted into a fresh folder,
    # checked against the committed manifests, which stay as they are.
    root = Path(__file__).resolve().parents[1]
    committed = root / "scripts" / "training" / "data" / "manifests" / "positions"
    before = {path.name: path.read_bytes() for path in committed.iterdir()}
    inputs = ["positions.gz", *(f"positions-{n}.xz" for n in range(2, 6))]
    made = run_repo_script(
        "training.store",
        "convert",
        *(f"scripts/training/data/{name}" for name in inputs),
        "--out",
        str(tmp_path),
        "--manifests",
        str(committed),
        "--teacher",
        "stockfish nodes=5000",
        timeout=900,
    )
    assert made.returncode == 0, made.stderr
    checked = run_repo_script(
        "training.store", "verify", str(tmp_path), "--manifests", str(committed)
    )
    assert checked.returncode == 0, checked.stderr
    assert {path.name: path.read_bytes() for path in committed.iterdir()} == before
