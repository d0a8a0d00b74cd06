#!/usr/bin/env python3
"""Where a training step's time goes, by op kind: a TensorFlow profiler trace of the bare step
(forward + backward + Adam, one tf.function, no XLA) parsed into categories.

Why: on a CPU whose bf16 matmuls are much faster than the rest (AMX runs them ~3x faster than
avx512_bf16), the step's speed is set by what is not a large matmul. This script says how
large that part is, so that an AMX figure can be estimated from a CPU without AMX: the
``amx_estimate`` field divides the large matmuls' time by ``--amx_speedup`` and keeps the rest.

Each kernel of the trace is one event named ``op_name:OpType`` on the executor's thread; run
on one core (``taskset -c 1``) the kernels do not overlap, and the step's wall time minus the
kernels' time is the executor's own overhead ("framework"). Categories (``categorize``):
large matmuls (the vocabulary projection, FFN and attention projections, through oneDNN),
attention's batched matmuls (per head: small), softmax, layer norm, dropout masks, the loss
over the vocabulary, the optimizer (Adam and the gradient sums), casts, gathers/scatters
(embeddings, slices), other elementwise, other.

The report records the CPU (model name, vendor/family/model, its bf16 instructions), the
same-run matmul probe before and after the step, the non-matmul seconds (``non_matmul_s``:
every category but the three matmul ones) and seconds by category and op type. On a CPU
with AMX (``amx_bf16`` in /proc/cpuinfo) ``amx`` is the measured step's share of the same-run
bf16 peak (issue #58's target: 75%), printed last; elsewhere it is null and only the
estimate speaks of AMX.

    taskset -c 1 .venv/bin/python -m bench.bench_train_step_profile --precision=bfloat16 \
        --config=base --out bench/results/profile_train_step_bf16_base.json
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import re
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np
import tensorflow as tf

from bench.report import CONFIGS, build_training, cpu_model, emit, matmul_peak, peer_batch
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.models.flops import training_flops
from t2t_repro.training.loop.train_step import batch_loss_sums
from t2t_repro.training.precision_hint import bf16_instructions, cpu_flags

MATMUL_TYPES = {
    "MatMul",
    "_MklMatMul",
    "_MklFusedMatMul",
    "BatchMatMulV2",
    "_MklBatchMatMulV2",
    "BatchMatMulV3",
    "_MklBatchMatMulV3",
    "_MklFusedBatchMatMulV2",
    "_MklNativeFusedMatMul",  # MatMul + BiasAdd (+ ReLU) fused by grappler's remapper
}
# Asynchronous kernels (a jit-compiled function inside the step: the bf16 loss, the bf16 layer
# norm) are traced as this event, their op name and type in its stats.
ASYNC_EVENT = "ExecutorState::ProcessAsync::Start"
# The categories that are large matmuls; everything else is the step's non-matmul time.
MATMUL_CATEGORIES = ("matmul_dense", "matmul_vocab", "matmul_attention_batched")
OP_EVENT = re.compile(r"^(?P<name>[^:]+):(?P<type>[A-Za-z0-9_]+)$")


def categorize(name: str, op_type: str) -> str:
    """The category of one kernel, from its op name (scopes) and type."""
    lower = name.lower()
    if op_type in MATMUL_TYPES:
        # Attention's per-head products are batched matmuls of [L, d/h] blocks; the
        # projections, the FFN and the vocabulary projection are 2-D matmuls.
        if "BatchMatMul" in op_type:
            return "matmul_attention_batched"
        vocab = re.search(r"transformer[_0-9]*/matmul|logits/matmul", lower)
        return "matmul_vocab" if vocab else "matmul_dense"
    if "xent" in lower or "reducelogsumexp" in lower or "loss" in lower or "one_hot" in lower:
        return "loss"
    if (
        "adam" in lower
        or op_type.startswith("ResourceApply")
        or op_type
        in (
            "AssignAddVariableOp",
            "AssignSubVariableOp",
            "AssignVariableOp",
        )
    ):
        return "optimizer"
    if "dropout" in lower or "Random" in op_type or op_type == "Bitcast":
        return "dropout"
    if "softmax" in lower or op_type in ("Softmax", "_MklSoftmax"):
        return "softmax"
    if "layer_norm" in lower or "moments" in lower or "batchnorm" in lower:
        return "layer_norm"
    if op_type == "Cast":
        return "cast"
    if op_type in (
        "GatherV2",
        "GatherNd",
        "ResourceGather",
        "UnsortedSegmentSum",
        "ScatterNd",
        "TensorScatterUpdate",
        "StridedSlice",
        "StridedSliceGrad",
        "Pad",
        "Slice",
        "ConcatV2",
    ):
        return "gather_slice_pad"
    if op_type in ("Transpose", "_MklTranspose", "Reshape", "ConjugateTranspose"):
        return "transpose_reshape"
    if (
        op_type in ("AddN", "_MklAddN")
        or "gradient_tape" in lower
        and op_type
        in (
            "Sum",
            "BroadcastGradientArgs",
        )
    ):
        return "gradient_sums"
    if op_type in (
        "Add",
        "AddV2",
        "_MklAdd",
        "_MklAddV2",
        "Sub",
        "Mul",
        "_MklMul",
        "RealDiv",
        "Relu",
        "ReluGrad",
        "_MklRelu",
        "_MklReluGrad",
        "Select",
        "SelectV2",
        "Maximum",
        "Exp",
        "Rsqrt",
        "Sqrt",
        "Square",
        "Neg",
        "Tile",
        "BiasAdd",
        "BiasAddGrad",
        "Sum",
        "Mean",
        "Max",
        "Fill",
        "ZerosLike",
        "OnesLike",
        "Equal",
        "NotEqual",
        "GreaterEqual",
        "SquaredDifference",
        "_FusedMatMul",
    ):
        return "elementwise_other"
    return "other"


def _async_op(plane, event) -> dict | None:
    """{"name", "type"} of an asynchronous kernel's event (its stats refer to the strings)."""
    found = {}
    for stat in event.stats:
        key = plane.stat_metadata[stat.metadata_id].name
        if key in ("name", "kernel_type"):
            value = stat.str_value or plane.stat_metadata[stat.ref_value].name
            found["name" if key == "name" else "type"] = value
    return found if len(found) == 2 else None


def op_times(logdir: str) -> tuple[dict, float, int]:
    """{(name, type): seconds} summed over the trace's kernels, the kernels' total, count."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    paths = sorted(glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True))
    if not paths:
        raise RuntimeError(f"no profiler trace written under {logdir}")
    space = xplane_pb2.XSpace()
    with open(paths[-1], "rb") as f:
        space.ParseFromString(f.read())
    times: dict = collections.Counter()
    count = 0
    for plane in space.planes:
        for line in plane.lines:
            # Only top-level kernels: an op event inside another (an XLA launch's parts) is
            # already in its parent's time.
            spans = []
            for event in sorted(line.events, key=lambda e: e.offset_ps):
                event_name = plane.event_metadata[event.metadata_id].name
                match = OP_EVENT.match(event_name)
                if event_name == ASYNC_EVENT:
                    match = _async_op(plane, event)
                if not match:
                    continue
                end = event.offset_ps + event.duration_ps
                if spans and event.offset_ps < spans[-1]:
                    continue
                spans.append(end)
                times[(match["name"], match["type"])] += event.duration_ps * 1e-12
                count += 1
    return dict(times), sum(times.values()), count


def profile(config: str, steps: int, warmup: int) -> dict:
    hp, model, optimizer, vocab = build_training(config)
    rng = np.random.default_rng(0)
    features = {
        k: tf.constant(peer_batch(rng, 128, 32, vocab), tf.int32) for k in ("inputs", "targets")
    }
    real_targets = int(tf.math.count_nonzero(features["targets"]))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss, tokens = batch_loss_sums(model, features, hp.label_smoothing)
            loss = loss / tokens
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    for _ in range(warmup):
        step().numpy()
    plain = []
    for _ in range(steps):
        start = time.perf_counter()
        step().numpy()
        plain.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        start = time.perf_counter()
        for _ in range(steps):
            step().numpy()
        traced_s = (time.perf_counter() - start) / steps
        tf.profiler.experimental.stop()
        times, kernels_s, count = op_times(logdir)
    by_category: dict = collections.Counter()
    by_type: dict = collections.Counter()
    top = []
    for (name, op_type), seconds in times.items():
        category = categorize(name, op_type)
        by_category[category] += seconds / steps
        by_type[(category, op_type)] += seconds / steps
        top.append((seconds / steps, name, op_type))
    by_category["framework"] = max(0.0, traced_s - kernels_s / steps)
    non_matmul = sum(v for k, v in by_category.items() if k not in MATMUL_CATEGORIES)
    top.sort(reverse=True)
    flops = training_flops(hp, 128, 32, 32)
    return {
        "config": config,
        "vocab": vocab,
        "compute_dtype": keras.mixed_precision.global_policy().compute_dtype,
        "real_target_tokens": real_targets,
        "step_s_untraced_median": float(np.median(plain)),
        "step_s_traced": traced_s,
        "kernels_per_step": count // steps,
        "step_tflop": flops / 1e12,
        "non_matmul_s": round(non_matmul, 5),
        "seconds_by_category": {k: round(v, 5) for k, v in by_category.most_common()},
        "share_by_category": {k: round(v / traced_s, 4) for k, v in by_category.most_common()},
        "seconds_by_op_type": {
            f"{c}:{t}": round(v, 5) for (c, t), v in by_type.most_common() if v >= 5e-4
        },
        "top_kernels": [{"s": round(s, 5), "name": n, "type": t} for s, n, t in top[:40]],
    }


def amx_estimate(result: dict, peak_gflops: float, speedup: float) -> dict:
    """The step's share of an AMX bf16 peak if the 2-D matmuls ran ``speedup`` times faster
    and everything else (batched attention matmuls included) kept its time."""
    # The trace slows kernels a little; its shares are applied to the untraced step time.
    scale = result["step_s_untraced_median"] / result["step_s_traced"]
    seconds = {k: v * scale for k, v in result["seconds_by_category"].items()}
    total = sum(seconds.values())
    dense = seconds.get("matmul_dense", 0) + seconds.get("matmul_vocab", 0)
    amx_total = total - dense + dense / speedup
    flops = result["step_tflop"] * 1e12
    return {
        "assumed_matmul_speedup": speedup,
        "step_s_here": total,
        "step_s_amx": amx_total,
        "share_of_peak_here": flops / total / (peak_gflops * 1e9),
        "share_of_amx_peak": flops / amx_total / (peak_gflops * speedup * 1e9),
        "non_matmul_share_amx": 1 - dense / speedup / amx_total,
    }


def cpu_kind(cpuinfo_path: str = "/proc/cpuinfo") -> dict:
    """Vendor, family and model of the CPU (one kind's figures are not another's)."""
    kind = {}
    keys = {"vendor_id": "vendor", "cpu family": "family", "model": "model"}
    try:
        with open(cpuinfo_path) as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in keys and keys[key.strip()] not in kind:
                    kind[keys[key.strip()]] = value.strip()
                if not line.strip():
                    break
    except OSError:
        pass
    return kind


def amx_figure(report: dict) -> dict | None:
    """On a CPU with AMX, the measured step's share of the same-run bf16 peak (issue #58's
    target: 75%); None elsewhere (there only ``amx_estimate`` says anything about AMX)."""
    if "amx_bf16" not in report["bf16_instructions"] or report["precision"] != "bfloat16":
        return None
    flops = report["step_tflop"] * 1e12
    step = report["step_s_untraced_median"]
    return {
        "step_s": step,
        "peak_gflops": report["matmul_peak_gflops"],
        "share_of_peak": flops / step / (report["matmul_peak_gflops"] * 1e9),
        "target": 0.75,
    }


def summary(report: dict) -> str:
    """The lines a reader wants from the JSON: non-matmul time, the share of the peak."""
    est = report["amx_estimate"]
    lines = [
        f"{report['cpu']} ({' '.join(f'{k} {v}' for k, v in report['cpu_kind'].items())};"
        f" bf16 instructions: "
        f"{', '.join(report['bf16_instructions']) or 'none'})",
        f"step {report['step_s_untraced_median']:.3f} s (traced {report['step_s_traced']:.3f} s),"
        f" non-matmul {report['non_matmul_s']:.3f} s of it (traced)",
        f"share of the same-run {report['precision']} matmul peak "
        f"({report['matmul_peak_gflops']:.0f} GFLOP/s): {est['share_of_peak_here']:.1%}",
    ]
    amx = report["amx"]
    if amx is not None:
        lines.append(
            f"AMX: {amx['share_of_peak']:.1%} of the same-run bf16 peak"
            f" (target {amx['target']:.0%})"
        )
    else:
        lines.append(
            f"no AMX here; estimate if the 2-D matmuls ran {est['assumed_matmul_speedup']:g}x "
            f"faster: {est['share_of_amx_peak']:.1%} of an AMX peak"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", choices=sorted(CONFIGS), default="base")
    parser.add_argument("--precision", choices=["float32", "bfloat16"], default="bfloat16")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--amx_speedup", type=float, default=3.0)
    parser.add_argument("--label", default="")
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    if args.precision == "bfloat16":
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    report = {
        "cpu": cpu_model(),
        "cpu_kind": cpu_kind(),
        "bf16_instructions": bf16_instructions(cpu_flags()),
        "cores_used": len(os.sched_getaffinity(0)),
        "load_average_start": os.getloadavg(),
        "label": args.label,
        "precision": args.precision,
    }
    dtype = tf.as_dtype(args.precision)
    peak = matmul_peak(dtype)
    result = profile(args.config, args.steps, args.warmup)
    peak_after = matmul_peak(dtype)
    best = max(peak["peak_gflops"], peak_after["peak_gflops"])
    report.update(
        result,
        matmul_peak_gflops=best,
        matmul_peak_before=peak,
        matmul_peak_after=peak_after,
        amx_estimate=amx_estimate(result, best, args.amx_speedup),
        load_average_end=os.getloadavg(),
    )
    report["amx"] = amx_figure(report)
    emit(report, args.out)
    print(summary(report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    register_builtins()
    sys.exit(main())
