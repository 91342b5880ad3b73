#!/usr/bin/env bash
# `sapo info` prints the build facts and then the config schema table: every key with its
# type, default, range and per-node flag. Checks a few rows and that every schema key is there.
set -euo pipefail
: "${SAPO_BIN:?SAPO_BIN must name the sapo binary}"
out=$("$SAPO_BIN" info)
fail=0
expect_line() { # regex that some line of the output must match
    if ! grep -Eq -- "$1" <<<"$out"; then
        echo "FAIL: no line of 'sapo info' matches: $1" >&2
        fail=1
    fi
}
expect_line '^# sapo build'
expect_line '^backends +cpu'
expect_line '^cpu +.+ \((sse|avx|no vector)'
expect_line '^# key +type +default +range +node +help'
expect_line '^model\.n_layer +int +2 +\[1, 64\] +yes +'
expect_line '^model\.d_model +int +64 +\[8, 4096\] +yes +'
expect_line '^model\.backend +enum +cpu +cpu\|cuda\|auto +yes +'
expect_line '^model\.init_seed +int +1337 +\[0, 2\^62\] +- +'
expect_line '^optim\.lr +float +3e-4 +\[0, 1\] +yes +'
expect_line '^optim\.beta1 +float +0\.9 +\[0, 1\) +- +'
expect_line '^gen\.top_p +float +1\.0 +\(0, 1\] +yes +'
expect_line '^sampling\.filter +enum +zero_adv +zero_adv\|none +- +'
expect_line '^run\.out +string +"" +- +- +'
# Fixed width: the type column starts at the same offset on every key row.
cols=$(grep -E '^[a-z]+\.[a-z0-9_]+ ' <<<"$out" | awk '{ print index($0, " " $2 " ") }' | sort -u | wc -l || true)
if [ "$cols" != 1 ]; then
    echo "FAIL: the type column is not aligned ($cols different offsets)" >&2
    fail=1
fi
rows=$(grep -cE '^[a-z]+\.[a-z0-9_]+ +(int|float|bool|string|enum) ' <<<"$out" || true)
if [ "$rows" -lt 38 ]; then
    echo "FAIL: only $rows schema rows in 'sapo info'" >&2
    fail=1
fi
if grep -Eq '^grpo\.lr ' <<<"$out"; then
    echo "FAIL: grpo.lr listed; the learning rate is optim.lr only" >&2
    fail=1
fi
[ $fail = 0 ] && echo "sapo info: $rows schema rows, layout ok"
exit $fail
