#!/usr/bin/env bash
# The commands' option tables (getopt_long, src/core/cli_options.c, the benchmarks' too): an unknown option or a
# missing value is one line naming it and --help, exit 2; --help prints each table's
# options; a bad integer names the flag and its range; CONFIG.ini and section.key=value
# overrides still reach the config (a bad override is still a config error).
set -u
# shellcheck source=tests/unit/cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
EXPECT_ONE_LINE=1
for cmd in pretrain demo info verify "tasks gen" "tasks list" "tasks score" "tasks baseline" "bench model" \
           "bench round"; do
  # shellcheck disable=SC2086
  expect 2 "^sapo $cmd: unknown option '--bogus' \(see \`sapo $cmd --help\`\)$" "$SAPO" $cmd --bogus
done
expect 2 "^sapo pretrain: option '--out' needs a value" "$SAPO" pretrain --out
expect 2 "^sapo demo: --steps 'x': expected an integer in \[1, 2147483647\]$" "$SAPO" demo --steps x
expect 2 "^sapo demo: --batch '0': expected an integer in \[1, 4096\]$" "$SAPO" demo --batch 0
expect 2 "^sapo verify: --node '-1': expected an integer in \[0, 2147483647\]$" "$SAPO" verify --ckpt /dev/null --rollout /dev/null --node -1
expect 2 "^sapo bench: unknown option '--bogus'" "$SAPO" bench --bogus
expect 2 "^sapo bench: unknown benchmark 'x' \(expected: model, round, swarm\)$" "$SAPO" bench x
expect 2 "^sapo bench model: --ctx 'abc': expected an integer in \[2, 4096\]$" "$SAPO" bench model --ctx abc
expect 2 "^sapo bench model: option '--ctx' needs a value \(see \`sapo bench model --help\`\)$" "$SAPO" bench model --ctx
expect 2 "^sapo bench model: option '--no-torch' takes no value" "$SAPO" bench model --no-torch=1
expect 2 "^sapo bench model: --mode 'xyz': expected fast, det or both$" "$SAPO" bench model --mode xyz
expect 2 "^sapo bench model: --size '2,3,64': expected L,H,C with C a multiple of H$" "$SAPO" bench model --size 2,3,64
expect 2 "^sapo bench model: unexpected argument 'x'" "$SAPO" bench model x
expect 2 "^sapo bench round: --rounds '0': expected an integer in \[1, 100000\]$" "$SAPO" bench round --rounds 0
expect 2 "^sapo bench round: option '--init' needs a value" "$SAPO" bench round --no-torch --init
expect 2 "^sapo bench round: unexpected argument 'x' \(not section.key=value" "$SAPO" bench round x
expect 2 "^sapo info: unexpected argument 'x'" "$SAPO" info x
expect 2 "^sapo pretrain: config error: .*model.n_layer" "$SAPO" pretrain model.n_layer=abc --quiet
expect 2 "^sapo pretrain: config error: .*no_such_file.ini" "$SAPO" pretrain no_such_file.ini --out x.ckpt
expect 2 "^sapo pretrain: unexpected argument 'b.ini'" "$SAPO" pretrain a.ini b.ini
expect 0 "--out CKPT +the checkpoint" "$SAPO" pretrain --help
expect 0 "--quiet +no progress lines" "$SAPO" pretrain --help
expect 0 "--steps N +training steps" "$SAPO" demo --help
expect 0 "--resume RUN_DIR +continue" "$SAPO" run --help
expect 0 "--columns +instead" "$SAPO" info --help
expect 0 "--node K +whose" "$SAPO" verify -h
expect 0 "--ctx T +context length" "$SAPO" bench model --help
expect 0 "--warmup-rounds K +untimed rounds" "$SAPO" bench round --help
expect 0 "section.key=value +override a config key" "$SAPO" bench round --help
if "$SAPO" bench round --help | grep -q -- --child; then fail "bench round --help lists the internal --child"; fi
expect 0 '^\| `reward_own` \|' "$SAPO" info --columns
# pretrain's report is the nodes' evaluation (swarm/evaluation.c) on the run's held-out set.
TINY="model.n_layer=1 model.d_model=32 model.n_head=2 model.n_ctx=160 gen.max_new_tokens=24 tasks.preset=tiny
      tasks.max_unanswerable=1 tasks.names=basic_arithmetic,base_conversion pretrain.steps=2 pretrain.batch=4"
# shellcheck disable=SC2086
expect 0 "on the held-out set of 6 questions: run.eval_seed 3, digest [0-9a-f]{16}" "$SAPO" pretrain $TINY run.eval_questions=6 run.eval_seed=3 --out "$TMP/w.ckpt" --quiet
# shellcheck disable=SC2086
expect 0 "base_conversion +[0-9.]+ +\(answer tags in +[0-9.]+%, 3 questions\)" "$SAPO" pretrain $TINY run.eval_questions=6 --out "$TMP/w.ckpt"
# shellcheck disable=SC2086
expect 0 "warm-up skill: not measured \(run.eval_questions = 0\)" "$SAPO" pretrain $TINY run.eval_questions=0 --out "$TMP/w.ckpt"
# pretrain honours model.backend: a backend this build lacks is a config error (stderr), exit 2.
if ! "$SAPO" info | grep -Eq '^backends +cpu cuda'; then
  # shellcheck disable=SC2086
  err=$("$SAPO" pretrain $TINY model.backend=cuda --out "$TMP/c.ckpt" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" != 2 ] || [ "$err" != "sapo pretrain: config error: model.backend = 'cuda' is not available in this build or on this machine" ]; then
    fail "pretrain model.backend=cuda exited $rc: $err"
  elif [ -e "$TMP/c.ckpt" ]; then fail "pretrain wrote a checkpoint despite the backend error"
  else echo "ok: pretrain model.backend=cuda -> 2"; fi
fi
[ "$fails" = 0 ] || { echo "$fails failure(s)"; exit 1; }
