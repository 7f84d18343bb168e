#!/bin/sh
# The project's standard strength test: a candidate against a base, SPRT with
# elo0=0 elo1=10 (logistic Elo), alpha=beta=0.05, tc 10+0.1, the shipped balanced
# openings (scripts/matches/openings/noob3_500.epd) in colour-swapped pairs,
# concurrency 2, draw/resign adjudication. It stops as soon as the SPRT accepts H0 or H1.
#
# Usage: scripts/matches/sprt.sh CANDIDATE BASE [extra match runner options]
#   CANDIDATE, BASE: a checkout directory (runs "python -m engine" inside it), or an
#   engine spec as the match runner takes it, e.g. "cmd='/path/.venv/bin/cutoff' name=dev".
#   Extra options override the preset, e.g. --concurrency 1 or --pgn my.pgn.
# Environment: PYTHON (the interpreter for the runner and for checkout engines;
#   default: this checkout's .venv, else python3), SPRT_PGN (PGN file name).
# Typical use, comparing your work tree with main:
#   git worktree add --detach ../cutoff-base main
#   scripts/matches/sprt.sh . ../cutoff-base
set -eu

# This file is scripts/matches/sprt.sh: the checkout root is two levels up.
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$#" -lt 2 ]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 1
fi

python=${PYTHON:-}
# The runner starts from the checkout root (below): a relative interpreter path given
# in PYTHON is made absolute while it still means what the caller meant.
case $python in
    /*) ;;
    */*) python="$PWD/$python" ;;
esac
if [ -z "$python" ]; then
    if [ -x "$root/.venv/bin/python" ]; then
        python="$root/.venv/bin/python"
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
# The runner is run as a module from the checkout root (python -m needs the package
# on the path, and PYTHONPATH would leak into the engines). The PGN stays where the
# caller is; other relative paths (extra options, engine specs) are from the root.
case $pgn in
    /*) ;;
    *) pgn="$PWD/$pgn" ;;
esac
cd "$root"
exec "$python" -m scripts.matches.match --preset sprt --engine "$candidate" \
    --engine "$base" --pgn "$pgn" "$@"
