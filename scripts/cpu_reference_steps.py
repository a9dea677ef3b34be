"""Counts the reference-evaluator steps left in the CPU plugin's plans of a
corpus: runs `anvil conformance --plugin cpu` on every program file under
the folders given (one run a file, two at once), with
ANVIL_CPU_REFERENCE_REPORT set, then prints the steps by opcode and element
type, most first, with a few of the files each comes from.

    python3 scripts/cpu_reference_steps.py [--build build] [--plan-only] DIR...

Plans are the same with the report on; only what the plugin plans is
counted (a program the runner skips is not planned).
"""
import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile

EXTENSIONS = (".hlo", ".hlo.txt", ".mlir", ".mlir.bc", ".mlirbc")


def program_files(dirs):
    for d in dirs:
        if os.path.isfile(d):
            yield d
            continue
        for root, _, names in os.walk(d):
            for name in sorted(names):
                if name.endswith(EXTENSIONS):
                    yield os.path.join(root, name)


def steps_of(tool, path, plan_only):
    """The report's rows for one program file."""
    with tempfile.NamedTemporaryFile(suffix=".tsv") as report, tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, ANVIL_CPU_REFERENCE_REPORT=report.name)
        # Planning is all the report needs; conformance also reads every
        # module of a split file and the test functions of a StableHLO one.
        command = ([tool, "bench", path, "--plugin", "cpu", "--compile-only", "--cache-dir", cache] if plan_only
                   else [tool, "conformance", "--plugin", "cpu", path])
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(report.name) as f:
            return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--examples", type=int, default=3, help="files named per row")
    parser.add_argument("--plan-only", action="store_true",
                        help="compile each file (anvil bench --compile-only) instead of running it through the "
                             "conformance runner: faster for big models, first module of a file only")
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    tool = os.path.join(args.build, "tools", "anvil")
    files = list(program_files(args.dirs))
    rows = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for path, steps in zip(files, pool.map(lambda p: steps_of(tool, p, args.plan_only), files)):
            rows += [(opcode, shape, name, os.path.basename(path)) for opcode, shape, name, _module in steps]
    by_kind = collections.defaultdict(list)
    for opcode, shape, _name, module in rows:
        element = shape.lstrip("(").split("[")[0]
        by_kind[(opcode, element)].append(module)
    print(f"{len(rows)} reference steps in {len({r[3] for r in rows})} of {len(files)} files")
    for (opcode, element), modules in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
        names = sorted(set(modules))
        shown = ", ".join(names[: args.examples]) + (", ..." if len(names) > args.examples else "")
        print(f"{len(modules):6d}  {opcode:24s} {element:8s} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
