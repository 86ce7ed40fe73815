#!/usr/bin/env node
// bench.js - times one ONNX model on ONNX Runtime's CPU execution provider.
//
// The ONNX Runtime side of bench/compare.py: it prints the same one-line JSON record as
// `strata bench --json`, so the two engines are measured the same way (warm-up runs, then the
// median over timed runs of one inference each, at a fixed intra-op thread count).
//
//   node bench.js model.onnx [--threads N] [--warmup W] [--runs R] [--data DIR]
//                            [--write-outputs DIR] [--profile FILE]
//
// --data DIR feeds DIR/input_<K>.pb (ONNX TensorProto, the backend-test layout); without it the
// inputs are random with dynamic dimensions set to 1. --write-outputs DIR runs the model once
// more after timing and writes each output as DIR/output_<K>.pb, for checking against
// references. --profile FILE turns on ONNX Runtime's profiler for the timed runs and writes FILE:
// one JSON object whose "steps" list each node (ms per run, share, op type), slowest first, the
// shape of `strata bench --profile --json`'s steps, so that the two engines' per-step times can
// be set side by side (the profiler's own cost per node is in ORT's times, not strata's).
// TensorProto is decoded and encoded here directly (a few protobuf fields) so the
// harness needs nothing beyond onnxruntime-node.

'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function usage(message) {
  if (message) process.stderr.write(`bench.js: ${message}\n`);
  process.stderr.write(
      'usage: node bench.js model.onnx [--threads N] [--warmup W] [--runs R] [--data DIR] ' +
      '[--write-outputs DIR] [--profile FILE]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const args = {threads: 1, warmup: 10, runs: 100, data: null, writeOutputs: null, profile: null,
                model: null};
  const paths = {'--data': 'data', '--write-outputs': 'writeOutputs', '--profile': 'profile'};
  const ints = {'--threads': 'threads', '--warmup': 'warmup', '--runs': 'runs'};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '-h' || a === '--help') usage();
    if (a in ints || a in paths) {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      const v = argv[++i];
      if (a in ints) {
        if (!/^\d+$/.test(v)) usage(`${a} needs a non-negative integer, got '${v}'`);
        args[ints[a]] = Number(v);
      } else {
        args[paths[a]] = v;
      }
    } else if (a.startsWith('-')) {
      usage(`unknown option '${a}'`);
    } else if (args.model === null) {
      args.model = a;
    } else {
      usage(`unexpected argument '${a}'`);
    }
  }
  if (args.model === null) usage('no model given');
  if (args.threads < 1) usage('--threads must be at least 1');
  if (args.runs < 1) usage('--runs must be at least 1');
  return args;
}

// ---------------------------------------------------------------------------
// TensorProto <-> ort.Tensor
// ---------------------------------------------------------------------------

// ONNX TensorProto.DataType -> [ort type name, typed array constructor].
const DTYPES = {
  1: ['float32', Float32Array],
  2: ['uint8', Uint8Array],
  3: ['int8', Int8Array],
  4: ['uint16', Uint16Array],
  5: ['int16', Int16Array],
  6: ['int32', Int32Array],
  7: ['int64', BigInt64Array],
  9: ['bool', Uint8Array],
  10: ['float16', Uint16Array],
  11: ['float64', Float64Array],
  12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};
const ORT_TO_ONNX = {};
for (const [code, [name]] of Object.entries(DTYPES)) ORT_TO_ONNX[name] = Number(code);

class Reader {
  constructor(buf, file) {
    this.buf = buf;
    this.pos = 0;
    this.file = file;
  }
  fail(what) {
    throw new Error(`${this.file}: malformed TensorProto (${what} at byte ${this.pos})`);
  }
  varint() {
    let result = 0n, shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) this.fail('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 63n) this.fail('varint longer than 10 bytes');
    }
  }
  bytes(n) {
    if (n < 0 || this.pos + n > this.buf.length) this.fail('field runs past the end');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

// Reads a repeated scalar field, packed (wire type 2) or not, appending to `out`.
function readRepeated(r, wire, kind, out) {
  const one = (rr) => {
    if (kind === 'varint') return rr.varint();
    if (kind === 'f32') return Buffer.from(rr.bytes(4)).readFloatLE(0);
    return Buffer.from(rr.bytes(8)).readDoubleLE(0);
  };
  if (wire === 2) {
    const body = new Reader(r.bytes(Number(r.varint())), r.file);
    while (body.pos < body.buf.length) out.push(one(body));
  } else {
    out.push(one(r));
  }
}

function decodeTensorProto(buf, file) {
  const r = new Reader(buf, file);
  const t = {dims: [], dataType: 0, name: '', raw: null, floats: [], ints32: [], ints64: [],
             doubles: [], uints64: []};
  while (r.pos < buf.length) {
    const key = Number(r.varint());
    const field = key >>> 3, wire = key & 7;
    switch (field) {
    case 1: readRepeated(r, wire, 'varint', t.dims); break;
    case 2: t.dataType = Number(r.varint()); break;
    case 4: readRepeated(r, wire, 'f32', t.floats); break;
    case 5: readRepeated(r, wire, 'varint', t.ints32); break;
    case 7: readRepeated(r, wire, 'varint', t.ints64); break;
    case 8: t.name = r.bytes(Number(r.varint())).toString('utf8'); break;
    case 9: t.raw = r.bytes(Number(r.varint())); break;
    case 10: readRepeated(r, wire, 'f64', t.doubles); break;
    case 11: readRepeated(r, wire, 'varint', t.uints64); break;
    case 13: throw new Error(`${file}: tensors with external data are not supported`);
    case 6: throw new Error(`${file}: string tensors are not supported`);
    default: // segment, doc_string, data_location, ...: skip by wire type
      if (wire === 0) r.varint();
      else if (wire === 1) r.bytes(8);
      else if (wire === 2) r.bytes(Number(r.varint()));
      else if (wire === 5) r.bytes(4);
      else r.fail(`unsupported wire type ${wire}`);
    }
  }
  const entry = DTYPES[t.dataType];
  if (!entry) throw new Error(`${file}: unsupported tensor element type ${t.dataType}`);
  const [type, Ctor] = entry;
  const dims = t.dims.map((d) => BigInt.asIntN(64, d));
  if (dims.some((d) => d < 0n)) throw new Error(`${file}: negative dimension`);
  const count = dims.reduce((a, d) => a * Number(d), 1);
  let data;
  if (t.raw !== null) {
    if (t.raw.length !== count * Ctor.BYTES_PER_ELEMENT) {
      throw new Error(`${file}: raw_data holds ${t.raw.length} bytes, shape [${dims}] of ` +
                      `${type} needs ${count * Ctor.BYTES_PER_ELEMENT}`);
    }
    // Copy into a fresh, aligned buffer (raw_data may start at any byte offset).
    const copy = new Uint8Array(t.raw.length);
    copy.set(t.raw);
    data = new Ctor(copy.buffer);
  } else {
    const src = {1: t.floats, 11: t.doubles, 7: t.ints64, 13: t.uints64}[t.dataType] || t.ints32;
    if (src.length !== count) {
      throw new Error(`${file}: holds ${src.length} values, shape [${dims}] needs ${count}`);
    }
    data = new Ctor(count);
    for (let i = 0; i < count; ++i) {
      const v = src[i];
      if (Ctor === BigInt64Array) data[i] = BigInt.asIntN(64, v);
      else if (Ctor === BigUint64Array) data[i] = v;
      else if (typeof v === 'bigint') data[i] = Number(BigInt.asIntN(32, v));
      else data[i] = v;
    }
  }
  return {name: t.name, tensor: new ort.Tensor(type, data, dims.map(Number))};
}

function varintBytes(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return Buffer.from(out);
}

function lengthDelimited(field, body) {
  return Buffer.concat([varintBytes((field << 3) | 2), varintBytes(body.length), body]);
}

function encodeTensorProto(name, tensor) {
  const code = ORT_TO_ONNX[tensor.type];
  if (code === undefined) throw new Error(`output '${name}': cannot write type ${tensor.type}`);
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const dims = Buffer.concat(tensor.dims.map(varintBytes));
  return Buffer.concat([
    lengthDelimited(1, dims),                  // dims, packed
    varintBytes((2 << 3) | 0), varintBytes(code),  // data_type
    lengthDelimited(8, Buffer.from(name, 'utf8')),
    lengthDelimited(9, raw),
  ]);
}

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

function loadInputs(session, dir) {
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    const file = path.join(dir, `input_${k}.pb`);
    if (!fs.existsSync(file)) throw new Error(`${file}: missing (model input '${name}')`);
    const t = decodeTensorProto(fs.readFileSync(file), file);
    // The backend-test layout names tensors after the graph's inputs; an unnamed one is taken
    // by position.
    if (t.name && t.name !== name) {
      throw new Error(`${file}: tensor is named '${t.name}', model input ${k} is '${name}'`);
    }
    feeds[name] = t.tensor;
  });
  return feeds;
}

// Deterministic pseudo-random numbers (xorshift32), so runs are repeatable.
function makeRandom(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

function randomInputs(session) {
  const rand = makeRandom(12345);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor) throw new Error(`input '${meta.name}' is not a tensor`);
    // Symbolic or unknown dimensions become 1.
    const dims = meta.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const count = dims.reduce((a, d) => a * d, 1);
    const entry = Object.values(DTYPES).find(([type]) => type === meta.type);
    if (!entry) throw new Error(`input '${meta.name}': no random generator for ${meta.type}`);
    const Ctor = entry[1];
    const data = new Ctor(count);
    for (let i = 0; i < count; ++i) {
      if (meta.type === 'float32' || meta.type === 'float64') data[i] = rand() * 2 - 1;
      // Integers stay in {0, 1}: valid as indices into any non-empty axis (Gather, embeddings).
      else if (Ctor === BigInt64Array || Ctor === BigUint64Array) data[i] = BigInt(rand() < 0.5 ? 0 : 1);
      else data[i] = rand() < 0.5 ? 0 : 1;
    }
    feeds[meta.name] = new ort.Tensor(meta.type, data, dims);
  }
  return feeds;
}

// ---------------------------------------------------------------------------

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.model)) usage(`${args.model}: no such file`);
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  };
  let profilePrefix = null;
  if (args.profile) {
    profilePrefix = path.join(fs.mkdtempSync(path.join(require('os').tmpdir(), 'ortprof-')), 'p');
    options.enableProfiling = true;
    options.profileFilePrefix = profilePrefix;
  }
  const session = await ort.InferenceSession.create(args.model, options);
  const feeds = args.data ? loadInputs(session, args.data) : randomInputs(session);

  for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.runs; ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;

  if (args.writeOutputs) {
    fs.mkdirSync(args.writeOutputs, {recursive: true});
    const results = await session.run(feeds);
    session.outputNames.forEach((name, k) => {
      fs.writeFileSync(path.join(args.writeOutputs, `output_${k}.pb`),
                       encodeTensorProto(name, results[name]));
    });
  }

  const round = (x) => Math.round(x * 1e4) / 1e4;
  process.stdout.write(JSON.stringify({
    median_ms: round(median),
    min_ms: round(times[0]),
    runs: args.runs,
    threads: args.threads,
    engine: `onnxruntime-node ${ort.env.versions.node}`,
  }) + '\n');
  await session.release();
  if (profilePrefix) writeProfile(profilePrefix, args);
}

/// Sums ORT's per-node kernel times over the timed runs (the warm-up runs are the first
/// `warmup` model_run events) into args.profile.
function writeProfile(prefix, args) {
  const dir = path.dirname(prefix);
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
  if (!file) usage(`ONNX Runtime wrote no profile into ${dir}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const nodes = new Map();
  for (const e of events) {
    if (e.cat === 'Node' && e.name.endsWith('_kernel_time')) {
      const name = e.name.slice(0, -'_kernel_time'.length);
      const entry = nodes.get(name) || {node: name, op: e.args.op_name, us: []};
      entry.us.push(e.dur);
      nodes.set(name, entry);
    }
  }
  // Each node ran once per run (warm-up, timed, and the --write-outputs run if any): keep the
  // timed runs' share.
  const steps = [];
  let total = 0;
  for (const entry of nodes.values()) {
    const timed = entry.us.slice(args.warmup, args.warmup + args.runs);
    const ms = timed.reduce((a, b) => a + b, 0) / 1e3 / Math.max(1, timed.length);
    total += ms;
    steps.push({step: entry.op, nodes: [entry.node], ms_per_run: ms});
  }
  steps.sort((a, b) => b.ms_per_run - a.ms_per_run);
  for (const s of steps) s.percent = total > 0 ? (100 * s.ms_per_run) / total : 0;
  fs.writeFileSync(args.profile, JSON.stringify({threads: args.threads, steps}, null, 1) + '\n');
  fs.rmSync(dir, {recursive: true, force: true});
}

main().catch((e) => {
  process.stderr.write(`bench.js: ${e.message}\n`);
  process.exit(1);
});
