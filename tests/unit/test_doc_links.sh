#!/usr/bin/env bash
# Every relative Markdown link in README.md, docs/*.md and results/*/README.md names a file or
# folder that exists, so moving a page, a figure or a study's folder without updating its
# links fails here. Web links (scheme://) and in-page anchors (#...) are not checked.
set -euo pipefail
: "${SAPO_SOURCE_DIR:?SAPO_SOURCE_DIR must name the source tree}"
cd "$SAPO_SOURCE_DIR"
bad=0 n=0
for page in README.md docs/*.md results/*/README.md; do
    dir=$(dirname "$page")
    while IFS= read -r target; do
        case $target in *://* | '#'*) continue ;; esac
        n=$((n + 1))
        path=${target%%#*}
        if [ ! -e "$dir/$path" ]; then
            echo "FAIL: $page links to $target, which does not exist" >&2
            bad=1
        fi
    done < <(grep -o '](\([^) ]*\))' "$page" | sed 's/^](\(.*\))$/\1/')
done
[ "$bad" = 0 ] && echo "ok: $n relative links resolve"
exit $bad
