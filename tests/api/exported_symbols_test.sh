#!/usr/bin/env bash
# libnuphar.so exports the C API only (libnuphar.map): every defined dynamic symbol is nuphar_*
# or the version node, and the C API entry points are all there.
set -euo pipefail
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=$(echo "$syms" | grep -v -E '^(nuphar_[a-z0-9_]+|NUPHAR_0)$' || true)
if [ -n "$bad" ]; then
  echo "libnuphar.so exports symbols outside the C API:"
  echo "$bad" | head -50
  exit 1
fi
for f in nuphar_session_create nuphar_session_create_from_bytes nuphar_session_run nuphar_session_run_into \
         nuphar_status_message nuphar_model_editor nuphar_symbolic_shape_infer nuphar_model_quantizer; do
  echo "$syms" | grep -qx "$f" || { echo "missing export: $f"; exit 1; }
done
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[ "$soname" = "libnuphar.so.0" ] || { echo "SONAME is '$soname', expected libnuphar.so.0"; exit 1; }
echo "libnuphar.so: $(echo "$syms" | wc -l) symbols, all C API; SONAME $soname"
