"""What the scripts under bench/, recipes/ and tools/ share (the one module they share, so that no
script imports another): JSON on stdout and atomically to ``--out``, the CPU model, the trainer's
event files and checkpoints, the parsing decode-and-score step, and the peers' forced-steps
decoding model. Heavy imports stay inside the functions that need them."""

import json
import os
import re
import time

from t2t_repro import atomic_write

# ../shared/data/multi30k beside the checkout (README: Machines and data).
MULTI30K = os.path.join(
    os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "..", "shared", "data", "multi30k"
)


def write_text_atomically(path: str, text: str) -> None:
    """A report file (its directory created), written with t2t_repro's atomic write."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write.write_text_atomically(path, text)


def cpu_model() -> str:
    """The CPU's model name as ``lscpu`` shows it (from /proc/cpuinfo), for every figure."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def python_loop_s(results: dict) -> float | None:
    """A bench_suite report's Python-loop seconds: the mean of its start and end calibrations
    (the machine's speed phase, by which the suite's budget scales its total)."""
    loops = [
        (results.get(key) or {}).get("python_loop_s")
        for key in ("calibration_start", "calibration_end")
    ]
    loops = [float(loop) for loop in loops if loop]
    return sum(loops) / len(loops) if loops else None


def busy_and_total_ticks() -> tuple[int, int]:
    """The whole machine's busy and total CPU clock ticks since boot (/proc/stat): busy is
    user, nice, system, irq and softirq; idle and I/O wait are not, nor a VM's steal (another
    guest's), and guest time is already in user and nice."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = map(int, f.readline().split()[1:9])
    busy = user + nice + system + irq + softirq
    return busy, busy + idle + iowait + steal


def emit(report: dict, out: str = "") -> None:
    text = json.dumps(report, indent=2)
    print(text)
    if out:
        write_text_atomically(out, text)


def _events(log_dir: str):
    import glob

    import tensorflow as tf

    for path in sorted(glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))):
        yield from tf.compat.v1.train.summary_iterator(path)


Scalars = list[tuple[float, int, float]]


def _scalars_by_tag(log_dir: str, tags: tuple[str, ...]) -> dict[str, Scalars]:
    """One pass over ``log_dir``'s event files: ``(wall_time, step, value)`` per tag, by step."""
    import tensorflow as tf

    found: dict[str, Scalars] = {tag: [] for tag in tags}
    for event in _events(log_dir):
        for value in event.summary.value:
            if value.tag in found:
                found[value.tag].append(
                    (event.wall_time, event.step, float(tf.make_ndarray(value.tensor)))
                )
    return {tag: sorted(rows, key=lambda row: row[1]) for tag, rows in found.items()}


def event_scalars(log_dir: str, tag: str) -> Scalars:
    """``(wall_time, step, value)`` of every ``tag`` scalar in ``log_dir``'s event files, by
    step."""
    return _scalars_by_tag(log_dir, (tag,))[tag]


def first_event_time(log_dir: str) -> float | None:
    """Wall time of the first event (the file header, written when the trainer started)."""
    times = [event.wall_time for event in _events(log_dir)]
    return min(times) if times else None


def training_stats(train_dir: str) -> dict:
    """Steps reached and mean target tokens/s of a trainer run, from its event files."""
    scalars = _scalars_by_tag(train_dir, ("loss", "tokens_per_sec"))
    losses = scalars["loss"]
    rates = [value for _, _, value in scalars["tokens_per_sec"]]
    return {
        "steps": losses[-1][1] if losses else 0,
        "tokens_per_sec": sum(rates) / len(rates) if rates else 0.0,
    }


def checkpoints(output_dir: str) -> list[tuple[int, str]]:
    """``(step, prefix)`` of every ``ckpt-<step>.index`` in ``output_dir``, by step."""
    found = []
    for name in os.listdir(output_dir):
        match = re.fullmatch(r"ckpt-(\d+)\.index", name)
        if match:
            found.append((int(match.group(1)), os.path.join(output_dir, name[: -len(".index")])))
    return sorted(found)


def training_minutes(output_dir: str, steps: list[int]) -> list[float | None]:
    """Minutes from the trainer's start (its first event) to the last ``loss`` event at or before
    each step (the trainer logs every --log_step_count_steps, so this is at most one interval
    early)."""
    losses = event_scalars(output_dir, "loss")
    start = first_event_time(output_dir)
    if not losses or start is None:
        return [None] * len(steps)
    out = []
    for step in steps:
        before = [wall for wall, s, _ in losses if s <= step]
        out.append((max(before) - start) / 60 if before else None)
    return out


# The parsing recipe's two decodes (+ the problem's defaults: tree-constrained, beam 21, alpha 0.3).
PARSE_DECODES = {"greedy": "beam_size=1,batch_size=64", "beam21": "batch_size=16"}


def decode_and_score(
    problem: str,
    data: str,
    train: str,
    checkpoint: str,
    split: str,
    name: str,
    timings: dict,
    label: str = "",
) -> dict:
    """t2t-decoder on a split's sentences, then t2t-evalb strict and --align_punct.
    ``checkpoint`` may name several, comma-separated (an ensemble; ``label`` names it)."""
    from t2t_repro.workflow import run_tool

    words = os.path.join(data, f"{problem}.{split}.words")
    gold = os.path.join(data, f"{problem}.{split}.trees")
    label = label or os.path.basename(checkpoint)
    decodes = os.path.join(train, f"decode_{split}.{name}.{label}.linearized")
    start = time.time()
    run_tool(
        "t2t-decoder",
        f"--problem={problem}",
        f"--data_dir={data}",
        f"--output_dir={train}",
        f"--checkpoint_path={checkpoint}",
        f"--decode_hparams={PARSE_DECODES[name]}",
        f"--decode_from_file={words}",
        f"--decode_to_file={decodes}",
    )
    timings[f"decode_{split}_{name}_{label}_s"] = time.time() - start
    scored = {"file": decodes, "decode_hparams": PARSE_DECODES[name], "checkpoint": checkpoint}
    for scoring, extra in (("evalb", ()), ("evalb_align_punct", ("--align_punct",))):
        scored[scoring] = json.loads(
            run_tool(
                "t2t-evalb",
                f"--gold={gold}",
                f"--test={decodes}",
                "--linearized",
                "--json",
                *extra,
                capture=True,
            )
        )
    return scored


# The peers' forced-steps decoding work (bench_decode_forced.py, bench_decode_step_profile.py):
# config -> (hparams set, overrides, vocabulary size).
CONFIGS = {
    "small": (
        "transformer_base_v1",
        "hidden_size=256,filter_size=1024,num_heads=4,num_hidden_layers=2",
        8192,
    ),
    "base": ("transformer_base_v1", "", 32768),
}
NEVER_EMITTED = -1


def peer_sources(sentences: int, length: int, vocab: int):
    """The peers' ``make_sources``: random ids 3..V-1, the last column EOS (1)."""
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.integers(3, vocab, size=(sentences, length)).astype(np.int32)
    x[:, -1] = 1
    return x


def build_model(config: str, precision: str):
    """A random-weight transformer of ``CONFIGS[config]`` built under the decoding policy."""
    from t2t_repro import registry
    from t2t_repro.decoding.precision import decoding_policy
    from t2t_repro.hparams_lib.build import create_hparams

    hparams_set, overrides, vocab = CONFIGS[config]
    hp = create_hparams(hparams_set, overrides, input_vocab_size=vocab)
    with decoding_policy(precision):  # bfloat16: variables float32, compute in bf16
        model = registry.model("transformer")(hp)
        model.build_for()
    return model, vocab


def build_training(config: str):
    """``(hparams, model, optimizer, vocab)`` of ``CONFIGS[config]`` for the peers' training work
    (bench_train_vs_peers.py, bench_train_step_profile.py), variables created."""
    from t2t_repro import registry
    from t2t_repro.hparams_lib.build import create_hparams
    from t2t_repro.optimizers import make_optimizer

    hparams_set, overrides, vocab = CONFIGS[config]
    hp = create_hparams(hparams_set, overrides, input_vocab_size=vocab)
    model = registry.model("transformer")(hp)
    model.build()
    optimizer = make_optimizer(hp)
    optimizer.build(model.trainable_variables)
    return hp, model, optimizer, vocab


# The dense matmul peak of this machine in one dtype, through TensorFlow (oneDNN and XLA): the
# reference of every MFU figure, measured in the same process as the step it divides so that
# the machine's drift hits both alike (fp32 peak for fp32 runs, bf16 peak for bf16 runs).
PEAK_SIZES = (2048, 4096)


def matmul_gflops(n: int, dtype, xla: bool, repeats: int = 4) -> float:
    """Best GFLOP/s of an [n, n] @ [n, n] matmul over ``repeats`` calls (after a warm-up)."""
    import tensorflow as tf

    a = tf.cast(tf.random.stateless_normal([n, n], seed=[1, 2]), dtype)
    b = tf.cast(tf.random.stateless_normal([n, n], seed=[3, 4]), dtype)
    f = tf.function(tf.matmul, jit_compile=xla)
    f(a, b)[0, 0].numpy()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        f(a, b)[0, 0].numpy()  # Reading one element waits for the product.
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best / 1e9


def matmul_peak(dtype, sizes: tuple[int, ...] = PEAK_SIZES) -> dict:
    """``{"oneDNN": {n: GFLOP/s}, "XLA": {...}, "peak_gflops": best of all}`` for ``dtype``."""
    by_mode = {
        mode: {str(n): round(matmul_gflops(n, dtype, xla), 1) for n in sizes}
        for mode, xla in (("oneDNN", False), ("XLA", True))
    }
    peak = max(g for per_size in by_mode.values() for g in per_size.values())
    return {"dtype": dtype.name, **by_mode, "peak_gflops": peak}


def peer_batch(rng, batch: int, length: int, vocab: int):
    """The peers' training batch (``../shared/bench``, ``make_batch``): ids in [3, V), lengths
    uniform in [3L/4, L], EOS last, PAD after."""
    import numpy as np

    lengths = rng.integers(length * 3 // 4, length + 1, size=batch)
    ids = rng.integers(3, vocab, size=(batch, length))
    ids[np.arange(length)[None, :] >= lengths[:, None]] = 0
    ids[np.arange(batch), lengths - 1] = 1
    return ids
