#!/usr/bin/env bash
# Makes the virtual environment the Python tests run in (build/jax-venv, or
# $ANVIL_JAX_VENV): pinned jax and jaxlib, pytest, and the anvil-jax package
# installed editable, so it finds the plugin library of this checkout's
# build without building the C++ project again.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${ANVIL_JAX_VENV:-build/jax-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# Pinned, so every machine tests against the same JAX (PJRT C API 0.112).
"$venv/bin/pip" install -q --disable-pip-version-check \
  jax==0.10.2 jaxlib==0.10.2 numpy==2.4.6 ml_dtypes==0.7.0 scipy==1.17.1 opt_einsum==3.4.0 \
  pytest==9.2.0 setuptools==84.2.1
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --no-deps -e python
echo "setup_python: $venv has jax $("$venv/bin/python" -c 'import jax; print(jax.__version__)') and anvil-jax"
