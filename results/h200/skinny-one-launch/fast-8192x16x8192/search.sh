#!/usr/bin/env bash
# 8192x16x8192 (the memory suite's worst xgemm_fast row): xgemm_skinny's gpu space, 60 s, and
# xgemm_fast's gpu space, 60 s, each its own database; then both databases' best against the entry.
set -u
G=${GEMMTUNE:-gemmtune}; O=$1; mkdir -p $O
$G search --kernel xgemm_skinny --space gpu -s 8192x16x8192 --time-budget 60 --db $O/sk.json --out $O/sk > $O/sk.log 2>&1
tail -3 $O/sk.log
$G search --kernel xgemm_fast --space gpu -s 8192x16x8192 --time-budget 60 --db $O/fa.json --out $O/fa > $O/fa.log 2>&1
tail -3 $O/fa.log
$G db show $O/sk.json; $G db show $O/fa.json
