# Sourced by scripts/test: the system tools that building the pinned llama-server needs (cmake,
# make, a C++ compiler; the compiler brings the OpenMP runtime, libgomp, that the binary loads).
#
# When one is missing: as root on a machine with apt-get (a container, a CI runner) they are
# installed (Debian's cmake, make, g++; nothing else, no recommends); otherwise the script stops
# with one line naming the packages to install. SPECDEC_NO_APT=1 (or true, yes, on; any case):
# never install, only say so; 0, false, no, off or unset/empty: install as above; any other
# value stops with one line.
case ${SPECDEC_NO_APT:-} in
  1 | [Tt][Rr][Uu][Ee] | [Yy][Ee][Ss] | [Oo][Nn]) _no_apt=1 ;;
  "" | 0 | [Ff][Aa][Ll][Ss][Ee] | [Nn][Oo] | [Oo][Ff][Ff]) _no_apt= ;;
  *) echo "scripts/test: SPECDEC_NO_APT=$(printf '%q' "$SPECDEC_NO_APT") is not understood: set it to" \
       "1, true, yes or on (never install with apt-get) or 0, false, no, off or empty (install" \
       "when root)" >&2
     exit 1 ;;
esac
_missing=()
command -v cmake >/dev/null || _missing+=(cmake)
command -v make >/dev/null || _missing+=(make)
{ command -v c++ >/dev/null || command -v g++ >/dev/null; } || _missing+=(g++)
if [ ${#_missing[@]} -gt 0 ]; then
  if [ -n "$_no_apt" ]; then
    echo "scripts/test: SPECDEC_NO_APT=$SPECDEC_NO_APT: not installing ${_missing[*]} with apt-get;" \
      "building llama-server needs them, not found on PATH: install them" \
      "(Debian/Ubuntu: sudo apt-get install ${_missing[*]}) and retry" >&2
    exit 1
  elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "[sysdeps] installing ${_missing[*]} (apt-get, to build llama-server)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${_missing[@]}" >/dev/null; } \
      || { echo "scripts/test: apt-get install ${_missing[*]} failed" >&2; exit 1; }
  else
    echo "scripts/test: building llama-server needs ${_missing[*]}, not found on PATH:" \
      "install them (Debian/Ubuntu: sudo apt-get install ${_missing[*]}) and retry" >&2
    exit 1
  fi
fi
unset _missing _no_apt
