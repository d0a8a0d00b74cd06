"""t2t-decoder's sampling (num_samples, delimiter, --random_seed) and --score_file, run as a
user does, against the eval loss, the dev decodes and the exported model."""

import math
import types

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.commands import decoder
from tests.model_utils import shared_toy_checkpoint

# Each test compares our own computations, run alike in this process (the decoder's scores
# with the eval loss; the decoder's samples with the dev decodes' and the export's): without
# Grappler (tests/grappler.py).
pytestmark = pytest.mark.usefixtures("without_grappler")

SAMPLING = "--hparams=sampling_method=random,sampling_temp=1.0"
PAIRS = [
    "the dog sees a cat .\tder hund sieht eine katze .",
    "many cats run .\tviele katzen laufen .",
    "a cat .\teine katze",
    "the dog sees the dog sees the dog .\tder hund .",
]
BAD = [
    (b"no tab in this line", "no tab"),
    (b"one\ttab\ttoo many", "2 tabs"),
    (b"   \tan empty source", "empty source"),
    (b"an empty target\t  ", "empty target"),
    (b"bad \xff bytes\tok", "not valid UTF-8"),
    (b"", "no tab"),
]


@pytest.fixture(scope="module")
def toy():
    """The run's one toy checkpoint (tests/model_utils.py): the tests only read it."""
    return shared_toy_checkpoint()


def flags(root, *extra):
    return [
        "--problem=translate_toy",
        f"--data_dir={root / 'data'}",
        f"--output_dir={root / 'train'}",
        *extra,
    ]


def eval_token_sum(root, pairs: list[str]) -> tuple[float, list[int]]:
    """The eval loss's cross-entropy sum over ``pairs`` (the trainer's eval code on a
    dataset of them) and each target's token count."""
    from t2t_repro import registry
    from t2t_repro.checkpoints.loading import load_trained_model
    from t2t_repro.text_encoding.reserved_tokens import EOS_ID
    from t2t_repro.training.loop.evaluation import evaluate, make_eval_fn

    model = load_trained_model(
        str(root / "train"), problem_name="translate_toy", data_dir=str(root / "data")
    ).model
    encoders = registry.problem("translate_toy").get_encoders(str(root / "data"))
    rows = [
        [
            encoders[k].encode(side) + [EOS_ID]
            for k, side in zip(("inputs", "targets"), p.split("\t"), strict=True)
        ]
        for p in pairs
    ]

    def padded(column):
        ids = [r[column] for r in rows]
        out = np.zeros([len(ids), max(map(len, ids))], np.int32)
        for i, r in enumerate(ids):
            out[i, : len(r)] = r
        return out

    strategy = tf.distribute.get_strategy()
    data = tf.data.Dataset.from_tensor_slices({"inputs": padded(0), "targets": padded(1)})
    result = evaluate(
        make_eval_fn(strategy, model), strategy.experimental_distribute_dataset(data.batch(3))
    )
    # The token-weighted cross entropy (the reported loss is the mean of the batches' own)
    return -result["neg_log_perplexity"] * result["eval_tokens"], [len(r[1]) for r in rows]


def test_score_file_gives_the_eval_loss_of_each_pair(toy, tmp_path, capsys):
    pairs = tmp_path / "pairs.tsv"
    raw = [p.encode() for p in PAIRS]
    lines = [raw[0], BAD[0][0], raw[1], *[b for b, _ in BAD[1:]], raw[2], raw[3]]
    pairs.write_bytes(b"\n".join(lines) + b"\n")
    scores = {}
    for kind in ("log_prob", "loss"):
        out = tmp_path / f"{kind}.txt"
        argv = flags(
            toy, f"--score_file={pairs}", f"--decode_to_file={out}", f"--score_type={kind}"
        )
        assert decoder.main([*argv, "--decode_hparams=batch_size=2"]) == 0
        err = capsys.readouterr().err
        written = out.read_text().split("\n")
        assert written[-1] == "" and len(written) == len(lines) + 1  # one score a line
        scores[kind] = [float(s) for s in written[:-1]]
        bad_rows = [i for i, s in enumerate(scores[kind]) if math.isnan(s)]
        assert bad_rows == [1, 3, 4, 5, 6, 7]
        for row, (_, why) in zip(bad_rows, BAD, strict=True):
            assert f"line {row + 1} of {pairs}: {why}" in err, err
        assert "6 lines not scored" in err
    good = [0, 2, 8, 9]
    expected, tokens = eval_token_sum(toy, PAIRS)
    log_probs = [scores["log_prob"][i] for i in good]
    assert all(s < 0 for s in log_probs)
    assert -sum(log_probs) == pytest.approx(expected, rel=1e-5)
    # T2T's score: the mean per-token loss of the pair.
    losses = [scores["loss"][i] for i in good]
    assert sum(loss * n for loss, n in zip(losses, tokens, strict=True)) == pytest.approx(
        expected, rel=1e-5
    )
    np.testing.assert_allclose(
        losses, [-lp / n for lp, n in zip(log_probs, tokens, strict=True)], atol=2e-6
    )
    # No output file: refused before any work (T2T needs --decode_to_file too).
    assert decoder.main(flags(toy, f"--score_file={pairs}")) == 1
    assert "--score_file needs --decode_to_file" in capsys.readouterr().err


@pytest.mark.slow
def test_samples_from_the_decoder_dev_decodes_and_export_agree(toy, tmp_path, capsys):
    """num_samples outputs per record (tab-separated, records ended by the delimiter); the
    same seed gives the same samples in t2t-decoder, the dev decodes and the SavedModel."""
    from t2t_repro.decoding import runner
    from t2t_repro.serving.exporter import export_saved_model
    from t2t_repro.training.loop.dev_decodes import DevDecodes

    # 21, 19 and 24 subword ids with EOS: one length bucket (decoding/search.py), so the
    # decoder and the dev decodes each trace their search once (in three buckets, 21, 16 and
    # 8 ids made it three times each).
    sources = ["the dog sees a cat .", "the big cat runs .", "many dogs see the cat ."]
    src = tmp_path / "src.txt"
    src.write_text("|".join(sources) + "|")
    out = tmp_path / "out.txt"
    # One sentence a batch: the decode length (T2T's: the batch's longest input + extra) is
    # then each sentence's own, as in the dev decodes and the export below.
    dhp = "beam_size=1,extra_length=4,num_samples=3,delimiter=|,batch_size=1"
    argv = flags(toy, SAMPLING, f"--decode_hparams={dhp}", "--random_seed=5")
    assert decoder.main([*argv, f"--decode_from_file={src}", f"--decode_to_file={out}"]) == 0
    records = out.read_text().split("|")
    assert records[-1] == "" and len(records) == len(sources) + 1
    samples = [r.split("\t") for r in records[:-1]]
    assert all(len(s) == 3 for s in samples)
    assert len({s for row in samples for s in row}) > 3  # not one output repeated

    setup = runner.load_decoder(
        "translate_toy",
        "",
        "sampling_method=random,sampling_temp=1.0",
        str(toy / "data"),
        str(toy / "train"),
        decode_overrides="beam_size=1,extra_length=4,batch_size=1",
        random_seed=5,
    )
    firsts = [row[0] for row in samples]
    metric = types.SimpleNamespace(
        lines=sources, decode_overrides="beam_size=1,extra_length=4,batch_size=1"
    )
    dev = DevDecodes(setup.model, setup.problem, metric, str(toy / "data"), random_seed=5)
    assert dev.hypotheses() == firsts

    decoder_ = setup.decoder
    export_dir = tmp_path / "export"
    export_saved_model(
        setup.model,
        {"inputs": decoder_.input_encoder, "targets": decoder_.target_encoder},
        decoder_.searcher.config,
        decoder_.max_input_length,
        str(export_dir),
    )
    translate = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    exported = [translate(sources=tf.constant([s]))["translations"][0] for s in sources]
    assert [t.numpy().decode() for t in exported] == firsts
