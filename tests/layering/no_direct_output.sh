#!/usr/bin/env bash
# Libraries never print (STYLE R4, issue 17): warnings go through graph/diagnostics.h and only
# tools/ write to stdout/stderr. Fails listing every direct write under the folders below.
# Usage: no_direct_output.sh SOURCE_DIR [FOLDER...]   (default folders: LIBRARY_FOLDERS)
# A line may opt out with the marker "output-ok" (only graph/error.cc's abort message does).
set -euo pipefail
LIBRARY_FOLDERS=(graph quantizer editor shape_infer runtime)
root=${1:?usage: no_direct_output.sh SOURCE_DIR [FOLDER...]}
shift
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=("${LIBRARY_FOLDERS[@]}")
cd "$root"
existing=()
for f in "${folders[@]}"; do [ -d "$f" ] && existing+=("$f"); done
folders=("${existing[@]}")
pattern='std::(cerr|cout|clog)|\b(printf|puts|perror)\(|fprintf\((stderr|stdout)|fputs\([^;]*(stderr|stdout)|\bstd::printf|write\((1|2),'
hits=$(grep -rnE "$pattern" --include='*.cc' --include='*.h' "${folders[@]}" | grep -v 'output-ok' || true)
# An allowed line is the one after a comment carrying the marker.
hits=$(echo "$hits" | while IFS= read -r hit; do
  [ -z "$hit" ] && continue
  file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}
  prev=""
  [ "$line" -gt 1 ] && prev=$(sed -n "$((line - 1))p" "$file")
  case "$prev" in *output-ok*) ;; *) echo "$hit" ;; esac
done)
if [ -n "$hits" ]; then
  echo "libraries must report through graph/diagnostics.h, not print:"
  echo "$hits"
  exit 1
fi
echo "no direct output in: ${folders[*]}"
