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
  libkissfft-dev             # KissFFT: the CPU plugin's complex64 and f32 fft
  libeigen3-dev              # Eigen's FFT module: the CPU plugin's complex128 and f64 fft
  liblapack-dev              # LAPACK: the CPU plugin's cholesky (potrf)
  libvulkan-dev              # Vulkan headers and loader, for the Vulkan plugin
  mesa-vulkan-drivers        # lavapipe: a Vulkan device on the CPU, for its tests
  vulkan-validationlayers    # the Khronos validation layer the Vulkan tests run under
  spirv-tools                # SPIRV-Tools: validates every generated kernel
  libshaderc-dev glslang-dev # shaderc and glslang: compile the Vulkan kernels' GLSL to SPIR-V
  # The ROCm plugin's offline kernel compile (ROCm 5.2 in Debian 12): clang++-15
  # and its ld.lld, the AMD GPU device libraries, HIP's headers (and with them
  # libamdhip64-5, the runtime its test loads); llvm-15's llvm-dis/llvm-as
  # make the build's gfx1100 device-library stand-in. hipcc is not needed.
  clang-15 lld-15 llvm-15 rocm-device-libs libamdhip64-dev
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
