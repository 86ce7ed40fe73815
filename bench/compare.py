#!/usr/bin/python3
"""Compares strata's CPU target against ONNX Runtime on the models in models/.

For every model (a directory holding model.onnx, in the ONNX backend-test layout) this

1. checks ONNX Runtime's outputs against the references in test_data_set_*/output_*.pb
   (rtol 1e-3, atol 1e-5), so a broken export or reference is caught before anything is timed;
2. times ONNX Runtime (bench/ort/bench.js) and strata (`strata bench ... --json`) at each thread
   count, alternating the two engines over several rounds so that drift on a shared machine hits
   both alike;
3. records the medians and the ratio ORT / strata (> 1: strata is faster) in bench/RESULTS.md,
   newest run first.

Both engines are fed test_data_set_0's inputs and print one JSON line
{"median_ms", "min_ms", "runs", "threads", ...}. When strata
cannot run a model (not built, no `bench` command yet, a compile error), its column reads
"not available" with the reason in the notes, and the ONNX Runtime numbers are still recorded.

    /usr/bin/python3 bench/compare.py [--threads 1 2] [--only resnet_small ...] [--strata PATH]
"""

import argparse
import datetime
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_DIR = os.path.join(ROOT, "bench", "ort")
RTOL, ATOL = 1e-3, 1e-5
RUN_MARK = "<!-- compare.py run -->"
HEADER = """# Benchmark results: strata vs ONNX Runtime (CPU)

Written by `bench/compare.py` (see `docs/benchmarks.md` for the method), newest run first.
Ratio = ONNX Runtime median / strata median: above 1 means strata is faster.
"""


def fail(message):
    sys.exit(f"compare.py: {message}")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def available_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def git_revision():
    try:
        out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        if out.returncode == 0:
            dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            return out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "unknown"


def first_line(text, limit=160):
    """The line of a failing command's output that says why: the first naming an error, else
    the last (progress messages come before the failure)."""
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    errors = [l for l in lines if "error" in l.lower()]
    line = errors[0] if errors else (lines[-1] if lines else "no output")
    return line if len(line) <= limit else line[:limit - 3] + "..."


def parse_record(stdout, threads):
    """Returns the benchmark record in stdout (its last JSON line), or raises ValueError."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            record = json.loads(line)
            break
    else:
        raise ValueError(f"no JSON record in the output: {first_line(stdout)!r}")
    for key in ("median_ms", "min_ms", "runs", "threads"):
        if not isinstance(record.get(key), (int, float)) or isinstance(record.get(key), bool):
            raise ValueError(f"JSON record lacks a number '{key}': {line}")
    if record["threads"] != threads:
        raise ValueError(f"asked for {threads} threads, record says {record['threads']}")
    return record


def run_engine(cmd, threads, timeout):
    """Runs one benchmark command; returns (record, None) or (None, reason)."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return None, f"{cmd[0]}: not found"
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if out.returncode < 0:
        try:
            name = signal.Signals(-out.returncode).name
        except ValueError:
            name = f"signal {-out.returncode}"
        return None, f"crashed ({name})"
    if out.returncode != 0:
        return None, f"exit {out.returncode}: {first_line(out.stderr or out.stdout)}"
    try:
        return parse_record(out.stdout, threads), None
    except ValueError as e:
        return None, str(e)


def ort_command(model, threads, warmup, runs, data_dir, write_outputs=None):
    cmd = ["node", os.path.join(ORT_DIR, "bench.js"), model, "--threads", str(threads),
           "--warmup", str(warmup), "--runs", str(runs)]
    if data_dir:
        cmd += ["--data", data_dir]
    if write_outputs:
        cmd += ["--write-outputs", write_outputs]
    return cmd


def load_tensor(path):
    proto = onnx.TensorProto()
    with open(path, "rb") as f:
        proto.ParseFromString(f.read())
    return numpy_helper.to_array(proto)


def check_against_references(model_dir, timeout):
    """Runs ORT on every data set; returns rows (data set, output, max abs err, worst/tol, ok)."""
    model = os.path.join(model_dir, "model.onnx")
    rows = []
    for ds in sorted(glob.glob(os.path.join(model_dir, "test_data_set_*")),
                     key=lambda p: int(p.rsplit("_", 1)[1])):
        with tempfile.TemporaryDirectory() as tmp:
            record, reason = run_engine(ort_command(model, 1, 0, 1, ds, tmp), 1, timeout)
            if record is None:
                rows.append((os.path.basename(ds), "-", None, None, f"ORT failed: {reason}"))
                continue
            for ref_path in sorted(glob.glob(os.path.join(ds, "output_*.pb"))):
                name = os.path.basename(ref_path)
                got_path = os.path.join(tmp, name)
                if not os.path.exists(got_path):
                    rows.append((os.path.basename(ds), name, None, None, "ORT wrote no such output"))
                    continue
                ref, got = load_tensor(ref_path), load_tensor(got_path)
                if ref.shape != got.shape or ref.dtype != got.dtype:
                    rows.append((os.path.basename(ds), name, None, None,
                                 f"got {got.dtype}{list(got.shape)}, "
                                 f"reference {ref.dtype}{list(ref.shape)}"))
                    continue
                ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
                err = np.abs(got64 - ref64)
                # Fraction of the allowed error used by the worst element: <= 1 passes, the same
                # criterion as np.allclose(got, ref, rtol, atol).
                worst = float(np.max(err / (ATOL + RTOL * np.abs(ref64)))) if err.size else 0.0
                rows.append((os.path.basename(ds), name, float(np.max(err)) if err.size else 0.0,
                             worst, "ok" if worst <= 1.0 else "MISMATCH"))
    return rows


def ort_call_floor(timeout):
    """Median time of ORT on a one-node Identity model: the binding's fixed cost per run
    (argument conversion, the Promise, output tensor objects), which strata's C++ loop does
    not pay. It matters only for models that run in tens of microseconds."""
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "identity",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "identity.onnx")
        onnx.save(model, path)
        record, _ = run_engine(ort_command(path, 1, 100, 2000, None), 1, timeout)
    return record["median_ms"] if record else None


def find_strata(explicit):
    if explicit:
        return explicit
    for candidate in (os.path.join(ROOT, "build", "bin", "strata"),):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("strata") or "strata"


def fmt_ms(x):
    return "-" if x is None else (f"{x:.3f}" if x < 100 else f"{x:.1f}")


def render_run(meta, timing_rows, check_rows, notes):
    out = [RUN_MARK, f"## {meta['date']}: {meta['title']}", ""]
    out.append(f"- CPU: {meta['cpu']} ({meta['cpus']} logical CPUs available; load average "
               f"{meta['load']} at the start)")
    strata = f"`{meta['strata']}`" if meta["strata"] else "not run"
    out.append(f"- strata: {strata} (git {meta['git']}); ONNX Runtime: {meta['ort']}")
    out.append(f"- per measurement: {meta['warmup']} warm-up runs, median of {meta['runs']} timed "
               f"runs; {meta['rounds']} alternating rounds, median of the round medians and min "
               f"of the round minimums")
    if meta["floor"] is not None:
        out.append(f"- ONNX Runtime's fixed cost per run through the Node binding (one Identity "
                   f"node, 1 thread): {meta['floor'] * 1000:.1f} us median, included in its "
                   f"numbers")
    out.append("")
    out.append("| model | threads | ORT median ms | ORT min ms | strata median ms | strata min ms "
               "| ORT / strata |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in timing_rows:
        if r["strata"] is None:
            s_med, s_min, ratio = "not available", "-", "-"
        else:
            s_med, s_min = fmt_ms(r["strata"]["median_ms"]), fmt_ms(r["strata"]["min_ms"])
            ratio = "-"
            if r["ort"] is not None and r["strata"]["median_ms"] > 0:
                ratio = f"{r['ort']['median_ms'] / r['strata']['median_ms']:.2f}"
        o_med = fmt_ms(r["ort"]["median_ms"]) if r["ort"] else "failed"
        o_min = fmt_ms(r["ort"]["min_ms"]) if r["ort"] else "-"
        out.append(f"| {r['model']} | {r['threads']} | {o_med} | {o_min} | {s_med} | {s_min} "
                   f"| {ratio} |")
    if check_rows:
        out += ["", f"ONNX Runtime vs the float64 references (rtol {RTOL:g}, atol {ATOL:g}; "
                "'tolerance used' is max |err| / (atol + rtol |ref|), at most 1 to pass):", "",
                "| model | data set | output | max abs err | tolerance used | result |",
                "| --- | --- | --- | ---: | ---: | --- |"]
        for model, ds, name, err, worst, verdict in check_rows:
            e = "-" if err is None else f"{err:.2e}"
            w = "-" if worst is None else f"{worst:.2g}"
            out.append(f"| {model} | {ds} | {name} | {e} | {w} | {verdict} |")
    if notes:
        out += ["", "Notes:", ""] + [f"- {n}" for n in notes]
    out.append("")
    return "\n".join(out)


def update_results(path, section, keep):
    """Puts `section` first among this script's runs. Sections other tools
    append (they start with their own "<!-- bench/... run -->" marker) stay,
    after this script's runs, whatever --keep says."""
    runs, others = [], ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
        foreign = re.search(r"<!-- (?!compare\.py run -->)[^>]* run -->", text)
        if foreign:
            text, others = text[:foreign.start()], text[foreign.start():]
        parts = text.split(RUN_MARK)
        runs = [RUN_MARK + p.rstrip() + "\n" for p in parts[1:]]
    runs.insert(0, section.rstrip() + "\n")
    if keep > 0:
        runs = runs[:keep]
    with open(path, "w") as f:
        f.write(HEADER + "\n" + "\n".join(runs))
        if others:
            f.write("\n" + others.rstrip() + "\n")


def combine(records):
    """Median of the per-round medians, min of the per-round minimums."""
    if not records:
        return None
    return {"median_ms": statistics.median(r["median_ms"] for r in records),
            "min_ms": min(r["min_ms"] for r in records)}


def main():
    parser = argparse.ArgumentParser(
        description="Time strata against ONNX Runtime on models/ and update bench/RESULTS.md.")
    parser.add_argument("--models", default=os.path.join(ROOT, "models"),
                        help="directory of <name>/model.onnx (default: models/)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these models")
    parser.add_argument("--threads", nargs="+", type=int,
                        help="thread counts (default: 1 and the number of available CPUs)")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up runs (default 20)")
    parser.add_argument("--runs", type=int, default=200, help="timed runs (default 200)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating ORT/strata rounds per measurement (default 3)")
    parser.add_argument("--strata", help="strata binary (default: build/bin/strata, then PATH)")
    parser.add_argument("--ort-only", action="store_true",
                        help="time ONNX Runtime alone (a baseline); strata is not run")
    parser.add_argument("--strata-random-inputs", action="store_true",
                        help="let `strata bench` draw its own inputs instead of passing it "
                             "test_data_set_0's input_<K>.pb files")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per command")
    parser.add_argument("--results", default=os.path.join(ROOT, "bench", "RESULTS.md"))
    parser.add_argument("--title", help="heading for this run (default: the engines that ran)")
    parser.add_argument("--keep", type=int, default=0,
                        help="keep only the newest N runs in the results file (default: all)")
    parser.add_argument("--no-check", action="store_true",
                        help="skip the ORT-vs-reference check")
    parser.add_argument("--check-only", action="store_true",
                        help="only check ORT against the references; time nothing, write nothing")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the results section instead of writing the results file")
    args = parser.parse_args()

    if args.warmup < 0 or args.runs < 1 or args.rounds < 1:
        fail("--warmup must be >= 0, --runs and --rounds >= 1")
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        fail(f"onnxruntime-node is not installed: run `npm install --ignore-scripts` in {ORT_DIR}")
    if shutil.which("node") is None:
        fail("node is not on PATH")

    models = sorted(d for d in os.listdir(args.models)
                    if os.path.isfile(os.path.join(args.models, d, "model.onnx")))
    if args.only:
        unknown = sorted(set(args.only) - set(models))
        if unknown:
            fail(f"no model.onnx for {', '.join(unknown)} under {args.models}")
        models = [m for m in models if m in args.only]
    if not models:
        fail(f"no <name>/model.onnx under {args.models}")

    threads = args.threads or sorted({1, available_cpus()})
    if any(t < 1 for t in threads):
        fail("thread counts must be >= 1")
    strata = find_strata(args.strata)

    check_rows, notes = [], []
    if not args.no_check:
        for m in models:
            for ds, name, err, worst, verdict in check_against_references(
                    os.path.join(args.models, m), args.timeout):
                check_rows.append((m, ds, name, err, worst, verdict))
                e = "-" if err is None else f"{err:.2e}"
                print(f"check {m} {ds} {name}: max abs err {e}, {verdict}", flush=True)
    if args.check_only:
        return 1 if any(r[5] != "ok" for r in check_rows) else 0

    # Other work on the machine skews both engines; the results record how busy it was.
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    timing_rows = []
    for m in models:
        model = os.path.join(args.models, m, "model.onnx")
        data = os.path.join(args.models, m, "test_data_set_0")
        data = data if os.path.isdir(data) else None
        for t in threads:
            ort_records, strata_records, ort_err, strata_err = [], [], None, None
            for rnd in range(args.rounds):
                # Alternate which engine goes first, so neither always runs on a warmer machine.
                order = ("ort", "strata") if rnd % 2 == 0 else ("strata", "ort")
                for engine in order:
                    if engine == "ort" and ort_err is None:
                        rec, ort_err = run_engine(
                            ort_command(model, t, args.warmup, args.runs, data), t, args.timeout)
                        if rec:
                            ort_records.append(rec)
                    if engine == "strata" and args.ort_only:
                        strata_err = "not run (--ort-only)"
                    if engine == "strata" and strata_err is None:
                        cmd = [strata, "bench", model, "--threads", str(t), "--warmup",
                               str(args.warmup), "--runs", str(args.runs), "--json"]
                        if data and not args.strata_random_inputs:
                            # Positional input files, in the model's input order.
                            cmd += sorted(glob.glob(os.path.join(data, "input_*.pb")),
                                          key=lambda p: int(p.rsplit("_", 1)[1][:-3]))
                        rec, strata_err = run_engine(cmd, t, args.timeout)
                        if rec:
                            strata_records.append(rec)
            row = {"model": m, "threads": t,
                   "ort": combine(ort_records) if ort_err is None else None,
                   "strata": combine(strata_records) if strata_err is None else None}
            if ort_err:
                notes.append(f"ONNX Runtime failed on {m} at {t} threads: {ort_err}")
            if strata_err:
                notes.append(f"strata not available for {m} at {t} threads: {strata_err}")
            timing_rows.append(row)
            print(f"{m} threads={t}: ORT {fmt_ms(row['ort'] and row['ort']['median_ms'])} ms, "
                  f"strata {fmt_ms(row['strata'] and row['strata']['median_ms'])} ms"
                  + (f" ({strata_err})" if strata_err else ""), flush=True)

    # One note per distinct strata failure reason is enough when every model failed alike.
    strata_notes = [n for n in notes if n.startswith("strata not available")]
    reasons = {re.sub(r"^strata not available for \S+ at \d+ threads: ", "", n)
               for n in strata_notes}
    if strata_notes and len(reasons) == 1 and all(r["strata"] is None for r in timing_rows):
        notes = [n for n in notes if n not in strata_notes]
        notes.append(f"strata not available for any model: {reasons.pop()}")

    strata_ran = any(r["strata"] is not None for r in timing_rows)
    ort_version = "onnxruntime-node"
    for path in (os.path.join(ORT_DIR, "node_modules", "onnxruntime-node", "package.json"),):
        try:
            with open(path) as f:
                ort_version += " " + json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            pass
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "title": args.title or ("strata vs ONNX Runtime" if strata_ran
                                else "ONNX Runtime only" + ("" if args.ort_only
                                                            else " (strata not available)")),
        "cpu": cpu_model(), "cpus": available_cpus(), "git": git_revision(),
        "strata": None if args.ort_only else (
            os.path.relpath(strata, ROOT) if strata.startswith(ROOT + os.sep) else strata),
        "ort": ort_version, "load": load,
        "floor": ort_call_floor(args.timeout),
        "warmup": args.warmup, "runs": args.runs, "rounds": args.rounds,
    }
    section = render_run(meta, timing_rows, check_rows, notes)
    if args.dry_run:
        print(section)
    else:
        update_results(args.results, section, args.keep)
        print(f"wrote {os.path.relpath(args.results)}")
    return 1 if any(r[5] != "ok" for r in check_rows) else 0


if __name__ == "__main__":
    sys.exit(main())
