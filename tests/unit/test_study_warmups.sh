# The study drivers' guards against bits that would not pair with the committed runs
# (experiments/lib/study_run.sh, experiments/specialists/warmups.sh), with a stand-in for sapo:
# study_setup pins OpenBLAS's Zen kernel and refuses a binary that runs another; a warm-up of a
# reported seed whose record differs from the specialist study's committed one is removed and
# ends the script with one line naming both files; equal records pass and are kept.
set -u
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
SRC=$(cd "${SAPO_SOURCE_DIR:-.}" && pwd)
FAKE=$TMP/sapo
cat > "$FAKE" <<'SH'
#!/usr/bin/env bash
# stand-in for sapo: info names the kernel (FAKE_KERNEL, else OPENBLAS_CORETYPE); pretrain
# writes --out and its record, whose pass1 is FAKE_PASS
case $1 in
  info) echo "blas       OpenBLAS 0.3.21 DYNAMIC_ARCH, kernel ${FAKE_KERNEL:-${OPENBLAS_CORETYPE:-SkylakeX}}";
        echo "numerics version 2" ;;
  pretrain) while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
            echo weights > "$out"; echo "{\"pass1\": ${FAKE_PASS:-0.5}}" > "$out.json" ;;
esac
SH
chmod +x "$FAKE"
W="$SRC/experiments/specialists/warmups.sh"
REF=$TMP/ref
mkdir -p "$REF/s1"
for n in format spec-base_conversion spec-basic_arithmetic spec-fraction_simplification spec-calendar_arithmetic gen; do
  echo '{"pass1": 0.5}' > "$REF/s1/$n.ckpt.json"
done

# equal records: every warm-up kept, the folder printed
expect 0 "^$TMP/a$" env REF_WARMUPS="$REF" bash "$W" "$FAKE" 1 400 300 "$TMP/a"
[ -f "$TMP/a/gen.ckpt" ] || fail "an equal warm-up was not kept"
# a differing record: one line naming both files, the warm-up removed, exit 1
EXPECT_ONE_LINE=1
expect 1 "^warmups: $TMP/b/format.ckpt.json differs from $REF/s1/format.ckpt.json \(the specialist study's\).*OPENBLAS_CORETYPE.*removed" \
  env REF_WARMUPS="$REF" FAKE_PASS=0.25 bash "$W" "$FAKE" 1 400 300 "$TMP/b"
[ ! -e "$TMP/b/format.ckpt" ] && [ ! -e "$TMP/b/format.ckpt.json" ] || fail "a differing warm-up was left in $TMP/b"
# one made earlier and found again is checked too
mkdir -p "$TMP/c" && echo weights > "$TMP/c/format.ckpt" && echo '{"pass1": 0.75}' > "$TMP/c/format.ckpt.json"
expect 1 "^warmups: $TMP/c/format.ckpt.json differs" env REF_WARMUPS="$REF" bash "$W" "$FAKE" 1 400 300 "$TMP/c"
# a seed without a committed record (seed 0, calibration's) and REF_WARMUPS= are not checked
expect 0 "^$TMP/d$" env REF_WARMUPS="$REF" FAKE_PASS=0.25 bash "$W" "$FAKE" 0 400 300 "$TMP/d"
expect 0 "^$TMP/e$" env REF_WARMUPS= FAKE_PASS=0.25 bash "$W" "$FAKE" 1 400 300 "$TMP/e"

# study_setup: OPENBLAS_CORETYPE defaults to Zen; a binary on another kernel is refused
setup() { (cd "$SRC" && . experiments/lib/study_run.sh && RUNS=$TMP/runs OUT=$TMP/out COMMIT=x study_setup demo "$FAKE" &&
           echo "kernel $OPENBLAS_CORETYPE, numerics $NUMERICS"); }
expect 0 "^kernel Zen, numerics 2$" env -u OPENBLAS_CORETYPE bash -c "$(declare -f setup); TMP=$TMP SRC=$SRC FAKE=$FAKE setup"
expect 0 "^kernel Haswell, numerics 2$" env OPENBLAS_CORETYPE=Haswell bash -c "$(declare -f setup); TMP=$TMP SRC=$SRC FAKE=$FAKE setup"
expect 2 "^demo: $FAKE runs OpenBLAS's SkylakeX kernel, not Zen" env -u OPENBLAS_CORETYPE FAKE_KERNEL=SkylakeX \
  bash -c "$(declare -f setup); TMP=$TMP SRC=$SRC FAKE=$FAKE setup"

# RUNS/STOP: the driver ends before its next run with status 3, removes the file, starts nothing
stop_run() { (cd "$SRC" && . experiments/lib/study_run.sh && mpirun() { echo ran >> "$TMP/stop/mpirun"; } &&
              RUNS=$TMP/stop/runs OUT=$TMP/stop/out COMMIT=x study_setup demo "$FAKE" && touch "$RUNS/STOP" &&
              study_run next_run cfg.ini 1 && echo "went on"); }
expect 3 "STOP found \(and removed\): stopping before next_run" env -u OPENBLAS_CORETYPE \
  bash -c "$(declare -f stop_run); TMP=$TMP SRC=$SRC FAKE=$FAKE stop_run"
[ ! -e "$TMP/stop/runs/STOP" ] && [ ! -e "$TMP/stop/mpirun" ] && ! grep -q next_run "$TMP/stop/out/costs.csv" 2>/dev/null ||
  fail "STOP: the file was kept or a run started"
[ "$fails" -eq 0 ] && echo "all study guard checks passed" || echo "$fails failures"
[ "$fails" -eq 0 ]
