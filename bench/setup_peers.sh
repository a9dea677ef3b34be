#!/usr/bin/env bash
# The benchmark's optional peers (bench/compare.py): Debian's PyTorch and
# torchvision for eager PyTorch, and ONNX Runtime's CPU package from PyPI in
# build/bench-venv (which sees the system's torch, used to export the ONNX
# models). Not part of the build or the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  python3-torch python3-torchvision python3-venv libopenblas0-pthread
/usr/bin/python3 -m venv --system-site-packages build/bench-venv
build/bench-venv/bin/pip install --quiet onnxruntime==1.32.0
