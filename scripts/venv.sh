# Sourced by scripts/build and scripts/test: the project's own environment, never the global one.
#
# Creates .venv (or $SPECDEC_VENV) with Debian's or the user's `python3` (3.11+, with its venv
# module) when it is missing, puts it first on PATH, and installs into it every package of
# requirements.lock (hash-checked) and the package itself (editable), again only when the lock,
# pyproject.toml or the Python changed (a stamp inside the venv holds their sha256). Two checkouts
# on one machine each have their own, and a laptop's global packages are never touched.
VENV=${SPECDEC_VENV:-$PWD/.venv}
PY=${SPECDEC_PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  command -v "$PY" >/dev/null || { echo "scripts: no $PY on PATH (Python 3.11 or newer is needed; set SPECDEC_PYTHON)" >&2; exit 1; }
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "scripts: $PY is $("$PY" --version 2>&1 | head -1), Python 3.11 or newer is needed (set SPECDEC_PYTHON)" >&2; exit 1; }
  echo "[venv] creating ${VENV#"$PWD"/} with $("$PY" --version 2>&1)"
  "$PY" -m venv "$VENV" \
    || { echo "scripts: '$PY -m venv' failed; on Debian or Ubuntu: apt-get install python3-venv" >&2; rm -rf "$VENV"; exit 1; }
fi
export VIRTUAL_ENV=$VENV PATH="$VENV/bin:$PATH"
hash -r
_stamp=$VENV/.specdec-installed
_key=$(cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)-$(python -c 'import sys; print(sys.version.split()[0])')
if [ "$(cat "$_stamp" 2>/dev/null)" != "$_key" ]; then
  echo "[venv] installing requirements.lock (hash-checked) and the package into ${VENV#"$PWD"/}"
  _pip=(python -m pip install --quiet --disable-pip-version-check)
  "${_pip[@]}" --require-hashes -r requirements.lock
  "${_pip[@]}" --no-deps --no-build-isolation -e .
  echo "$_key" > "$_stamp"
fi
unset _stamp _key _pip
