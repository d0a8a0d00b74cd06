"""The opt-in padded buckets (``padded_bucket_step``): a few shapes, every example once, the
token budget kept; and 0 leaves T2T's batching as it was."""

import collections

import pytest

from t2t_repro.data import records
from t2t_repro.data.bucketing import padded_batching_scheme, padded_bucket_lengths
from t2t_repro.data.input_pipeline import EVAL, TRAIN, make_dataset
from t2t_repro.hparam import HParams, HParamsError
from t2t_repro.hparams_lib.checks import validate


def test_lengths_grow_by_the_step_rounded_up_to_multiples_of_8():
    # 8 x 1.25 = 10 -> 12, 15 -> 16, 20, 25 -> 28, 35 -> 36, 45 -> 48, 60, 75 > 64: stop at 64.
    assert padded_bucket_lengths(64, 1.25) == [8, 12, 16, 20, 28, 36, 48, 60, 64]
    assert padded_bucket_lengths(256, 2.0) == [8, 16, 32, 64, 128, 256]
    assert padded_bucket_lengths(64, 2.0, length_multiplier=2) == [16, 32, 64, 128]


def test_batch_sizes_keep_the_token_budget():
    scheme = padded_batching_scheme(1024, 64, 1.25)
    assert scheme["batch_sizes"] == [128, 85, 64, 51, 36, 28, 21, 17, 16]
    assert padded_batching_scheme(100, 0, 2.0)["lengths"][-1] == 100  # max_length 0: batch_size


@pytest.mark.parametrize("step", [1.0, 0.5, -2.0])
def test_a_step_of_one_or_less_is_refused(step):
    with pytest.raises(ValueError, match="padded_bucket_step must be > 1"):
        padded_bucket_lengths(64, step)
    with pytest.raises(HParamsError, match="padded_bucket_step=.* must be > 1"):
        validate(HParams(batch_size=64, padded_bucket_step=step))


def hparams(**overrides):
    values = dict(
        batch_size=64,
        max_length=32,
        min_length_bucket=8,
        length_bucket_step=1.1,
        batch_shuffle_size=0,
        min_length=0,
        padded_bucket_step=1.25,
    )
    values.update(overrides)
    return HParams(**values)


@pytest.fixture
def shards(tmp_path):
    """40 distinct examples: inputs of length i % 37 + 1, targets of length (3 i) % 29 + 1."""
    examples = [
        {"inputs": [i + 2] * (i % 37) + [1], "targets": [i + 3] * ((3 * i) % 29) + [1]}
        for i in range(40)
    ]
    for shard in range(2):
        path = tmp_path / records.shard_name("p", "train", shard, 2)
        records.write_records_atomically(
            str(path), (records.serialize_example(e) for e in examples[shard::2])
        )
    return str(tmp_path / "p-train-*"), examples


def rows(batches):
    """Every example in the batches, its padding stripped, as (inputs, targets) tuples."""
    return [
        (tuple(int(x) for x in i if x), tuple(int(x) for x in t if x))
        for b in batches
        for i, t in zip(b["inputs"].numpy(), b["targets"].numpy(), strict=True)
    ]


def as_row(example):
    return (tuple(example["inputs"]), tuple(example["targets"]))


def check_batches(batches, lengths, batch_size):
    for b in batches:
        width = b["inputs"].shape[1]
        assert b["targets"].shape[1] == width and width in lengths
        assert b["inputs"].shape[0] * width <= batch_size
        longest = max(max(len(i), len(t)) for i, t in rows([b]))
        # The smallest allowed length that holds the batch's longest example.
        assert width == min(length for length in lengths if length >= longest)


def test_eval_keeps_every_example_once_in_the_allowed_shapes(shards):
    pattern, examples = shards
    batches = list(make_dataset(pattern, EVAL, hparams(max_length=40)))
    assert collections.Counter(rows(batches)) == collections.Counter(map(as_row, examples))
    check_batches(batches, [8, 12, 16, 20, 28, 36, 40], 64)
    assert len({tuple(b["inputs"].shape) for b in batches}) > 1


def test_train_drops_only_the_long_examples(shards):
    pattern, examples = shards
    hp = hparams(max_length=24)
    batches = list(make_dataset(pattern, TRAIN, hp, seed=3, repeat=False))
    kept = [e for e in examples if max(len(e["inputs"]), len(e["targets"])) <= 24]
    assert collections.Counter(rows(batches)) == collections.Counter(map(as_row, kept))
    check_batches(batches, [8, 12, 16, 20, 24], 64)


def test_eval_examples_over_max_length_get_their_own_padding(shards):
    pattern, examples = shards
    batches = list(make_dataset(pattern, EVAL, hparams(max_length=16)))
    assert collections.Counter(rows(batches)) == collections.Counter(map(as_row, examples))
    widths = {b["inputs"].shape[1] for b in batches}
    assert {8, 16} <= widths and max(widths) == 37  # the longest example: 36 ids + EOS


def test_zero_step_is_t2t_batching(shards):
    pattern, _ = shards

    def batches(hp):
        return [
            {k: v.numpy().tolist() for k, v in b.items()}
            for b in make_dataset(pattern, TRAIN, hp, seed=5, repeat=False)
        ]

    without = {k: v for k, v in hparams().values().items() if k != "padded_bucket_step"}
    default = batches(HParams(**without))  # sets made before the hparam existed
    assert default == batches(hparams(padded_bucket_step=0.0))
    # T2T pads each feature to its own longest example in the batch.
    assert any(len(b["inputs"][0]) != len(b["targets"][0]) for b in default)


def test_a_run_saved_before_the_hparam_existed_resumes_at_its_default(tmp_path):
    import json

    from t2t_repro.commands.builtins import register_builtins
    from t2t_repro.hparams_lib.build import create_hparams
    from t2t_repro.training.output_dir import saved_changes, saved_hparams

    register_builtins()
    hp = create_hparams("transformer_tiny", input_vocab_size=100, target_vocab_size=100)
    old = {k: v for k, v in hp.values().items() if k != "padded_bucket_step"}
    (tmp_path / "hparams.json").write_text(json.dumps(old))
    saved = saved_hparams(str(tmp_path))
    assert saved_changes(saved, hp) == {}  # the default: the same experiment
    hp.set_hparam("padded_bucket_step", 1.25)  # a change a rerun names
    assert saved_changes(saved, hp) == {"padded_bucket_step": (None, 1.25)}
