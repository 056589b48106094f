#!/bin/sh
# Installs the Home Assistant of requirements.txt into a venv outside the repository,
# ${TRELLIS_CACHE:-~/.cache/trellis}/homeassistant-<version>, and prints the venv's python.
# Idempotent: when the venv holds exactly these requirements it only prints the path.
# Needs Python 3.13 (Home Assistant 2025.4 requires it): python3.13 on PATH, or pyenv's 3.13.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
requirements="$here/requirements.txt"
cache="${TRELLIS_CACHE:-$HOME/.cache/trellis}"
version=$(sed -n 's/^homeassistant==//p' "$requirements")
venv="$cache/homeassistant-$version"
stamp="$venv/.trellis-requirements"

if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
    echo "$venv/bin/python"
    exit 0
fi

python=""
for candidate in "$(command -v python3.13 || true)" \
                 "$( (pyenv root 2>/dev/null || echo "$HOME/.pyenv") | head -n 1)"/versions/3.13*/bin/python3.13; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then python="$candidate"; fi
done
if [ -z "$python" ]; then
    echo "install.sh: Home Assistant needs Python 3.13: install python3.13 (or pyenv install 3.13) and run again" >&2
    exit 1
fi

echo "installing Home Assistant $version into $venv (with $python)" >&2
started=$(date +%s)
rm -rf "$venv"
mkdir -p "$cache"
"$python" -m venv "$venv"
pip="$venv/bin/pip"
export PIP_DISABLE_PIP_VERSION_CHECK=1
# Home Assistant alone first, for the constraints file its releases pin every dependency with.
"$pip" install --quiet --no-compile --no-deps "homeassistant==$version" >&2
constraints=$("$venv/bin/python" -c 'import homeassistant, os; print(os.path.join(os.path.dirname(homeassistant.__file__), "package_constraints.txt"))')
"$pip" install --quiet --no-compile -r "$requirements" -c "$constraints" >&2
cp "$requirements" "$stamp"
echo "installed Home Assistant $version in $(( $(date +%s) - started )) s" >&2
echo "$venv/bin/python"
