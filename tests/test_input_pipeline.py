"""Bucketing scheme against T2T's values, and the pipeline's batching behaviour."""

import pytest
import tensorflow as tf

from t2t_repro.data import records
from t2t_repro.data.bucketing import batching_scheme
from t2t_repro.data.input_pipeline import EVAL, TRAIN, make_dataset, read_records
from t2t_repro.data.text_files import DataError
from t2t_repro.hparam import HParams, HParamsError

# What tensor2tensor/utils/data_reader.py, batching_scheme gives for batch_size=4096,
# max_length=256.
BOUNDARIES_4096 = [
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
    16,
    17,
    18,
    19,
    20,
    22,
    24,
    26,
    28,
    30,
    33,
    36,
    39,
    42,
    46,
    50,
    55,
    60,
    66,
    72,
    79,
    86,
    94,
    103,
    113,
    124,
    136,
    149,
    163,
    179,
    196,
    215,
    236,
]
SIZES_4096 = [
    420,
    420,
    315,
    315,
    315,
    315,
    252,
    252,
    252,
    210,
    210,
    210,
    180,
    180,
    140,
    140,
    140,
    126,
    105,
    105,
    105,
    90,
    84,
    70,
    70,
    63,
    60,
    45,
    45,
    45,
    42,
    36,
    36,
    30,
    30,
    21,
    21,
    21,
    20,
    18,
    15,
    15,
]


def test_scheme_4096_matches_t2t():
    scheme = batching_scheme(4096, 256)
    assert scheme["boundaries"] == BOUNDARIES_4096
    assert scheme["batch_sizes"] == SIZES_4096
    assert scheme["window_size"] == 1260


@pytest.mark.parametrize(
    "batch_size,window,head,tail",
    [
        (2048, 720, [240, 180, 180, 180, 144], [9, 8, 8]),
        (1024, 360, [120, 90], [4, 4]),
    ],
)
def test_scheme_smaller_budgets_match_t2t(batch_size, window, head, tail):
    scheme = batching_scheme(batch_size, 256)
    assert scheme["window_size"] == window
    assert (
        scheme["batch_sizes"][: len(head)] == head and scheme["batch_sizes"][-len(tail) :] == tail
    )


def test_shard_multiplier_scales_batches():
    assert batching_scheme(4096, 256, shard_multiplier=8)["batch_sizes"][0] == 8 * 420


def hparams(batch_size=64, max_length=20):
    return HParams(
        batch_size=batch_size,
        max_length=max_length,
        min_length_bucket=8,
        length_bucket_step=1.1,
        batch_shuffle_size=0,
        min_length=0,
    )


@pytest.fixture
def shards(tmp_path):
    """30 examples: example i has inputs of length i+1 and targets of length i//2+1."""
    examples = [{"inputs": [i + 2] * i + [1], "targets": [3] * (i // 2) + [1]} for i in range(30)]
    for shard in range(2):
        path = tmp_path / records.shard_name("p", "train", shard, 2)
        records.write_records_atomically(
            str(path), (records.serialize_example(e) for e in examples[shard::2])
        )
    return str(tmp_path / "p-train-*"), examples


def all_batches(ds):
    return [{k: v.numpy() for k, v in b.items()} for b in ds]


def test_eval_sees_every_example_once_and_pads_features_separately(shards):
    pattern, examples = shards
    batches = all_batches(make_dataset(pattern, EVAL, hparams()))
    firsts = sorted(int(b) for batch in batches for b in batch["inputs"][:, 0])
    assert firsts == sorted(e["inputs"][0] for e in examples)
    for batch in batches:
        lengths = (batch["inputs"] > 0).sum(1)
        assert batch["inputs"].shape[1] == lengths.max()  # Padded to the batch, not a bucket.
        assert batch["targets"].shape[1] == (batch["targets"] > 0).sum(1).max()


def test_eval_drops_short_examples_and_long_ones_only_when_asked(shards):
    """T2T's data_reader.input_fn (gpu_valid_size): min_length holds in eval too;
    max_length only with eval_drop_long_sequences."""
    pattern, examples = shards
    length = {e["inputs"][0]: max(len(e["inputs"]), len(e["targets"])) for e in examples}
    for drop_long, kept in ((False, range(5, 31)), (True, range(5, 21))):
        hp = hparams(max_length=20)
        hp.set_hparam("min_length", 5)
        hp.add_hparam("eval_drop_long_sequences", drop_long)
        batches = all_batches(make_dataset(pattern, EVAL, hp))
        seen = sorted(length[int(b)] for batch in batches for b in batch["inputs"][:, 0])
        assert seen == list(kept)


def test_a_problems_max_length_filters_and_the_hparams_size_the_buckets(shards):
    """T2T's data_reader.input_fn: Problem.max_length (here 40) keeps examples up to it, the
    buckets come from hparams_to_batching_scheme (max_length 20): examples past 20 share
    batches of that scheme's last size, not of a scheme up to 40 (one row each)."""
    pattern, _ = shards
    hp = hparams(batch_size=64, max_length=20)
    batches = all_batches(make_dataset(pattern, TRAIN, hp, seed=3, repeat=False, max_length=40))
    rows = [len(b["inputs"]) for b in batches if b["inputs"].shape[1] > 20]
    assert sum(len(b["inputs"]) for b in batches) == 30  # every length 1..30 kept
    last = batching_scheme(64, 20, 8, 1.1)["batch_sizes"][-1]
    assert max(rows) == last > 1, rows


def test_a_fixed_batch_is_the_steps_examples_split_over_the_replicas(shards):
    """use_fixed_batch_size: T2T's batch_size counts the step's examples, which
    T2TModel._shard_features splits over the datashards (tf.split: they must divide it)."""
    pattern, _ = shards
    hp = hparams(batch_size=4)
    hp.add_hparam("use_fixed_batch_size", True)
    two = tf.distribute.InputContext(num_input_pipelines=1, num_replicas_in_sync=2)
    batches = all_batches(make_dataset(pattern, EVAL, hp, input_context=two))
    assert [len(b["inputs"]) for b in batches] == [2] * 15  # 30 examples, 2 a replica
    hp.set_hparam("batch_size", 5)
    with pytest.raises(HParamsError, match="give a multiple of 2"):
        make_dataset(pattern, EVAL, hp, input_context=two)


def test_one_hosts_training_pipeline_knows_its_replicas():
    """On one host the training pipeline feeds every replica (input_feed.positioned_feed):
    it is told how many, so a fixed batch is split over them in training as in eval."""
    from types import SimpleNamespace

    from t2t_repro.training.loop.input_feed import positioned_feed

    contexts = []

    def dataset_fn(ctx=None):
        contexts.append(ctx)
        return tf.data.Dataset.range(3)

    strategy = SimpleNamespace(num_replicas_in_sync=2)
    ckpt = SimpleNamespace(track_input=lambda iterator: None, restored=None)
    positioned_feed(strategy, ckpt, SimpleNamespace(workers=1), dataset_fn, 0)
    [ctx] = contexts
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (1, 0, 2)


def test_min_length_above_max_length_is_refused_as_t2t_refuses_it():
    from t2t_repro.hparams_lib.checks import validate

    hp = hparams(batch_size=64, max_length=20)
    hp.set_hparam("min_length", 21)
    with pytest.raises(HParamsError, match="min_length=21 is above max_length"):
        validate(hp)


def test_train_drops_long_examples_and_respects_token_budget(shards):
    pattern, _ = shards
    hp = hparams(batch_size=64, max_length=20)
    batches = all_batches(make_dataset(pattern, TRAIN, hp, seed=3, repeat=False))
    lengths = [
        int(max(len(r[r > 0]), len(t[t > 0])))
        for b in batches
        for r, t in zip(b["inputs"], b["targets"], strict=True)
    ]
    assert lengths and max(lengths) <= 20 and len(lengths) == 20  # lengths 1..20 kept
    for b in batches:
        assert b["inputs"].shape[0] * max(b["inputs"].shape[1], b["targets"].shape[1]) <= 64


def test_seeded_train_order_is_deterministic(shards):
    pattern, _ = shards
    a = all_batches(make_dataset(pattern, TRAIN, hparams(), seed=5, repeat=False))
    b = all_batches(make_dataset(pattern, TRAIN, hparams(), seed=5, repeat=False))
    assert [x["inputs"].tolist() for x in a] == [y["inputs"].tolist() for y in b]


def test_two_input_pipelines_get_disjoint_shards(shards):
    pattern, _ = shards
    seen = []
    for pipeline in range(2):
        ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=pipeline)
        ds = make_dataset(pattern, EVAL, hparams(), input_context=ctx)
        seen.append({int(x) for b in all_batches(ds) for x in b["inputs"][:, 0]})
    assert seen[0] and seen[1] and not seen[0] & seen[1] and len(seen[0] | seen[1]) == 30


@pytest.mark.parametrize("files", [2, 4, 6])  # 2 or 4 on 3 workers: by record; 6: by file
def test_three_workers_read_each_training_record_once_per_epoch(tmp_path, files):
    """#36: the multiset over 3 workers is the unsharded data's, in one epoch, and no worker
    reads more than a third (rounded up) of it, even with files of uneven sizes."""
    written = []
    for f in range(files):
        path = str(tmp_path / records.shard_name("p", "train", f, files))
        shard = [f"{f}-{i}".encode() for i in range(2 + 3 * f)]  # 2, 5, 8, ... records
        with tf.io.TFRecordWriter(path) as writer:
            for record in shard:
                writer.write(record)
        written.append(path)
    epoch = [bytes(r) for r in read_records(written, True).as_numpy_iterator()]
    per_worker = [
        [
            bytes(r)
            for r in read_records(
                written, True, tf.distribute.InputContext(3, worker, 3), seed=11
            ).as_numpy_iterator()
        ]
        for worker in range(3)
    ]
    assert sorted(sum(per_worker, [])) == sorted(epoch) and len(set(epoch)) == len(epoch)
    if files != 6:  # dealt by record: every worker within one record of a third
        assert max(map(len, per_worker)) - min(map(len, per_worker)) <= 1, per_worker
    else:  # two whole files each
        assert sorted(len({r.split(b"-")[0] for r in w}) for w in per_worker) == [2, 2, 2]


def test_missing_files_say_run_datagen(tmp_path):
    with pytest.raises(DataError, match="t2t-datagen"):
        make_dataset(str(tmp_path / "nothing-*"), TRAIN, hparams())


def test_a_corrupt_shard_is_named(shards, tmp_path):
    from t2t_repro.data.records import find_corrupt_record

    pattern, _ = shards
    files = sorted(str(p) for p in tmp_path.glob("p-train-*"))
    assert find_corrupt_record(files) is None
    raw = bytearray(open(files[1], "rb").read())
    raw[40] ^= 0xFF
    open(files[1], "wb").write(bytes(raw))
    where = find_corrupt_record(files)
    assert where.startswith(files[1] + ": ") and "\n" not in where


def test_eval_reads_its_files_one_after_another_as_t2t(tmp_path):
    """T2T's Problem.dataset interleaves files only when it shuffles them (training); eval
    reads them in order, so --eval_steps cuts the last files, not a round-robin of all."""
    written = []
    for f in range(3):
        path = str(tmp_path / records.shard_name("p", "dev", f, 3))
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(4):
                writer.write(f"{f}-{i}".encode())
        written.append(path)
    order = [bytes(r).decode() for r in read_records(written, False).as_numpy_iterator()]
    assert order == [f"{f}-{i}" for f in range(3) for i in range(4)]
