#!/bin/sh
# The project's standard strength test: a candidate against a base, SPRT with
# elo0=0 elo1=10 (logistic Elo), alpha=beta=0.05, tc 10+0.1, the shipped balanced
# openings (scripts/openings/noob3_500.epd) in colour-swapped pairs, concurrency 2,
# draw/resign adjudication. It stops as soon as the SPRT accepts H0 or H1.
#
# Usage: scripts/sprt.sh CANDIDATE BASE [extra match.py options]
#   CANDIDATE, BASE: a checkout directory (runs "python -m engine" inside it), or an
#   engine spec as match.py takes it, e.g. "cmd='/path/.venv/bin/cutoff' name=dev".
#   Extra options override the preset, e.g. --concurrency 1 or --pgn my.pgn.
# Environment: PYTHON (the interpreter for match.py and for checkout engines;
#   default: this checkout's .venv, else python3), SPRT_PGN (PGN file name).
# Typical use, comparing your work tree with main:
#   git worktree add ../cutoff-base main
#   scripts/sprt.sh . ../cutoff-base
set -eu

here=$(cd "$(dirname "$0")" && pwd)
if [ "$#" -lt 2 ]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 1
fi

python=${PYTHON:-}
if [ -z "$python" ]; then
    if [ -x "$here/../.venv/bin/python" ]; then
        python="$here/../.venv/bin/python"
    else
        python=python3
    fi
fi

# A directory becomes "python -m engine" run inside it, so that its own engine/
# package is the one imported; the engine is named after the directory.
spec() {
    if [ -d "$1" ]; then
        dir=$(cd "$1" && pwd)
        printf "cmd='%s -m engine' dir='%s' name='%s'" "$python" "$dir" "$(basename "$dir")"
    else
        printf '%s' "$1"
    fi
}

candidate=$(spec "$1")
base=$(spec "$2")
shift 2
pgn=${SPRT_PGN:-sprt-$(date +%Y%m%d-%H%M%S).pgn}
exec "$python" "$here/match.py" --preset sprt --engine "$candidate" --engine "$base" \
    --pgn "$pgn" "$@"
