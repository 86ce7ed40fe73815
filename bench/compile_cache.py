#!/usr/bin/python3
"""Times `strata compile` cold and warm (from the compile cache) on models/.

For every model (models/<name>/model.onnx, compiled for the shapes of test_data_set_0's inputs)
this times, as whole processes the way a user or a build system runs them:

- cold: `strata compile` into a fresh, empty cache directory (every stage runs, and the entry is
  written);
- warm: the same command again once the entry exists (a cache hit);

each --runs times, and prints the median and minimum of each in a table. Before timing, it checks
that a warm compile reports a hit (`--explain-cache`) and writes the same bytes as a cold one.
The goal (docs/benchmarks.md) is a warm compile of transformer_encoder under 0.5 s; the exit
status is 1 when it is missed or a check fails.

    /usr/bin/python3 bench/compile_cache.py [--runs 5] [--only transformer_encoder] [--strata PATH]
    /usr/bin/python3 bench/compile_cache.py --record     # also add the section to bench/RESULTS.md
"""

import argparse
import datetime
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import onnx

# The machine and revision lines of a results section, as compare.py writes them.
from compare import cpu_model, git_revision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL_MODEL, GOAL_SECONDS = "transformer_encoder", 0.5
# Each run is a section of its own at the end of RESULTS.md, newest first, starting with this
# marker (compare.py keeps sections with other "<!-- ... run -->" markers after its own runs).
RUN_MARK = "<!-- compile_cache.py run -->"


def fail(message):
    sys.exit(f"compile_cache.py: {message}")


def find_strata(path):
    if path:
        return path
    built = os.path.join(ROOT, "build", "bin", "strata")
    if os.path.exists(built):
        return built
    found = shutil.which("strata")
    if not found:
        fail("no strata binary: build it (build/bin/strata) or pass --strata PATH")
    return found


def input_shapes(model_dir):
    """--input-shape arguments for test_data_set_0's inputs, by the model's input names."""
    model = onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    args = []
    for k, name in enumerate(names):
        tensor = onnx.TensorProto()
        with open(os.path.join(model_dir, "test_data_set_0", f"input_{k}.pb"), "rb") as f:
            tensor.ParseFromString(f.read())
        args.append(f"--input-shape={name}=" + ",".join(str(d) for d in tensor.dims))
    return args


def compile_once(strata, model, shapes, out, cache_dir, extra=()):
    """Runs one `strata compile`; returns (seconds, stderr)."""
    env = dict(os.environ, STRATA_CACHE_DIR=cache_dir)
    cmd = [strata, "compile", model, "-o", out] + shapes + list(extra)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        fail(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return seconds, proc.stderr


def read(path):
    with open(path, "rb") as f:
        return f.read()


def measure(strata, name, runs, work):
    model_dir = os.path.join(ROOT, "models", name)
    model = os.path.join(model_dir, "model.onnx")
    shapes = input_shapes(model_dir)
    out = os.path.join(work, name + ".strata")

    cold = []
    for i in range(runs):
        cache = os.path.join(work, f"{name}-cold-{i}")
        seconds, _ = compile_once(strata, model, shapes, out, cache)
        cold.append(seconds)
    cold_bytes = read(out)

    # The last cold run's directory holds the entry; every warm run hits it.
    cache = os.path.join(work, f"{name}-cold-{runs - 1}")
    _, log = compile_once(strata, model, shapes, out, cache, ["--explain-cache"])
    if "strata: cache hit" not in log:
        fail(f"{name}: a warm compile did not hit the cache:\n{log}")
    if read(out) != cold_bytes:
        fail(f"{name}: the cached module differs from the compiled one")
    warm = [compile_once(strata, model, shapes, out, cache)[0] for _ in range(runs)]
    return {"model": name, "cold": cold, "warm": warm, "bytes": len(cold_bytes),
            "model_bytes": os.path.getsize(model)}


def section(results, strata, runs):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        RUN_MARK,
        f"## Compile cache, {now}: cold and warm `strata compile`",
        "",
        "Written by `bench/compile_cache.py` (docs/benchmarks.md): wall-clock time of the whole "
        "process; cold: an empty cache directory, warm: a cache hit.",
        "",
        f"- CPU: {cpu_model()} ({len(os.sched_getaffinity(0))} logical CPUs available; "
        f"load average {load} at the start)",
        f"- strata: `{os.path.relpath(strata, ROOT) if strata.startswith(ROOT) else strata}` "
        f"(git {git_revision()}); median and min of {runs} runs each; shapes of test_data_set_0",
        "",
        "| model | model.onnx | module | cold median s | cold min s | warm median s | warm min s "
        "| cold / warm |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        cm, wm = statistics.median(r["cold"]), statistics.median(r["warm"])
        lines.append(f"| {r['model']} | {r['model_bytes'] / 1024:.0f} KiB | "
                     f"{r['bytes'] / 1024:.0f} KiB | {cm:.3f} | {min(r['cold']):.3f} | "
                     f"{wm:.3f} | {min(r['warm']):.3f} | {cm / wm:.0f}x |")
    goal = [r for r in results if r["model"] == GOAL_MODEL]
    if goal:
        wm = statistics.median(goal[0]["warm"])
        verdict = "met" if wm < GOAL_SECONDS else "MISSED"
        lines += ["", f"Goal, a warm compile of {GOAL_MODEL} under {GOAL_SECONDS} s: {verdict} "
                  f"({wm:.3f} s)."]
    return "\n".join(lines) + "\n"


def record(path, text):
    """Inserts `text` before this script's newest run, or at the end of the file."""
    with open(path) as f:
        content = f.read()
    at = content.find(RUN_MARK)
    if at < 0:
        content = content.rstrip() + "\n\n" + text
    else:
        content = content[:at] + text + "\n" + content[at:]
    with open(path, "w") as f:
        f.write(content)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strata", help="the strata binary (default: build/bin/strata, then PATH)")
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (default 5)")
    parser.add_argument("--only", nargs="+", help="these models (default: all of models/)")
    parser.add_argument("--record", action="store_true",
                        help="add the table to bench/RESULTS.md")
    parser.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"))
    args = parser.parse_args()
    if args.runs < 1:
        fail("--runs must be at least 1")
    strata = os.path.abspath(find_strata(args.strata))
    names = sorted(os.path.basename(os.path.dirname(p))
                   for p in glob.glob(os.path.join(ROOT, "models", "*", "model.onnx")))
    if args.only:
        unknown = set(args.only) - set(names)
        if unknown:
            fail(f"no such model: {', '.join(sorted(unknown))} (models: {', '.join(names)})")
        names = [n for n in names if n in args.only]

    work = tempfile.mkdtemp(prefix="strata-compile-cache-")
    try:
        results = []
        for name in names:
            print(f"compile_cache.py: {name} ...", file=sys.stderr, flush=True)
            results.append(measure(strata, name, args.runs, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    text = section(results, strata, args.runs)
    print(text)
    if args.record:
        record(args.results, text)
        print(f"compile_cache.py: recorded in {args.results}", file=sys.stderr)
    goal = [r for r in results if r["model"] == GOAL_MODEL]
    if goal and statistics.median(goal[0]["warm"]) >= GOAL_SECONDS:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
