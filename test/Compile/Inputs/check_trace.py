#!/usr/bin/env python3
"""Checks a `strata bench --trace` file against the Chrome trace-event format.

  check_trace.py TRACE RUNS STEPS

The JSON object format: {"traceEvents": [...], "displayTimeUnit": "ms"};
metadata ("M") events name the process and threads; complete ("X") events
carry ts and dur in microseconds. Beyond the format: RUNS run events, each
holding STEPS step events in step order, one after the other without
overlap, every step named and with its ONNX nodes.
"""

import json
import sys


def fail(message):
    sys.exit(f"check_trace: {message}")


def main():
    path, runs, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path) as f:
        trace = json.load(f)
    if not isinstance(trace, dict) or not isinstance(
            trace.get("traceEvents"), list):
        fail("not a JSON object with a traceEvents list")
    if trace.get("displayTimeUnit") not in (None, "ms", "ns"):
        fail("displayTimeUnit must be ms or ns")
    run_events, step_events, names = [], [], {}
    for e in trace["traceEvents"]:
        if not isinstance(e.get("name"), str) or e.get("ph") not in ("X", "M"):
            fail(f"bad event {e}")
        if not isinstance(e.get("pid"), int):
            fail(f"event without an integer pid: {e}")
        if e["ph"] == "M":
            if e["name"] not in ("process_name", "thread_name") or \
                    not isinstance(e.get("args", {}).get("name"), str):
                fail(f"bad metadata event {e}")
            if e["name"] == "thread_name":
                names[e["tid"]] = e["args"]["name"]
            continue
        for key in ("ts", "dur"):
            if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                fail(f"complete event without a valid {key}: {e}")
        if not isinstance(e.get("tid"), int):
            fail(f"complete event without an integer tid: {e}")
        (run_events if e.get("cat") == "run" else step_events).append(e)
    if len(run_events) != runs:
        fail(f"{len(run_events)} run events, expected {runs}")
    for e in step_events:
        if e["tid"] not in names:
            fail(f"step on an unnamed thread: {e}")
        if e.get("cat") not in ("codegen", "library") or \
                not e["args"]["nodes"]:
            fail(f"step without its kind or nodes: {e}")
    eps = 1e-3  # microseconds of rounding
    for r in run_events:
        inside = [e for e in step_events
                  if r["ts"] - eps <= e["ts"] and
                  e["ts"] + e["dur"] <= r["ts"] + r["dur"] + eps]
        if len(inside) != steps:
            fail(f"{r['name']} holds {len(inside)} steps, expected {steps}")
        inside.sort(key=lambda e: e["ts"])
        if [e["args"]["step"] for e in inside] != list(range(steps)):
            fail(f"{r['name']}: steps out of order")
        for a, b in zip(inside, inside[1:]):
            if a["ts"] + a["dur"] > b["ts"] + eps:
                fail(f"{r['name']}: {a['name']} overlaps {b['name']}")
    if len(step_events) != runs * steps:
        fail(f"{len(step_events)} step events, expected {runs * steps}")
    print(f"check_trace: {runs} runs of {steps} steps")


if __name__ == "__main__":
    main()
