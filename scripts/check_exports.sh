#!/usr/bin/env bash
# Fails unless a shared library's dynamic symbol table defines exactly its
# ABI: the functions a public header declares, or the symbols named.
# usage: check_exports.sh [--nm NM] LIBRARY (--header HEADER PREFIX | SYMBOL...)
#   --header anvil.h anvil_   every `anvil_...(` the header declares
set -euo pipefail
nm="nm"
if [ "${1:-}" = --nm ]; then
  nm=$2
  shift 2
fi
library=$1
shift
if [ "${1:-}" = --header ]; then
  # Declarations are `type name(`; function-pointer typedefs read
  # `(*name)(` and so do not match.
  expected=$(grep -oE "\\b$3[A-Za-z0-9_]*\\(" "$2" | tr -d '(' | sort -u)
else
  expected=$(printf '%s\n' "$@" | sort -u)
fi
# Defined symbols only (undefined ones are what the library imports), with
# any @VERSION suffix dropped.
exported=$("$nm" -D --defined-only --format=posix "$library" | cut -d' ' -f1 | sed 's/@.*//' | sort -u)
extra=$(comm -13 <(echo "$expected") <(echo "$exported"))
missing=$(comm -23 <(echo "$expected") <(echo "$exported"))
status=0
if [ -n "$extra" ]; then
  echo "$library exports $(echo "$extra" | wc -l) symbol(s) beyond its ABI, e.g.:" >&2
  echo "$extra" | head -10 | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$missing" ]; then
  echo "$library does not export:" >&2
  echo "$missing" | sed 's/^/  /' >&2
  status=1
fi
[ $status -eq 0 ] && echo "$library: exports exactly its $(echo "$expected" | wc -l) ABI symbol(s)"
exit $status
