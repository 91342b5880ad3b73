#!/usr/bin/env bash
# Installs what sapo needs and is missing on a Debian 12 machine; safe to run again.
# Debian packages only (pinned by the Debian 12 release), plus a venv under build/ for
# Python-only references (requirements.txt, pinned versions).
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential cmake pkg-config          # compilers and the build
  openmpi-bin libopenmpi-dev                # MPI: one rank per swarm node
  libhdf5-openmpi-dev hdf5-tools            # HDF5 (Debian's parallel build) for round logs
  libinih-dev                               # INI config files
  libcjson-dev                              # JSON lines for the task tools
  libpcre2-dev libutf8proc-dev              # BPE tokenizer: Unicode pre-tokenizer regexes, NFC
  libopenblas-dev                           # sgemm for the CPU model
  python3-torch python3-numpy python3-h5py python3-matplotlib python3-pytest python3-scipy python3-venv
  slurm-wlm munge                           # the Slurm sweep test starts its own daemons
  iproute2                                  # ip netns: the two emulated hosts of mpi/test_two_hosts
)

missing=()
for p in "${PKGS[@]}"; do
  grep -q "install ok installed" <<<"$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages present"
fi

# Python-only references that Debian lacks, in a venv on top of Debian's python3 packages.
VENV=build/venv
if [ -f requirements.txt ]; then
  stamp="$VENV/.requirements.sha"
  want=$(sha256sum requirements.txt | cut -d' ' -f1)
  if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "install-deps: creating $VENV from requirements.txt"
    /usr/bin/python3 -m venv --system-site-packages "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.txt
    echo "$want" > "$stamp"
  fi
fi
