# The start every example test (test_example_*.sh) shares, sourced as
#   source "$(dirname "$0")/example_prelude.sh" "$@"
# It runs the test from the repository root with $tide (the first argument, build/tide by
# default, made absolute so that a test may cd), $python (/usr/bin/python3) and a temporary
# folder $tmp removed on exit; where python cannot import torch and numpy the test is skipped
# with its "0 passed, 0 failed" line.
set -uo pipefail
cd "$(dirname "$0")/../.."
tide=$(cd "$(dirname "${1:-build/tide}")" && pwd)/$(basename "${1:-build/tide}")
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$python" -c "import torch, numpy" >/dev/null 2>&1; then
  echo "skipped: $python cannot import torch and numpy"
  echo "0 passed, 0 failed"
  exit 0
fi
