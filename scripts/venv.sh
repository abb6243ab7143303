# Sourced by scripts/build and scripts/test: the project's own environment, never the global one.
#
# Creates .venv (or $SPECDEC_VENV) with Debian's or the user's `python3` (3.11+, with its venv
# module; or $SPECDEC_PYTHON) when it is missing, puts it first on PATH, and installs into it, with
# the venv's own interpreter ($VENV/bin/python -m pip, whatever else is on PATH), every package of
# requirements.lock (hash-checked) and the package itself (editable), again only when the lock,
# pyproject.toml or the Python changed (a stamp inside the venv holds their sha256). Two checkouts
# on one machine each have their own, and a laptop's global packages are never touched.
#
# It deletes nothing it did not make: a target that exists and is not a venv (a file, a folder
# without pyvenv.cfg) is refused, left as it is; a venv whose interpreter no longer runs is made
# again in place; when making one fails, or makes no interpreter that runs and is 3.11+, only a
# folder this run created is removed, and it stops with one line before any pip.
VENV=${SPECDEC_VENV:-$PWD/.venv}
PY=${SPECDEC_PYTHON:-python3}
if [ -n "${SPECDEC_VENV:-}" ]; then _name="SPECDEC_VENV=$VENV"; else _name="$VENV (SPECDEC_VENV unset)"; fi
_created=
if [ -e "$VENV" ] || [ -L "$VENV" ]; then
  if [ ! -d "$VENV" ] || [ ! -f "$VENV/pyvenv.cfg" ]; then
    echo "scripts: $_name exists and is not a virtual environment (expected a folder with" \
      "pyvenv.cfg and bin/python, or a path that does not exist yet); left as it is" >&2
    exit 1
  fi
else
  _created=1
fi
if [ -n "$_created" ] || ! "$VENV/bin/python" -c '' >/dev/null 2>&1; then
  command -v "$PY" >/dev/null || { echo "scripts: no $PY on PATH (Python 3.11 or newer is needed; set SPECDEC_PYTHON)" >&2; exit 1; }
  "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || { echo "scripts: $PY is $("$PY" --version 2>&1 | head -1), Python 3.11 or newer is needed (set SPECDEC_PYTHON)" >&2; exit 1; }
  echo "[venv] creating ${VENV#"$PWD"/} with $("$PY" --version 2>&1 | head -1)"
  if ! "$PY" -m venv "$VENV"; then
    echo "scripts: '$PY -m venv' failed for $_name; on Debian or Ubuntu: apt-get install python3-venv" >&2
    if [ -n "$_created" ]; then rm -rf -- "$VENV"; fi
    exit 1
  fi
  if ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
    echo "scripts: '$PY -m venv' made no interpreter that runs and is Python 3.11+ at" \
      "$VENV/bin/python ($_name); set SPECDEC_PYTHON to a Python 3.11+ with its venv module" >&2
    if [ -n "$_created" ]; then rm -rf -- "$VENV"; fi
    exit 1
  fi
fi
export VIRTUAL_ENV=$VENV PATH="$VENV/bin:$PATH"
hash -r
_stamp=$VENV/.specdec-installed
_key=$(cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)-$("$VENV/bin/python" -c 'import sys; print(sys.version.split()[0])')
if [ "$(cat "$_stamp" 2>/dev/null)" != "$_key" ]; then
  echo "[venv] installing requirements.lock (hash-checked) and the package into ${VENV#"$PWD"/}"
  _pip=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check)
  "${_pip[@]}" --require-hashes -r requirements.lock
  "${_pip[@]}" --no-deps --no-build-isolation -e .
  echo "$_key" > "$_stamp"
fi
unset _stamp _key _pip _name _created
