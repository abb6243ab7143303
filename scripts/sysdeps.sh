# Sourced by scripts/test: the system tools that building the pinned llama-server needs (cmake,
# make, a C++ compiler; the compiler brings the OpenMP runtime, libgomp, that the binary loads).
#
# When one is missing: as root on a machine with apt-get (a container, a CI runner) they are
# installed (Debian's cmake, make, g++; nothing else, no recommends); otherwise the script stops
# with one line naming the packages to install. SPECDEC_NO_APT=1: never install, only say so.
_missing=()
command -v cmake >/dev/null || _missing+=(cmake)
command -v make >/dev/null || _missing+=(make)
{ command -v c++ >/dev/null || command -v g++ >/dev/null; } || _missing+=(g++)
if [ ${#_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null && [ "${SPECDEC_NO_APT:-0}" != 1 ]; then
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
unset _missing
