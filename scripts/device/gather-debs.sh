#!/usr/bin/env bash
# Run HERE (a Debian 12 machine with apt): downloads the Debian packages that the bare GPU
# machine lacks (MPI, HDF5, inih, cJSON, OpenBLAS, PCRE2, utf8proc, pkg-config and their
# libraries; see /work/shared/DEVICE.md) into .deps/ at the repository root, which git
# ignores, and checks that every pkg-config module CMakeLists.txt requires is carried. Name
# .deps in the device run's carry list; scripts/device/run-on-gpu.sh unpacks them there under
# a prefix (scripts/device/rehearse.sh tries it in a bare root here). Safe to run again:
# packages already downloaded are kept.
set -euo pipefail
cd "$(dirname "$0")/../.."

PKGS=(
  # DEVICE.md's list: Open MPI, parallel HDF5 and what their libraries link
  libopenmpi-dev libopenmpi3 openmpi-bin openmpi-common libhdf5-openmpi-dev
  libhdf5-openmpi-103-1 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7
  libpmix2 libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 librdmacm1 libibverbs1
  ibverbs-providers libnl-3-200 libnl-route-3-200 libmunge2 libsz2 libaec0 libcurl4
  libinih-dev libinih1 libcjson-dev libcjson1 libxnvctrl0 libnuma1
  librtmp1 libssh2-1 libldap-2.5-0 libpsl5 libnghttp2-14 libbrotli1 libsasl2-2
  libsasl2-modules-db libdb5.3 libgssapi-krb5-2 libkrb5-3 libk5crypto3
  libkrb5support0 libkeyutils1 libgmp10 libhogweed6 libnettle8 libgnutls30
  libp11-kit0 libtasn1-6 libunistring2 libidn2-0 libffi8
  # missing from DEVICE.md's list: OpenBLAS (the files live in the -pthread packages;
  # libopenblas-dev and libopenblas0 only select them through alternatives) and Fortran
  # runtime it links
  libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev libopenblas0
  libgfortran5 libquadmath0
  # the build needs pkg-config (CMake's pkg_check_modules); the image may lack it
  pkgconf pkgconf-bin libpkgconf3
  # libxnvctrl0 (hwloc) links X11; libcom-err2 and libatomic1 may be missing from a slim image
  libx11-6 libxext6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 libcom-err2 libatomic1
  # the BPE tokenizer (CMakeLists.txt: libpcre2-8, libutf8proc): -dev packages for the
  # headers, .so links and .pc files, runtimes for the libraries (libpcre2-dev depends on
  # all four PCRE2 widths; their .pc files require nothing else)
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libutf8proc-dev libutf8proc2
)

mkdir -p .deps
cd .deps
missing=()
for p in "${PKGS[@]}"; do
  compgen -G "${p}_*.deb" >/dev/null || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gather-debs: downloading ${#missing[@]} packages: ${missing[*]}"
  apt-get download "${missing[@]}"
else
  echo "gather-debs: all ${#PKGS[@]} packages already in .deps/"
fi
# every module CMakeLists.txt asks pkg-config for must have its .pc in a carried package
# (run-on-gpu.sh points PKG_CONFIG_LIBDIR at the prefix only: a system copy there is hidden)
mods=$(sed -n 's/^ *pkg_check_modules([A-Za-z0-9_]* .*REQUIRED.* \([A-Za-z0-9_.+-]*\))$/\1/p' ../CMakeLists.txt)
listing=$(for f in ./*.deb; do dpkg-deb -c "$f"; done)
nopc=()
for m in $mods; do
  grep -qE "/pkgconfig/$m\.pc\$" <<<"$listing" || nopc+=("$m")
done
if [ ${#nopc[@]} -gt 0 ]; then
  echo "gather-debs: no carried package holds the .pc of: ${nopc[*]} (add its -dev package to PKGS)" >&2
  exit 1
fi
echo "gather-debs: every pkg-config module of CMakeLists.txt is carried: $(echo $mods)"
n=$(ls -1 ./*.deb | wc -l)
echo "gather-debs: $n packages, $(du -sh . | cut -f1) in $(pwd)"
grep -qx '/.deps/' ../.gitignore 2>/dev/null || echo '/.deps/' >> ../.gitignore
