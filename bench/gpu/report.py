#!/usr/bin/env python3
"""Tables of the GPU benchmark's results (the JSON that run.py writes).

    python3 bench/gpu/report.py RESULTS.json            # the text table run.py prints
    python3 bench/gpu/report.py RESULTS.json --markdown # a section for bench/RESULTS.md

Needs only the standard library, so it runs anywhere the JSON is.
"""

import argparse
import json

PEER_LABELS = {
    "eager": "torch eager",
    "compile": "torch.compile",
    "graphs": "torch.compile (CUDA graphs)",
    "autotune": "max-autotune (no cudagraphs)",
    "autotune_graphs": "max-autotune",
    "sdpa": "torch SDPA (default)",
    "sdpa_flash": "torch SDPA (flash)",
    "sdpa_cudnn": "torch SDPA (cuDNN)",
    "jax": "JAX jit",
    "strata": "strata",
}
PEER_ORDER = list(PEER_LABELS)
# Marks each GPU section in bench/RESULTS.md (compare.py marks its CPU runs with its own).
RUN_MARK = "<!-- bench/gpu/run.py run -->"


def rate(w, ms, ceilings):
    """(rate string, fraction of the ceiling or None)."""
    if not ms:
        return "", None
    if w.get("flops"):
        r = w["flops"] / (ms * 1e-3) / 1e12
        c = ceilings.get("matmul_bf16_tflops")
        return f"{r:.0f} TFLOP/s", (r / c if c else None)
    r = w["bytes"] / (ms * 1e-3) / 1e12
    c = ceilings.get("copy_tbps")
    return f"{r:.2f} TB/s", (r / c if c else None)


def fastest_peer(w):
    """(peer, median ms) of the fastest peer whose check passed, or (None, None)."""
    best = (None, None)
    for p, r in w.get("peers", {}).items():
        ms = r.get("time", {}).get("median_ms")
        if ms and r.get("check", {}).get("pass") and (best[1] is None or ms < best[1]):
            best = (p, ms)
    return best


def strata_status(w):
    s = w.get("strata") or {}
    if s.get("time"):
        return None
    if s.get("error"):
        return "error: " + s["error"][:120]
    return s.get("status", "not run")


def _cell(w, r, ceilings, markdown):
    if r is None:
        return ""
    if r.get("skipped"):
        return "skipped (" + r["skipped"] + ")" if not markdown else "skipped"
    if r.get("error"):
        return "error" if markdown else "error: " + r["error"][:60]
    ms = r.get("time", {}).get("median_ms")
    if not ms:
        return r.get("status", "")
    rs, frac = rate(w, ms, ceilings)
    pct = f", {frac * 100:.0f}%" if frac is not None else ""
    bad = "" if r.get("check", {}).get("pass") else " CHECK FAILED"
    return f"{ms:.3f} ({rs}{pct}){bad}"


def text_table(res):
    ceilings = res.get("ceilings", {})
    lines = []
    hdr = f"{'workload':<24} {'engine':<29} {'median ms':>10} {'rate':>13} {'%ceil':>6} " \
          f"{'check':>14} {'peer/strata':>11}"
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for w in res.get("workloads", []):
        peers = dict(w.get("peers", {}))
        st = w.get("strata") or {}
        s_ms = st.get("time", {}).get("median_ms")
        rows = sorted(peers.items(), key=lambda kv: PEER_ORDER.index(kv[0]))
        rows.append(("strata", st))
        for p, r in rows:
            label = PEER_LABELS.get(p, p)
            if p == "strata" and st.get("label"):
                label = st["label"]
            ms = r.get("time", {}).get("median_ms")
            if ms:
                rs, frac = rate(w, ms, ceilings)
                pct = f"{frac * 100:.0f}%" if frac is not None else ""
                c = r.get("check", {})
                chk = ("ok " if c.get("pass") else "FAIL ") + \
                    (f"{c['rel_err']:.1e}" if "rel_err" in c else "")
                ratio = f"{ms / s_ms:.2f}x" if s_ms and p != "strata" else ""
                lines.append(f"{w['name']:<24} {label:<29.29} {ms:>10.3f} {rs:>13} {pct:>6} "
                             f"{chk:>14} {ratio:>11}")
            else:
                why = r.get("skipped") and "skipped: " + r["skipped"] or r.get("error") \
                    or r.get("status") or "not run"
                lines.append(f"{w['name']:<24} {label:<29.29} {why[:80]}")
        copy = w.get("same_size_copy")
        if copy:
            pct = f"{copy['ms'] / s_ms * 100:.0f}%" if s_ms else ""
            lines.append(f"{w['name']:<24} {'copy of as many bytes':<29} {copy['ms']:>10.3f} "
                         f"{copy['tbps']:>9.2f} TB/s {pct:>6}")
    variants = variants_rows(res)
    if variants:
        lines.append("")
        lines.append("module variants (--strata-variants): the median of each variant's rounds' "
                     "medians; first/this > 1: faster than the first variant")
        widths = [max(len(r[i]) for r in variants + [VARIANTS_HEAD]) for i in range(9)]
        for r in [VARIANTS_HEAD] + variants:
            lines.append("  ".join(c.ljust(n) if i < 2 or i == 8 else c.rjust(n)
                                   for i, (c, n) in enumerate(zip(r, widths))).rstrip())
    lines.append("")
    lines.append("rate: fewest bytes (one read per input, one write per output) or nominal FLOPs "
                 "over the median time; %ceil against the ceilings measured in this run: "
                 f"copy {ceilings.get('copy_tbps', 0):.2f} TB/s, bf16 matmul "
                 f"{ceilings.get('matmul_bf16_tflops', 0):.0f} TFLOP/s; a copy of as many "
                 "bytes: torch's copy of the workload's byte count, its %ceil strata's rate "
                 "against that copy's. peer/strata > 1: strata faster.")
    return "\n".join(lines)


def variants_rows(res):
    """One row per module variant of each workload run with --strata-variants: the median of
    its rounds' medians, the lowest p10, its rate against the ceilings, the first variant's
    median over its own (above 1: faster than the first), and its checks."""
    ceilings = res.get("ceilings", {})
    rows = []
    for w in res.get("workloads", []):
        for label, s in w.get("variants_summary", {}).items():
            if "median_ms" not in s:
                rows.append((w["name"], label, str(s.get("timed", 0)), "", "", "", "", "",
                             "; ".join(map(str, s.get("errors", [])))[:80]))
                continue
            rs, frac = rate(w, s["median_ms"], ceilings)
            rows.append((w["name"], label, f"{s['timed']}", f"{s['median_ms']:.4f}",
                         f"{s['p10_ms']:.4f}", rs, f"{frac * 100:.1f}%" if frac is not None
                         else "", f"{s['speedup_vs_first']:.3f}x" if "speedup_vs_first" in s
                         else "",
                         "ok" if s["checks_pass"] else "FAILED"))
    return rows


VARIANTS_HEAD = ("workload", "variant", "rounds", "median ms", "lowest p10", "rate", "%ceil",
                 "first/this", "checks")


def _group_table(res, ws, markdown=True):
    ceilings = res.get("ceilings", {})
    present = [p for p in PEER_ORDER if p != "strata"
               and any(p in w.get("peers", {}) for w in ws)]
    head = ["workload"] + [PEER_LABELS[p] for p in present] + \
        ["fastest peer", "strata", "fastest peer / strata", "copy of as many bytes", "goal"]
    out = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * len(head)) + " |"]
    for w in ws:
        row = [w["title"]]
        for p in present:
            row.append(_cell(w, w["peers"].get(p), ceilings, markdown))
        fp, fms = fastest_peer(w)
        row.append(f"{PEER_LABELS[fp]} {fms:.3f}" if fp else "")
        st = w.get("strata") or {}
        s_ms = st.get("time", {}).get("median_ms")
        row.append(_cell(w, st, ceilings, markdown) if s_ms else strata_status(w))
        row.append(f"{fms / s_ms:.2f}x" if s_ms and fms else "")
        copy = w.get("same_size_copy")
        row.append(f"{copy['ms']:.3f} ({copy['tbps']:.2f} TB/s; strata at "
                   f"{copy['ms'] / s_ms * 100:.0f}% of its rate)" if copy and s_ms else "")
        row.append(w.get("goal", ""))
        out.append("| " + " | ".join(row) + " |")
    return out


def markdown(res):
    env = res.get("env", {})
    c = res.get("ceilings", {})
    when = res.get("date_utc", "?")
    lines = [RUN_MARK, f"## GPU (H200) — peers: {when}", ""]
    lines.append(f"- card: {env.get('gpu', '?')}, driver {env.get('driver', '?')}, "
                 f"{env.get('gpu_memory', '?')}; CUDA (torch) {env.get('torch_cuda', '?')}, "
                 f"cuDNN {env.get('cudnn', '?')}")
    lines.append(f"- torch {env.get('torch', '?')}, Triton {env.get('triton', '?')}, "
                 f"JAX {env.get('jax', '?')} (jaxlib {env.get('jaxlib', '?')}); "
                 f"python {env.get('python', '?')}")
    lines.append(f"- ceilings measured in this run: device copy {c.get('copy_tbps', 0):.2f} TB/s "
                 f"(bytes read + written; a copy of {c.get('copy_bytes', 0) / 2**31:.0f} GiB), "
                 f"bf16 matmul 8192^3 {c.get('matmul_bf16_tflops', 0):.0f} TFLOP/s (random data)")
    m = res.get("method", {})
    lines.append(f"- times: median ms over {m.get('torch', '?')}; JAX: {m.get('jax', '?')}; "
                 f"strata: {m.get('strata', '?')}")
    if m.get("rounds"):
        lines.append(f"- rounds: {m['rounds']}")
    lines.append("- cells: median ms (rate, % of the ceiling); rate = fewest bytes (one read per "
                 "input, one write per output) or nominal FLOPs over the median; every result "
                 "was checked against a higher-precision reference before timing "
                 "(bench/gpu/workloads.py: tolerances)")
    lines.append("")
    groups = [("Memory-bound blocks, GEMM, models", lambda w: w["group"] != "attention"),
              ("Attention", lambda w: w["group"] == "attention")]
    for title, pred in groups:
        ws = [w for w in res.get("workloads", []) if pred(w)]
        if not ws:
            continue
        lines.append(f"{title}:")
        lines.append("")
        lines += _group_table(res, ws)
        lines.append("")
    variants = variants_rows(res)
    if variants:
        lines.append("Module variants (`--strata-variants`, interleaved within each round): the "
                     "median of each variant's rounds' medians; first/this > 1: faster than the "
                     "first variant:")
        lines.append("")
        lines.append("| " + " | ".join(VARIANTS_HEAD) + " |")
        lines.append("| --- | --- | " + " | ".join(["---:"] * 6) + " | --- |")
        lines += ["| " + " | ".join(r) + " |" for r in variants]
        lines.append("")
    checks = []
    for w in res.get("workloads", []):
        for p, r in list(w.get("peers", {}).items()) + [("strata", w.get("strata") or {})]:
            ch = r.get("check")
            if ch:
                checks.append((w, p, ch))
    if checks:
        worst = {}
        for w, p, ch in checks:
            k = w["name"]
            if k not in worst or ch.get("rel_err", 0) > worst[k][1].get("rel_err", 0):
                worst[k] = (p, ch, w)
        lines.append("Largest relative error (‖out − ref‖ / ‖ref‖) per workload, and its "
                     "tolerance: " + "; ".join(
                         f"{k} {ch.get('rel_err', 0):.1e} ({PEER_LABELS.get(p, p)}, "
                         f"tol {w.get('tol')})" for k, (p, ch, w) in worst.items()))
        lines.append("")
    notes = res.get("notes", [])
    errors = []
    for w in res.get("workloads", []):
        for p, r in w.get("peers", {}).items():
            if r.get("error"):
                errors.append(f"{w['name']} {PEER_LABELS.get(p, p)}: {r['error'][:200]}")
            elif r.get("skipped"):
                errors.append(f"{w['name']} {PEER_LABELS.get(p, p)}: skipped ({r['skipped']})")
            elif r.get("check") and not r["check"].get("pass"):
                errors.append(f"{w['name']} {PEER_LABELS.get(p, p)}: check failed "
                              f"(rel err {r['check'].get('rel_err')})")
    if notes or errors:
        lines.append("Notes:")
        lines.append("")
        lines += [f"- {n}" for n in notes + errors]
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    with open(a.json) as f:
        res = json.load(f)
    print(markdown(res) if a.markdown else text_table(res))


if __name__ == "__main__":
    main()
