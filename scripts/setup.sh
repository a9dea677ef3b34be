#!/usr/bin/env bash
# Installs every Debian package the build and the tests need. Idempotent: a
# package already present is skipped, and apt is not touched when nothing is
# missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev   # libFuzzer and the sanitizer runtimes
  libtbb-dev                 # the scheduler's task arenas
  libboost-dev               # Boost.DLL loads the plugins
  libxxhash-dev              # XXH3, the compile cache's key and checksum hashes (header-only use)
  libdnnl-dev                # oneDNN: the CPU plugin's matrix multiply
  libvulkan-dev              # Vulkan headers and loader, for the Vulkan plugin
  mesa-vulkan-drivers        # lavapipe: a Vulkan device on the CPU, for its tests
  vulkan-validationlayers    # the Khronos validation layer the Vulkan tests run under
  spirv-tools                # SPIRV-Tools: validates every generated kernel
  libshaderc-dev glslang-dev # shaderc and glslang: compile the Vulkan kernels' GLSL to SPIR-V
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi
