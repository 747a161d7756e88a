#!/usr/bin/env bash
# The dependency rule of docs/architecture.md, checked on #include lines: a library may include
# only its own headers and those of the libraries it links (CMake's DEPS). Every target has the
# repository root as include path, so the compiler cannot catch a wrong include; this does.
# Usage: include_rule.sh SOURCE_DIR
# To add a module (e.g. api/), add one line to ALLOWED: "<folder>=<folders it may include>".
set -euo pipefail
root=${1:?usage: include_rule.sh SOURCE_DIR}
cd "$root"
ALLOWED=(
  "graph=graph"
  "shape_infer=graph shape_infer"
  "editor=graph editor"
  "quantizer=graph quantizer"
  "runtime=graph shape_infer runtime"
  "benchmark=graph shape_infer editor quantizer runtime benchmark"
  "api=graph shape_infer editor quantizer runtime api include"
)
# Project folders an #include "x/..." can name; includes of anything else (onnx/, CLI/) are external.
PROJECT=(graph shape_infer editor quantizer runtime benchmark tools tests api)
status=0
for rule in "${ALLOWED[@]}"; do
  folder=${rule%%=*}
  allowed=" ${rule#*=} "
  [ -d "$folder" ] || continue
  while IFS= read -r hit; do
    [ -z "$hit" ] && continue
    target=$(echo "$hit" | sed -E 's/.*#include "([a-z_0-9]+)\/.*/\1/')
    case " ${PROJECT[*]} " in *" $target "*) ;; *) continue ;; esac
    case "$allowed" in
      *" $target "*) ;;
      *) echo "$folder/ may include only {${rule#*=}}: $hit"; status=1 ;;
    esac
  done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_0-9]+/' --include='*.cc' --include='*.h' "$folder" || true)
done
[ $status -eq 0 ] && echo "include rule holds for: ${ALLOWED[*]%%=*}"
exit $status
