"""Run as a subprocess (logical CPUs must be configured before TF starts): one update of the
same global batch on 1 device, on 2 mirrored devices (also loss-scaled), and as 2 accumulated
half-batches; the all-reduces in the traced mirrored update; the dropout masks of 2 replicas;
and T2T's Adafactor and multistep_adam on 1 and 2 mirrored devices (``optimizer_ratios``).
Every update here is the decoder alone with no layer (a language model: the embedding and the
final layer norm, 3 weights; ``main``'s six Adam updates had one layer, 16 weights, and the
check took ~20 core-s, not ~13: AMD EPYC Zen 3): what is checked is how the train step splits,
reduces and normalises a global batch, which is the same for every weight; layers (the
encoder-decoder's) are checked across two replicas by ``multiworker_check``, and --xla's
compiled passes with the decoder's one layer here.
Prints JSON with the losses, the max weight difference from the 1-device update and the rest.
``results()`` runs it once for the whole test run (test_trainer and test_optimizers_training
read the same run). ``multiworker_check`` reuses the batches and ``run`` for the multi-worker
case."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.hparam import join_overrides
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.optimizers import make_optimizer
from t2t_repro.training.cluster.distribution import split_cpu
from t2t_repro.training.loop.train_step import TrainMetrics, make_train_loop
from tests.tools import NO_DROPOUT, TINY_MODEL, ZERO_LAYERS

# No dropout; Adam epsilon 1 makes the first step ~ lr * gradient (linear), so weight
# differences measure gradient differences instead of Adam's sign(g) on tiny gradients.
OVERRIDES = (
    f"{TINY_MODEL},{NO_DROPOUT},optimizer_adam_epsilon=1.0,"
    "learning_rate_schedule=constant,learning_rate_constant=0.01"
)
rng = np.random.default_rng(0)
inputs = rng.integers(2, 40, size=[4, 7]).astype(np.int32)
targets = rng.integers(2, 40, size=[4, 6]).astype(np.int32)
# Different real target lengths (replica 1's half has fewer tokens), so the normalisation by
# the global token count matters. The inputs' padding is read by the encoder-decoder only
# (multiworker_check); the language model here reads no inputs.
inputs[1, 4:] = 0
targets[2, 2:] = 0
halves = [
    {"inputs": inputs[:2], "targets": targets[:2]},
    {"inputs": inputs[2:], "targets": targets[2:]},
]
full = {"inputs": inputs, "targets": targets}


# The ops of a cross-device sum: the collective kernels (CPU ring, multi-worker) and NCCL's.
ALL_REDUCE_OPS = ("CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3", "NcclAllReduce")


def all_reduces(concrete_function) -> int:
    """All-reduce ops in a traced function and every function it calls (its library)."""
    graph = concrete_function.graph.as_graph_def()
    nodes = list(graph.node) + [n for f in graph.library.function for n in f.node_def]
    return sum(n.op in ALL_REDUCE_OPS for n in nodes)


# Clips the first update's gradient (global norm ~0.2) to a quarter: the clip must act on the
# global gradient, once, whatever the number of replicas.
CLIP = ",clip_grad_norm=0.05"


def run(
    strategy,
    batches_fn,
    accumulate,
    steps=1,
    loss_scale=False,
    counts=None,
    overrides="",
    has_input=False,
    jit_compile=False,
):
    """``counts``: a dict that gets the all-reduce ops per replica of the traced update;
    ``has_input``: the encoder-decoder, else the decoder alone (a language model; the
    batches' inputs unread); ``jit_compile``: --xla's step."""
    register_builtins()  # Here, not at import: the logical CPUs are configured first.
    hp = create_hparams(
        "transformer_test",
        join_overrides(OVERRIDES, overrides),
        input_vocab_size=40,
        has_input=has_input,
    )
    with strategy.scope():
        model = registry.model("transformer")(hp)
        model.build()
        for i, w in enumerate(model.weights):  # Identical start for every run.
            w.assign(np.random.default_rng(i).normal(0, 0.1, w.shape).astype(np.float32))
        optimizer = make_optimizer(hp)
        if loss_scale:
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        optimizer.build(model.trainable_variables)
        metrics = TrainMetrics()
    loop = make_train_loop(strategy, model, optimizer, hp, metrics, accumulate, jit_compile)
    iterator = batches_fn()
    loop(iterator, tf.constant(steps))
    if counts is not None:
        traced = loop.get_concrete_function(iterator, tf.constant(steps))
        counts["all_reduces"] = all_reduces(traced) / strategy.num_replicas_in_sync
    stats = metrics.read()
    return stats["loss_sum"], [w.numpy() for w in model.weights]


def dataset(batches):
    return tf.data.Dataset.from_tensor_slices(
        {k: np.stack([b[k] for b in batches]) for k in ("inputs", "targets")}
    ).repeat()


def diff(a, b) -> float:
    return float(max(np.abs(x - y).max() for x, y in zip(a, b, strict=True)))


def initial_weights(weights):
    return [
        np.random.default_rng(i).normal(0, 0.1, w.shape).astype(np.float32)
        for i, w in enumerate(weights)
    ]


def feed_check(strategy) -> dict:
    """The trainer's checkpointable ReplicaFeed over a bucketed, shuffled pipeline: replicas
    get what distribute_datasets_from_function gives them, and a restored iterator state
    continues with exactly the batches that followed the save."""
    import tempfile

    from t2t_repro.data import records
    from t2t_repro.data.input_pipeline import TRAIN, make_dataset
    from t2t_repro.hparam import HParams
    from t2t_repro.training.loop.input_feed import ReplicaFeed

    hp = HParams(
        batch_size=40,
        max_length=20,
        min_length_bucket=4,
        length_bucket_step=1.5,
        batch_shuffle_size=4,
        min_length=0,
    )
    with tempfile.TemporaryDirectory() as tmp:
        examples = [
            {"inputs": [2 + i % 7] * (1 + i % 13) + [1], "targets": [3] * (i % 5) + [1]}
            for i in range(300)
        ]
        for shard in range(3):
            records.write_records_atomically(
                f"{tmp}/p-train-{shard}", (records.serialize_example(e) for e in examples[shard::3])
            )
        make = lambda ctx=None: make_dataset(f"{tmp}/p-train-*", TRAIN, hp, seed=5)  # noqa: E731

        @tf.function
        def step(feed):  # as the train loop consumes it: inside a tf.function
            return strategy.run(lambda b: tf.identity(b["inputs"]), args=(next(feed),))

        def take(feed, n):
            return [
                [x.numpy().tolist() for x in strategy.experimental_local_results(step(feed))]
                for _ in range(n)
            ]

        reference = iter(strategy.distribute_datasets_from_function(make))
        expected = [
            [
                x.numpy().tolist()
                for x in strategy.experimental_local_results(next(reference)["inputs"])
            ]
            for _ in range(10)
        ]
        feed = ReplicaFeed(strategy, make())
        same_as_distributed = take(feed, 4) == expected[:4]
        path = tf.train.Checkpoint(input_iterator=feed.iterator).write(f"{tmp}/ckpt")
        after_save = take(feed, 6)
        restored = ReplicaFeed(strategy, make())
        tf.train.Checkpoint(input_iterator=restored.iterator).read(path).assert_consumed()
        return {
            "feed_same_as_distributed": same_as_distributed and after_save == expected[4:],
            "feed_resumes_exactly": take(restored, 6) == after_save,
        }


def dropout_check(single, mirrored) -> dict:
    """Masks of 3 successive dropout calls: one device, then each of 2 replicas, then the
    replicas again from the restored generator state (what resuming from a checkpoint does)."""
    from t2t_repro.layers.dropout import Dropout

    def masks(strategy, layer):
        draw = tf.function(lambda: strategy.run(lambda: layer(tf.ones([4096]), training=True)))
        return [
            [x.numpy() != 0 for x in strategy.experimental_local_results(draw())] for _ in "abc"
        ]

    with single.scope():
        one = masks(single, Dropout(0.5, seed=7))
    with mirrored.scope():
        layer = Dropout(0.5, seed=7)
        start = layer.seed_generator.state.numpy()
        two = masks(mirrored, layer)
        layer.seed_generator.state.assign(start)
        again = masks(mirrored, layer)
    replica_1 = [step[1] for step in two]
    return {
        "replica0_is_one_device": all(
            np.array_equal(a[0], b[0]) for a, b in zip(one, two, strict=True)
        ),
        "masks_differ": [float((step[0] != step[1]).mean()) for step in two],
        "replica1_steps_differ": not np.array_equal(replica_1[0], replica_1[1]),
        "replica1_kept": [float(m.mean()) for m in replica_1],
        "masks_resume_exactly": all(
            np.array_equal(x, y)
            for a, b in zip(two, again, strict=True)
            for x, y in zip(a, b, strict=True)
        ),
    }


def optimizer_ratios(single, mirrored) -> dict:
    """T2T's Adafactor and multistep_adam (t2t_repro/optimizers/), with T2T's weight decay,
    weight and gradient noise and clipping: per optimizer, the max weight difference of the
    2-replica update (plain, loss-scaled) from the 1-device one, over the update itself."""
    single_batches = lambda: iter(single.experimental_distribute_dataset(dataset([full])))  # noqa: E731
    # Replica 0 gets the first half, replica 1 the second: one micro-step is the full batch.
    mirrored_batches = lambda: iter(  # noqa: E731
        mirrored.distribute_datasets_from_function(lambda ctx: dataset(halves))
    )
    ratios = {}
    for name, accumulate in (("Adafactor", 1), ("multistep_adam", 2)):
        # No layer (tests/tools.py): the embedding (in 2 of T2T's row blocks, not its 16:
        # Adafactor's factored moments, block by block, each block's ops traced on each
        # replica; its three runs ~4.2 -> ~3.0 CPU-s) and the final layer norm (its full
        # moments) are the weights updated, as in main's Adam updates; multiworker_check's
        # encoder-decoder has layers. Adafactor's mirrored update: ~2.0 -> ~0.6 CPU-s with no
        # layer (AMD EPYC Zen 4).
        extra = (
            f",{ZERO_LAYERS},optimizer={name},weight_decay=0.01,clip_grad_norm=0.05,"
            "weight_noise=1.0,symbol_modality_num_shards=2"
        )
        if accumulate == 1:  # (2 micro-steps draw 2 gradient noises: not the 1-step update)
            extra += ",grad_noise_scale=0.001"
        one_step = f"{extra},optimizer_multistep_accumulate_steps=1"
        _, one = run(single, single_batches, 1, overrides=one_step)
        update = diff(one, initial_weights(one))
        # multistep_adam: two micro-steps of the same global batch, each reduced on its own,
        # average to the one-step update.
        extra += f",optimizer_multistep_accumulate_steps={accumulate}"
        _, two = run(mirrored, mirrored_batches, accumulate, overrides=extra)
        _, scaled = run(mirrored, mirrored_batches, accumulate, loss_scale=True, overrides=extra)
        ratios[name] = [diff(one, two) / update, diff(one, scaled) / update]
    return ratios


def results() -> dict:
    """This check's JSON, from one run for the whole test run, whichever test process asks
    first (``tests/shared_build.py``): its 11 traced updates are the suite's costliest check."""
    from tests.shared_build import build_once
    from tests.tools import PYTHON, ROOT

    def build(path):
        out = subprocess.run(
            [*PYTHON, "-m", "tests.distributed_check"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONUNBUFFERED="1"),
            timeout=1200,
        )
        if out.returncode != 0:
            raise RuntimeError(f"tests.distributed_check failed:\n{out.stderr[-3000:]}")
        (path / "result.json").write_text(out.stdout.strip().splitlines()[-1])

    return json.loads((build_once("distributed_check", build) / "result.json").read_text())


def main():
    # Grappler's graph rewrites keep a graph's meaning and were a third of a mirrored update's
    # CPU here; without them the 2-replica updates still agree with the one-device ones to
    # float32 rounding (at most ~2e-4 of the update, against the 1e-3 the tests allow). The
    # all-reduces are counted in the traced graph, before any rewrite.
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    devices = split_cpu(2)
    single = tf.distribute.OneDeviceStrategy(devices[0])
    single_batches = lambda: iter(single.experimental_distribute_dataset(dataset([full])))  # noqa: E731
    plain, clipped = ZERO_LAYERS, ZERO_LAYERS + CLIP  # no layer: the module's docstring
    loss_1, weights_1 = run(single, single_batches, 1, overrides=plain)
    _, weights_clipped = run(single, single_batches, 1, overrides=clipped)
    mirrored = tf.distribute.MirroredStrategy(devices)
    # One host = one input pipeline; its successive elements go to replicas 0 and 1.
    mirrored_batches = lambda: iter(  # noqa: E731
        mirrored.distribute_datasets_from_function(lambda ctx: dataset(halves))
    )
    counts, scaled_counts = {}, {}
    loss_2, weights_2 = run(mirrored, mirrored_batches, 1, counts=counts, overrides=plain)
    loss_scaled, weights_scaled = run(
        mirrored, mirrored_batches, 1, loss_scale=True, counts=scaled_counts, overrides=clipped
    )
    # --xla on replicas synchronised by merge_call: the passes compiled, the update outside;
    # with the layer (TINY_MODEL's one, against its own 1-device update): a layer's compiled
    # passes are checked across replicas nowhere else (multiworker_check has no --xla)
    loss_1_layer, weights_1_layer = run(single, single_batches, 1)
    loss_xla, weights_xla = run(mirrored, mirrored_batches, 1, jit_compile=True)
    loss_acc, weights_acc = run(
        single,
        lambda: iter(single.experimental_distribute_dataset(dataset(halves))),
        2,
        overrides=plain,
    )
    print(
        json.dumps(
            {
                "loss_1": loss_1,
                "loss_mirrored": loss_2,
                "loss_accumulated": loss_acc,
                "loss_mirrored_loss_scaled": loss_scaled,
                "max_diff_mirrored": diff(weights_1, weights_2),
                "loss_1_layer": loss_1_layer,
                "loss_mirrored_xla": loss_xla,
                "max_diff_mirrored_xla": diff(weights_1_layer, weights_xla),
                "max_update_1_layer": diff(weights_1_layer, initial_weights(weights_1_layer)),
                "max_diff_mirrored_loss_scaled_clipped": diff(weights_clipped, weights_scaled),
                "max_update_clipped": diff(weights_clipped, initial_weights(weights_clipped)),
                "all_reduces_per_update": counts["all_reduces"],
                "all_reduces_per_update_loss_scaled": scaled_counts["all_reduces"],
                "max_diff_accumulated": diff(weights_1, weights_acc),
                "max_update": diff(weights_1, initial_weights(weights_1)),
                **feed_check(mirrored),
                **dropout_check(single, mirrored),
                "optimizer_ratios": optimizer_ratios(single, mirrored),
            }
        )
    )


if __name__ == "__main__":
    main()
    sys.exit(0)
