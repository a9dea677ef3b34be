"""What the device itself does, for scripts/device_check.sh: device-to-device
copy bandwidth through the CUDA driver (read + write counted, as bench/
compare.py counts memcpy) and cuBLAS's f32 GEMM at 2048^3, both with ctypes
so nothing is built. Prints "COPY_GB_PER_S SGEMM_GFLOP_PER_S" ("-" for what
it cannot measure, with the reason on stderr)."""
import ctypes
import glob
import os
import shutil
import sys
import time


def fail(what, why):
    print(f"device_peers: {what}: {why}", file=sys.stderr)
    return "-"


def check(result, call):
    if result != 0:
        raise RuntimeError(f"{call} returned {result}")


def cuda():
    cu = ctypes.CDLL(os.environ.get("ANVIL_CUDA_DRIVER_LIBRARY") or "libcuda.so.1")
    check(cu.cuInit(0), "cuInit")
    device = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(device), 0), "cuDeviceGet")
    context = ctypes.c_void_p()
    check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(context), device), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    return cu


def alloc(cu, size):
    p = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size)), "cuMemAlloc")
    return p


def copy_bandwidth(cu):
    size = 1 << 30
    src, dst = alloc(cu, size), alloc(cu, size)
    best = float("inf")
    for _ in range(10):
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        start = time.perf_counter()
        check(cu.cuMemcpyDtoD_v2(dst, src, ctypes.c_size_t(size)), "cuMemcpyDtoD")
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        best = min(best, time.perf_counter() - start)
    cu.cuMemFree_v2(src)
    cu.cuMemFree_v2(dst)
    return 2 * size / best / 1e9


def cublas_library():
    names = ["libcublas.so.13", "libcublas.so.12", "libcublas.so"]
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
        for root in filter(None, roots):
            for path in glob.glob(os.path.join(root, "lib*", name)) + glob.glob(os.path.join(root, "targets", "*", "lib", name)):
                try:
                    return ctypes.CDLL(path)
                except OSError:
                    pass
    raise RuntimeError("no libcublas.so.13/.12 on the loader's path or under the CUDA toolkit")


def sgemm_gflops(cu):
    blas = cublas_library()
    n = 2048
    handle = ctypes.c_void_p()
    check(blas.cublasCreate_v2(ctypes.byref(handle)), "cublasCreate")
    a, b, c = (alloc(cu, n * n * 4) for _ in range(3))
    alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)

    def gemm():
        check(blas.cublasSgemm_v2(handle, 0, 0, n, n, n, ctypes.byref(alpha), a, n, b, n, ctypes.byref(beta), c, n),
              "cublasSgemm")

    gemm()
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
    best = float("inf")
    for _ in range(20):
        start = time.perf_counter()
        gemm()
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize")
        best = min(best, time.perf_counter() - start)
    blas.cublasDestroy_v2(handle)
    for p in (a, b, c):
        cu.cuMemFree_v2(p)
    return 2 * n ** 3 / best / 1e9


def main():
    try:
        cu = cuda()
    except (OSError, RuntimeError, AttributeError) as e:
        print(fail("copy", e), fail("sgemm", e))
        return
    try:
        copy = f"{copy_bandwidth(cu):.1f}"
    except (OSError, RuntimeError, AttributeError) as e:
        copy = fail("copy", e)
    try:
        gemm = f"{sgemm_gflops(cu):.1f}"
    except (OSError, RuntimeError, AttributeError) as e:
        gemm = fail("sgemm", e)
    print(copy, gemm)


if __name__ == "__main__":
    main()
