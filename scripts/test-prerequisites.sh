#!/usr/bin/env bash
# The first step of `npm test`: the Debian packages the suites need (scripts/test-packages.txt).
# Missing ones are installed when this may (root and apt-get available); otherwise it stops at
# once, naming them and the one command that installs them.
#
#   MARQUEE_TEST_PACKAGES="pkg [command];pkg2"  check these entries instead of the list file
#   MARQUEE_NO_APT=1                            never install, only check and name what is missing
set -euo pipefail
cd "$(dirname "$0")/.."

entries=()
if [[ -n "${MARQUEE_TEST_PACKAGES:-}" ]]; then
  IFS=';' read -r -a entries <<<"$MARQUEE_TEST_PACKAGES"
else
  while IFS= read -r line; do
    line="${line%%#*}"
    [[ -n "${line//[[:space:]]/}" ]] && entries+=("$line")
  done <scripts/test-packages.txt
fi

# A package is there when dpkg says it is installed, or when its command is on the PATH. Without
# dpkg (not Debian) a package that names no command cannot be checked and is taken as there.
installed() {
  local package=$1 command=${2:-}
  if command -v dpkg-query >/dev/null 2>&1; then
    [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" == "install ok installed" ]] && return 0
  elif [[ -z "$command" ]]; then
    return 0
  fi
  [[ -n "$command" ]] && command -v "$command" >/dev/null 2>&1
}

missing=()
for entry in "${entries[@]}"; do
  read -r package command _ <<<"$entry"
  [[ -z "${package:-}" ]] && continue
  installed "$package" "${command:-}" || missing+=("$package")
done
((${#missing[@]} == 0)) && exit 0

if [[ "${MARQUEE_NO_APT:-}" != "1" && "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
  echo "npm test: installing the Debian packages its suites need: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Waits for another apt run to finish instead of failing on its lock.
  apt-get -o DPkg::Lock::Timeout=300 update -qq >/dev/null
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

{
  echo "npm test needs these Debian packages, which are not installed: ${missing[*]}"
  echo "Install them with:"
  echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
} >&2
exit 1
