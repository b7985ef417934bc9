#!/usr/bin/env node
// The onnxruntime peer: evaluates oplab cases with ONNX Runtime's CPU kernels (onnxruntime-node),
// speaking protocol 1 of the line protocol (docs/protocol.md) on stdin/stdout. Each case becomes
// a one-node ONNX model (built with the ONNX protobuf schema of onnx-proto), run on the CPU
// execution provider with one thread. Forward only: ONNX Runtime's CPU kernels have no backward.
//
// `node onnxruntime_bridge.js --bench` reads lines {"case": CASE, "random_inputs": SPECS,
// "repeats": R, "warmup": W, "threads": T} and answers each with {"ms": [...], "dtype": D} (D
// the element type of the kernel timed: float32 under `--dtype float32`): the session is
// built once (the inputs SPECS names drawn here), then run R times after W warm-up runs
// (default 5 and 1); a line without "case" times the same session again.
'use strict';

const path = require('path');
const readline = require('readline');

const MODULES = process.env.OPLAB_ORT_MODULES || path.join(__dirname, 'onnxruntime', 'node_modules');
let ort, onnx;
try {
  ort = require(path.join(MODULES, 'onnxruntime-node'));
  onnx = require(path.join(MODULES, 'onnx-proto')).onnx;
} catch (e) {
  // One line on stderr, and an error for the hello, so the harness can say why.
  process.stderr.write(`onnxruntime bridge: cannot load onnxruntime-node / onnx-proto from ${MODULES}: ${e.message}\n`);
  ort = null;
}
if (ort) ort.env.logLevel = 'error';  // ORT's warnings would go to stderr on every session

// Element types of TensorProto and of ORT tensors.
const F32 = { proto: 1, ort: 'float32', Array: Float32Array };
const F64 = { proto: 11, ort: 'float64', Array: Float64Array };
const U8 = { proto: 2, ort: 'uint8', Array: Uint8Array };
const I64 = 7;

// Per-op type: double where ORT's CPU EP registers a double kernel for the op (measured with
// this bridge on onnxruntime-node 1.30: RoiAlign, DeformConv and GridSample have one; Resize,
// AveragePool and MaxRoiPool answer "Could not find an implementation" for double), else float32.
// Started with `--dtype float32`, every op runs in float32: the kernels a deployed model runs
// (the `onnxruntime-f32` backend, judged at its own precision).
// Started with `--dtype uint8`, interpolate alone runs, on 8-bit images (Resize's uint8 kernel:
// the `onnxruntime-uint8` backend, judged by the uint8 rule, SPEC §16).
const DTYPE_ARG = process.argv.includes('--dtype') ? process.argv[process.argv.indexOf('--dtype') + 1] : '';
const ALL_FLOAT32 = DTYPE_ARG === 'float32';
const UINT8 = DTYPE_ARG === 'uint8';
const OP_DTYPE = UINT8 ? { interpolate: U8 } : {
  deform_conv2d: ALL_FLOAT32 ? F32 : F64,
  roi_align: ALL_FLOAT32 ? F32 : F64,
  roi_pool: F32,
  interpolate: F32,
  grid_sample: ALL_FLOAT32 ? F32 : F64,
};

// `--model` (see modelOf): a case whose shape Resize cannot produce is still built, so that a
// reproduction shows ORT answering another shape.
const MODEL_MODE = process.argv.includes('--model');

class Unsupported extends Error {}

function num(v) {
  if (typeof v === 'number') return v;
  if (v === 'nan') return NaN;
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  throw new Error(`not a number in a tensor: ${JSON.stringify(v).slice(0, 40)}`);
}

function out(v) {
  if (Number.isNaN(v)) return 'nan';
  if (v === Infinity) return 'inf';
  if (v === -Infinity) return '-inf';
  return v;
}

function tensor(t, type) {
  // An input drawn here (drawRandomInputs) is already a typed array of the type: not copied.
  const data = t.data instanceof type.Array ? t.data : type.Array.from(t.data, num);
  return new ort.Tensor(type.ort, data, t.shape);
}

function int64Tensor(values, shape) {
  return new ort.Tensor('int64', BigInt64Array.from(values.map((v) => BigInt(v))), shape);
}

function attr(name, value) {
  const a = onnx.AttributeProto;
  if (typeof value === 'string') return { name, type: a.AttributeType.STRING, s: Buffer.from(value) };
  if (Array.isArray(value)) return { name, type: a.AttributeType.INTS, ints: value };
  if (Number.isInteger(value) && !value.isFloat) return { name, type: a.AttributeType.INT, i: value };
  return { name, type: a.AttributeType.FLOAT, f: value.value };
}
const float = (v) => ({ value: v, isFloat: true });

function valueInfo(name, elemType, rank) {
  const dims = [];
  for (let i = 0; i < rank; ++i) dims.push({ dimParam: `${name}_${i}` });
  return { name, type: { tensorType: { elemType, shape: { dim: dims } } } };
}

// A model of one node. inputs: [{name, elem, rank}] in the node's order ('' for an omitted
// optional input); constants: initializers (int64 1-D or float 1-D).
function oneNodeModel(opType, opset, inputs, attrs, outRank, outElem, initializers = []) {
  const graph = {
    name: 'oplab_case',
    node: [{ opType, input: inputs.map((i) => i.name), output: ['Y'], attribute: attrs, domain: '' }],
    input: inputs.filter((i) => i.name && !i.init).map((i) => valueInfo(i.name, i.elem, i.rank)),
    output: [valueInfo('Y', outElem, outRank)],
    initializer: initializers,
  };
  const model = onnx.ModelProto.create({ irVersion: 9, opsetImport: [{ domain: '', version: opset }], graph });
  return onnx.ModelProto.encode(model).finish();
}

function floatInit(name, values) {
  return { name, dims: [values.length], dataType: F32.proto, floatData: values };
}
function int64Init(name, values) {
  return { name, dims: [values.length], dataType: I64, int64Data: values };
}

// ---- ops ----------------------------------------------------------------------------------

function deformConv(c) {
  const T = OP_DTYPE.deform_conv2d;
  const p = c.params, x = c.inputs.input, w = c.inputs.weight, off = c.inputs.offset;
  const mask = c.inputs.mask, bias = c.inputs.bias;
  const kh = w.shape[2], kw = w.shape[3];
  // The case format takes a number or an [h, w] pair for each of these.
  const pair = (v, d) => (v === undefined ? [d, d] : Array.isArray(v) ? v : [v, v]);
  const stride = pair(p.stride, 1), pad = pair(p.padding, 0), dil = pair(p.dilation, 1);
  const G = x.shape[1] / w.shape[1], D = off.shape[1] / (2 * kh * kw);
  const inputs = [
    { name: 'X', elem: T.proto, rank: 4 }, { name: 'W', elem: T.proto, rank: 4 }, { name: 'offset', elem: T.proto, rank: 4 },
    { name: bias ? 'B' : '', elem: T.proto, rank: 1 }, { name: mask ? 'mask' : '', elem: T.proto, rank: 4 },
  ];
  while (inputs.length && !inputs[inputs.length - 1].name) inputs.pop();
  const attrs = [attr('kernel_shape', [kh, kw]), attr('strides', stride), attr('pads', [pad[0], pad[1], pad[0], pad[1]]),
    attr('dilations', dil), attr('group', G), attr('offset_group', D)];
  const feeds = { X: tensor(x, T), W: tensor(w, T), offset: tensor(off, T) };
  if (bias) feeds.B = tensor(bias, T);
  if (mask) feeds.mask = tensor(mask, T);
  return { model: oneNodeModel('DeformConv', 19, inputs, attrs, 4, T.proto), feeds };
}

function roiSplit(rois) {
  const K = rois.shape[0], boxes = [], idx = [];
  for (let k = 0; k < K; ++k) {
    idx.push(num(rois.data[k * 5]));
    for (let j = 1; j < 5; ++j) boxes.push(rois.data[k * 5 + j]);
  }
  return { K, boxes: { shape: [K, 4], data: boxes }, idx };
}

function roiAlign(c) {
  const T = OP_DTYPE.roi_align;
  const p = c.params, r = roiSplit(c.inputs.rois);
  const [PH, PW] = p.output_size;
  const sr = p.sampling_ratio === undefined ? -1 : p.sampling_ratio;
  const attrs = [
    attr('coordinate_transformation_mode', p.aligned ? 'half_pixel' : 'output_half_pixel'),
    attr('mode', p.pool_mode || 'avg'), attr('output_height', PH), attr('output_width', PW),
    attr('sampling_ratio', sr > 0 ? sr : 0), attr('spatial_scale', float(p.spatial_scale === undefined ? 1 : p.spatial_scale)),
  ];
  const inputs = [{ name: 'X', elem: T.proto, rank: 4 }, { name: 'rois', elem: T.proto, rank: 2 }, { name: 'batch_indices', elem: I64, rank: 1 }];
  const feeds = { X: tensor(c.inputs.input, T), rois: tensor(r.boxes, T), batch_indices: int64Tensor(r.idx, [r.K]) };
  return { model: oneNodeModel('RoiAlign', 16, inputs, attrs, 4, T.proto), feeds };
}

function roiPool(c) {
  const T = OP_DTYPE.roi_pool;
  const p = c.params;
  const attrs = [attr('pooled_shape', p.output_size), attr('spatial_scale', float(p.spatial_scale === undefined ? 1 : p.spatial_scale))];
  const inputs = [{ name: 'X', elem: T.proto, rank: 4 }, { name: 'rois', elem: T.proto, rank: 2 }];
  const feeds = { X: tensor(c.inputs.input, T), rois: tensor(c.inputs.rois, T) };
  return { model: oneNodeModel('MaxRoiPool', 19, inputs, attrs, 4, T.proto), feeds };
}

// The output size and the scale the kernel uses, per spatial axis (SPEC §6): with `size` or
// recompute_scale_factor, the sizes are given to Resize (its scale is then out/in); with a
// scale factor and no recompute, the scales (Resize's output size is then floor(in * sf),
// the case's own).
function interpolate(c) {
  const T = OP_DTYPE.interpolate;
  const p = c.params, x = c.inputs.input, rank = x.shape.length, nsp = rank - 2;
  const mode = p.mode;
  const spatial = x.shape.slice(2);
  const perAxis = (v) => (Array.isArray(v) ? v : Array(nsp).fill(v));
  const feeds = { X: tensor(x, T) };
  if (mode === 'area' && UINT8) throw new Unsupported('area maps to AveragePool, which has no uint8 kernel');
  if (mode === 'area') {
    // AveragePool over in/out blocks where every axis divides; PyTorch's adaptive pooling is
    // that when the sizes divide (SPEC §6 area bins), and ONNX has no adaptive pooling.
    const outSize = p.size != null ? perAxis(p.size) : spatial.map((s, i) => Math.floor(s * perAxis(p.scale_factor)[i]));
    const k = spatial.map((s, i) => s / outSize[i]);
    if (!k.every((v) => Number.isInteger(v) && v >= 1))
      throw new Unsupported('area maps to AveragePool only where every input size is a multiple of its output size');
    const attrs = [attr('kernel_shape', k), attr('strides', k)];
    return { model: oneNodeModel('AveragePool', 19, [{ name: 'X', elem: T.proto, rank }], attrs, rank, T.proto), feeds };
  }
  const onnxMode = { nearest: 'nearest', 'nearest-exact': 'nearest', linear: 'linear', bilinear: 'linear', trilinear: 'linear', bicubic: 'cubic' }[mode];
  if (!onnxMode) throw new Unsupported(`no Resize mode for ${mode}`);
  let ctm = 'pytorch_half_pixel';
  let nearestMode = 'floor';
  if (mode === 'nearest') ctm = 'asymmetric';
  if (mode === 'nearest-exact') { ctm = 'half_pixel'; nearestMode = 'round_prefer_ceil'; }
  if (p.align_corners) ctm = 'align_corners';
  // antialias (opset 18, SPEC §16): the filter's centre is (dst + 0.5) * scale, half_pixel's
  // grid even at an output of 1, and the cubic is Keys' a = -0.5 as torch and Pillow take it.
  // exclude_outside=1 drops the taps past an edge and renormalises the rest (SPEC §16);
  // with 0, measured, ORT reads them as the edge pixel (8 -> 2 bilinear, a 1 at index 3 gives
  // 0.15625 = 0.625 / 4 where torch and Pillow give 0.625 / 3.5).
  const antialias = p.antialias === true;
  if (antialias) ctm = 'half_pixel';
  const attrs = [attr('mode', onnxMode), attr('coordinate_transformation_mode', ctm), attr('nearest_mode', nearestMode),
    attr('cubic_coeff_a', float(antialias ? -0.5 : -0.75)), attr('exclude_outside', antialias ? 1 : 0)];
  if (antialias) attrs.push(attr('antialias', 1));
  const inputs = [{ name: 'X', elem: T.proto, rank }, { name: '', elem: 0, rank: 0 }];
  const inits = [];
  if (p.size != null || p.recompute_scale_factor === true || p.align_corners) {
    // The sizes the case computes: size, or floor(in * sf) in double (SPEC §6).
    const size = p.size != null ? perAxis(p.size) : spatial.map((s, i) => Math.floor(s * perAxis(p.scale_factor)[i]));
    inputs.push({ name: '', elem: 0, rank: 0 }, { name: 'sizes', elem: I64, rank: 1, init: true });
    inits.push(int64Init('sizes', [...x.shape.slice(0, 2), ...size]));
    // align_corners ignores the scale (SPEC §6): the sizes are what it needs.
  } else {
    // Resize's output size is the float32 product of the float32 scale and the input size,
    // truncated (ORT's UpsampleBase::ComputeOutputShape multiplies a float by an int64, in
    // float): 5 * 1.3999999999999 is 6.99999988 with the scale rounded, 7.0 once the product
    // is. s * fround(sf) is exact in double (at most 21 + 24 bits), so fround of it is the float
    // product. Where that is not the case's floor(in * sf) in double, ORT cannot compute the
    // case's shape: it says so.
    const sf = perAxis(p.scale_factor);
    spatial.forEach((s, i) => {
      const want = Math.floor(s * sf[i]), got = Math.floor(Math.fround(s * Math.fround(sf[i])));
      if (want !== got && !MODEL_MODE) throw new Error(`Resize's output size, the float32 product in * float32(sf) truncated, = ${got} on axis ${i} is not the case's ${want}`);
    });
    inputs.push({ name: 'scales', elem: F32.proto, rank: 1, init: true });
    inits.push(floatInit('scales', [1, 1, ...perAxis(p.scale_factor)]));
  }
  return { model: oneNodeModel('Resize', 19, inputs, attrs, rank, T.proto, inits), feeds };
}

function gridSample(c) {
  const T = OP_DTYPE.grid_sample;
  const p = c.params, x = c.inputs.input, rank = x.shape.length;
  const mode = { bilinear: 'linear', nearest: 'nearest', bicubic: 'cubic' }[p.mode || 'bilinear'];
  const attrs = [attr('mode', mode), attr('padding_mode', p.padding_mode || 'zeros'), attr('align_corners', p.align_corners ? 1 : 0)];
  const inputs = [{ name: 'X', elem: T.proto, rank }, { name: 'grid', elem: T.proto, rank }];
  const feeds = { X: tensor(x, T), grid: tensor(c.inputs.grid, T) };
  return { model: oneNodeModel('GridSample', 20, inputs, attrs, rank, T.proto), feeds };
}

const BUILD = { deform_conv2d: deformConv, roi_align: roiAlign, roi_pool: roiPool, interpolate, grid_sample: gridSample };

// ---- protocol -----------------------------------------------------------------------------

function hello() {
  if (!ort) return { error: `cannot load onnxruntime-node from ${MODULES} (run scripts/setup.sh)`, kind: 'failed' };
  const ops = {};
  for (const [op, t] of Object.entries(OP_DTYPE)) ops[op] = { dtype: t.ort, grads: false };
  return {
    protocol: 1, name: ALL_FLOAT32 ? 'onnxruntime-f32' : UINT8 ? 'onnxruntime-uint8' : 'onnxruntime', dtype: 'float32', ops,
    description: `ONNX Runtime ${ort.env.versions.node} (onnxruntime-node), CPU execution provider, one thread, ` +
      'one-node ONNX models: DeformConv, RoiAlign, MaxRoiPool, Resize / AveragePool, GridSample; forward only',
  };
}

// Spinning off: with two threads, ONNX Runtime's pool thread spins after each run while the
// bench's other side runs next on the same cores; a one-node model gains nothing from spinning.
async function session(model, threads) {
  return ort.InferenceSession.create(model, {
    executionProviders: ['cpu'], intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'disabled',
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
}

async function evaluate(c) {
  const build = OP_DTYPE[c.op] && BUILD[c.op];
  if (!build) return { error: `the onnxruntime peer has no op ${c.op}${UINT8 ? ' on uint8 images' : ''}`, kind: 'unsupported' };
  let built;
  try {
    built = build(c);
  } catch (e) {
    return { error: e.message, kind: e instanceof Unsupported ? 'unsupported' : 'failed' };
  }
  try {
    const s = await session(built.model, 1);
    const res = await s.run(built.feeds);
    const y = res.Y;
    await s.release();
    return { outputs: { output: { shape: y.dims.map(Number), data: Array.from(y.data, (v) => out(Number(v))) } } };
  } catch (e) {
    // ORT refusing a valid case (a kernel that is not there, a check of its own) is its answer.
    return { error: `onnxruntime: ${String(e.message || e).split('\n')[0]}`, kind: 'failed' };
  }
}

// `--model`: each line is a case, answered with the one-node model the bridge would run
// (base64) and its feeds, {"model": .., "feeds": {name: {"type", "dims", "data"}}}: what a
// standalone reproduction carries (`oplab repro`), so that it runs ONNX Runtime on exactly this
// model without oplab. int64 values are written as strings (JSON numbers are doubles).
function modelOf(c) {
  const build = OP_DTYPE[c.op] && BUILD[c.op];
  if (!build) return { error: `the onnxruntime peer has no op ${c.op}`, kind: 'unsupported' };
  const built = build(c);
  const feeds = {};
  for (const [name, t] of Object.entries(built.feeds))
    feeds[name] = { type: t.type, dims: t.dims.map(Number), data: Array.from(t.data, (v) => (typeof v === 'bigint' ? v.toString() : out(v))) };
  return { model: Buffer.from(built.model).toString('base64'), feeds };
}

// The bench session of the last request that carried a case: a request without one times it
// again, so that the harness can alternate single runs of this peer with its other sides
// without rebuilding the session (or resending the inputs) for each.
let kept = null;

// The inputs a bench request names in "random_inputs" ({name: {shape, low, high}}), drawn here
// uniformly in [low, high) rather than sent: a case is one JSON line, and Node holds no string
// past 2^29 characters (a standard RoI shape's feature map alone is about 620 M of them). A
// fixed seed, so that every run of the bench times the same values.
function drawRandomInputs(c, specs) {
  let state = 0x9e3779b9;
  const next = () => {
    // mulberry32: a 32-bit state, uniform in [0, 1)
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const inputs = { ...c.inputs };
  for (const [name, spec] of Object.entries(specs || {})) {
    const low = spec.low ?? -1, high = spec.high ?? 1;
    const data = new Float32Array(spec.shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < data.length; ++i) data[i] = low + (high - low) * next();
    inputs[name] = { shape: spec.shape, data };
  }
  return { ...c, inputs };
}

async function bench(req) {
  if (req.case) {
    if (kept) await kept.s.release();
    kept = null;
    const c = drawRandomInputs(req.case, req.random_inputs);
    if (!BUILD[c.op] || !OP_DTYPE[c.op]) return { error: `no op ${c.op}`, kind: 'unsupported' };
    let built;
    try {
      built = BUILD[c.op](c);
    } catch (e) {
      // As in evaluate(): ORT lacking the case's mode is its answer; anything else failed.
      return { error: String(e.message || e).split('\n')[0], kind: e instanceof Unsupported ? 'unsupported' : 'failed' };
    }
    kept = { s: await session(built.model, req.threads || 1), feeds: built.feeds, dtype: OP_DTYPE[c.op].ort };
  }
  if (!kept) return { error: 'no bench session: the first request carries a case' };
  for (let i = 0; i < (req.warmup ?? 1); ++i) await kept.s.run(kept.feeds);
  const ms = [];
  for (let i = 0; i < (req.repeats ?? 5); ++i) {
    const t0 = process.hrtime.bigint();
    await kept.s.run(kept.feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { ms, dtype: kept.dtype };  // the element type of the kernel timed
}

async function main() {
  const benchMode = process.argv.includes('--bench');
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let first = true;
  for await (const line of rl) {
    if (!line.trim()) continue;
    let answer;
    try {
      const msg = JSON.parse(line);
      if (benchMode) answer = await bench(msg);
      else if (MODEL_MODE) answer = modelOf(msg);
      else if (first) answer = hello();
      else answer = await evaluate(msg);
    } catch (e) {
      answer = { error: `onnxruntime bridge: ${String(e.message || e).split('\n')[0]}`, kind: 'failed' };
    }
    first = false;
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
}

main();
