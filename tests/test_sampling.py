"""Sampling in the cached greedy search (T2T's sampling_method=random, sampling_temp,
sampling_keep_top_k; decode hparam num_samples): the right distribution, reproducible."""

import math
from statistics import NormalDist

import keras
import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.search import SearchConfig, Searcher, search
from t2t_repro.hparam import HParamsError
from tests.model_utils import build_model
from tests.tools import PLUMBING_MODEL

# The draws, their distribution and reproducibility, not T2T's numbers: without Grappler
# (tests/grappler.py); each comparison's searches run alike.
pytestmark = pytest.mark.usefixtures("without_grappler")

VOCAB = 20
SOURCES = np.array([[5, 6, 7, 8, 1], [9, 4, 1, 0, 0], [3, 12, 1, 0, 0]], np.int32)


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(3)
    # Width 32, one decoder layer, no encoder layer (PLUMBING_MODEL): the draws follow whatever
    # softmax the model gives, and each eager step and trace costs its layers.
    return build_model("transformer_tiny", PLUMBING_MODEL, vocab_size=VOCAB)


def sampler(model, **kw):
    """The search on a batch, run eagerly (no tracing: seconds saved per setting); the
    traced and XLA-compiled search is checked against it once."""
    config = SearchConfig(
        **{**dict(beam_size=1, extra_length=4, sampling_method="random", random_seed=11), **kw}
    )

    def run(inputs):
        inputs = np.asarray(inputs, np.int32)
        return search(model, config, tf.constant(inputs), inputs.shape[1] + config.extra_length)

    return run


@pytest.fixture(scope="module")
def four_samples(model):
    """Four samples of each of SOURCES (seed 11), drawn once for the three tests that read
    them (an eager search is ~0.4 core-s, AMD EPYC Zen 3); read only."""
    ids, scores = (t.numpy() for t in sampler(model, num_samples=4)(SOURCES))
    ids.setflags(write=False)
    scores.setflags(write=False)
    return ids, scores


def first_token_probs(model, source, temperature=1.0, keep_top_k=-1):
    """The model's softmax over the first target token (teacher-forced pass, not the search)."""
    logits = model({"inputs": tf.constant([source]), "targets": tf.constant([[0]])})[0, 0]
    logits = logits.numpy().astype(np.float64) / temperature
    if keep_top_k > 0:
        logits[np.argsort(-logits)[keep_top_k:]] = -np.inf
    p = np.exp(logits - logits.max())
    return p / p.sum()


def chi_square_critical(dof: int, alpha: float) -> float:
    """Upper ``alpha`` quantile of chi-square(dof), Wilson-Hilferty's approximation (2% above the
    exact 13.82 for dof 2 at alpha 0.001, closer for more)"""
    z = NormalDist().inv_cdf(1 - alpha)
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


def chi_square(counts: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic and its degrees of freedom; cells expecting < 5 are pooled."""
    expected = probs * counts.sum()
    small = expected < 5
    observed = np.append(counts[~small], counts[small].sum())
    expected = np.append(expected[~small], expected[small].sum())
    if expected[-1] == 0:
        assert observed[-1] == 0, "a token of probability 0 was drawn"
        observed, expected = observed[:-1], expected[:-1]
    return float(((observed - expected) ** 2 / expected).sum()), len(expected) - 1


def test_temperature_zero_is_greedy_and_sampling_is_reproducible(model, four_samples):
    greedy = sampler(model, sampling_method="argmax")
    greedy_ids, greedy_scores = greedy(SOURCES)
    ids, scores = sampler(model, sampling_temp=0.0)(SOURCES)
    np.testing.assert_array_equal(ids.numpy(), greedy_ids.numpy())
    np.testing.assert_array_equal(scores.numpy(), greedy_scores.numpy())

    ids, scores = four_samples
    assert ids.shape[:2] == (3, 4) and scores.shape == (3, 4)
    assert len({tuple(row) for row in ids.reshape(12, -1)}) > 6  # the samples differ
    other = sampler(model, num_samples=4, random_seed=12)(SOURCES)[0].numpy()
    assert (other != ids).any()
    # Same seed, same samples, whatever the batch: in another order, or alone (a smaller
    # batch and decode length); with one sample per input, the first of four.
    again = sampler(model, num_samples=4)(SOURCES[::-1])[0].numpy()
    np.testing.assert_array_equal(again[::-1], ids)
    alone = sampler(model)(SOURCES[2:3, :3])[0].numpy()
    np.testing.assert_array_equal(alone[0, 0], ids[2, 0, : alone.shape[2]])
    # The score is the log-probability of the drawn tokens up to EOS (T2T's), not a sampling
    # probability: the teacher-forced pass gives it back.
    out = ids[0, 1, 1:]
    length = int(np.argmax(out == 1)) + 1 if (out == 1).any() else len(out)
    logits = model({"inputs": tf.constant(SOURCES[:1]), "targets": tf.constant([out])})[0]
    log_probs = tf.nn.log_softmax(logits).numpy()
    expected = sum(log_probs[t, out[t]] for t in range(length))
    assert scores[0, 1] == pytest.approx(expected, abs=1e-4)


@pytest.mark.slow
def test_traced_and_xla_searches_draw_the_same_samples(model, four_samples):
    ids = four_samples[0]
    for xla in (False, True):
        config = SearchConfig(
            beam_size=1,
            extra_length=4,
            sampling_method="random",
            random_seed=11,
            num_samples=4,
            use_xla=xla,
        )
        np.testing.assert_array_equal(Searcher(model, config)(SOURCES)[0], ids)


def test_first_tokens_follow_the_softmax(model):
    """Chi-square goodness of fit of 4,000 first tokens (alpha 0.001, fixed seed), at
    temperature 1 and at 0.5 with top-3; the wrong distributions are rejected."""
    source = SOURCES[0]
    n = 4000
    alpha = 1e-3
    for temperature, top_k in ((1.0, -1), (0.5, 3)):
        search = sampler(
            model,
            extra_length=0,
            num_samples=n,
            sampling_temp=temperature,
            sampling_keep_top_k=top_k,
        )
        first = search(source[None, :2])[0].numpy()[0, :, 1]
        counts = np.bincount(first, minlength=VOCAB)
        probs = first_token_probs(model, source[:2], temperature, top_k)
        statistic, dof = chi_square(counts, probs)
        assert dof >= 2
        assert statistic < chi_square_critical(dof, alpha), (temperature, statistic, dof)
        wrong = first_token_probs(model, source[:2], 2 * temperature, top_k)
        statistic, dof = chi_square(counts, wrong)
        assert statistic > chi_square_critical(dof, alpha)


def test_keep_top_k_never_leaves_the_top_k(model):
    """Every drawn token, at every step before EOS, is among the step's 2 most likely."""
    ids = sampler(model, num_samples=50, sampling_keep_top_k=2, sampling_temp=3.0)(SOURCES)
    ids = ids[0].numpy()
    for row in range(len(SOURCES)):
        targets = ids[row, :, 1:]
        inputs = np.repeat(SOURCES[row : row + 1], len(targets), axis=0)
        logits = model({"inputs": tf.constant(inputs), "targets": tf.constant(targets)}).numpy()
        for s, out in enumerate(targets):
            for t, token in enumerate(out):
                better = (logits[s, t] > logits[s, t, token] + 1e-4).sum()
                assert better < 2, (row, s, t, token)
                if token == 1:
                    break


def test_sampling_hparams_are_checked(model):
    from t2t_repro.decoding.line_decoder import decode_hparams, search_config
    from t2t_repro.hparams_lib.checks import check_sampling

    hp = model.hparams
    for bad in ("sampling_method=top_p", "sampling_temp=-1.0", "sampling_keep_top_k=0"):
        trial = type(hp)(**hp.values()).parse(bad)
        with pytest.raises(HParamsError, match=bad.split("=")[0]):
            check_sampling(trial)
    # beam search does not sample: one output, said (T2T's file decoding does not read it)
    said = []
    config = search_config(decode_hparams("num_samples=3"), hp, 0, said.append)
    assert config.num_samples == 1 and not config.samples
    assert said and "num_samples=3 draws several outputs per input by sampling" in said[0]
    sampling = type(hp)(**hp.values()).parse("sampling_method=random")
    logged = []
    config = search_config(
        decode_hparams("beam_size=1,num_samples=3"), sampling, None, logged.append
    )
    assert config.samples and config.num_samples == 3
    assert "--random_seed=" in logged[0]  # an unseeded run says how to repeat it
    assert decode_hparams(r"delimiter=\t").delimiter == "\t"


def test_inverse_cdf_across_blocks_never_draws_a_zero_weight():
    """The two-level draw over 3 blocks of 128 (the last one padded) matches the weights."""
    from t2t_repro.decoding.sampling import inverse_cdf

    rng = np.random.default_rng(0)
    weights = rng.random(300) ** 4
    weights[rng.random(300) < 0.3] = 0.0
    weights[[0, 127, 128, 299]] = 0.0  # block edges
    n = 20000
    u = np.concatenate([rng.random(n - 2), [2.0**-25, 1 - 2.0**-24]]).astype(np.float32)
    ids = inverse_cdf(tf.constant(np.tile(weights, [n, 1]), tf.float32), tf.constant(u)).numpy()
    assert weights[ids].min() > 0
    statistic, dof = chi_square(np.bincount(ids, minlength=300), weights / weights.sum())
    assert statistic < chi_square_critical(dof, 1e-3), (statistic, dof)


class _IdsEncoder:
    """Text of space-separated ids <-> ids (LineDecoder's encoders, without a vocabulary)."""

    @staticmethod
    def encode(line: str) -> list[int]:
        return [int(t) for t in line.split()]

    @staticmethod
    def decode(ids) -> str:
        return " ".join(map(str, ids))


def test_repeated_lines_are_sampled_independently(model, four_samples):
    """T2T samples every line on its own: a repeated source draws other samples than its
    first occurrence, in one batch (the SavedModel's request) and across batches (a file);
    the first occurrence draws what it drew alone, and the same seed draws the same again."""
    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
    from t2t_repro.decoding.postprocess import strip_after_eos
    from t2t_repro.decoding.sampling import batch_occurrences, row_keys

    repeated = SOURCES[[0, 1, 0, 2, 0]]
    np.testing.assert_array_equal(batch_occurrences(tf.constant(repeated)), [0, 0, 1, 0, 2])
    keys = row_keys(tf.constant(SOURCES))
    np.testing.assert_array_equal(row_keys(tf.constant(SOURCES), tf.zeros([3], tf.int32)), keys)

    run = sampler(model, num_samples=4)
    ids = run(repeated)[0].numpy()
    first, second, third = ids[0], ids[2], ids[4]
    assert (first != second).any() and (first != third).any() and (second != third).any()
    unrepeated = four_samples[0]
    np.testing.assert_array_equal(first, unrepeated[0])  # as alone
    np.testing.assert_array_equal(ids[[1, 3]], unrepeated[[1, 2]])

    sampling = type(model.hparams)(**model.hparams.values()).parse("sampling_method=random")
    lines = [" ".join(str(t) for t in row if t > 1) for row in repeated]  # EOS, PAD left out

    dhp = decode_hparams("beam_size=1,extra_length=4,num_samples=4,batch_size=5")
    decoder = LineDecoder(
        _WithHParams(model, sampling),
        _IdsEncoder,
        _IdsEncoder,
        dhp,
        log=lambda m: None,
        random_seed=11,
    )

    def decode(batch_size):
        dhp.set_hparam("batch_size", batch_size)
        return [[h.ids for h in hyps] for hyps in decoder.decode_lines(lines)]

    expected = [[tuple(strip_after_eos(row)) for row in sample] for sample in ids]
    assert decode(5) == expected  # the file in one batch: the request's samples
    # One line a batch: the file's count tells the repeats apart. (The shorter lines' decode
    # length is then their own, not the batch's: only the longest are compared.)
    by_line = decode(1)
    assert [by_line[i] for i in (0, 2, 4)] == [expected[i] for i in (0, 2, 4)]
    assert decode(1) == by_line  # reproducible
    # A --decode_shards worker counts the repeats in the shares before its own.
    share = [[h.ids for h in hyps] for hyps in decoder.decode_lines(lines[2:], lines[:2])]
    assert share == by_line[2:]


class _WithHParams:
    """``model`` with other hparams (here its sampling ones), for LineDecoder."""

    def __init__(self, model, hparams) -> None:
        self.hparams, self._model = hparams, model

    def __getattr__(self, name):
        return getattr(self._model, name)


def test_dev_decodes_count_repeats_over_the_whole_dev_set(model):
    """The trainer's dev decodes of id rows (training/loop/dev_decodes.py) sample a repeated dev
    example as t2t-decoder samples a repeated line: counted over the whole set, not one batch."""
    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
    from t2t_repro.metrics.dev_metric import DevMetric
    from t2t_repro.training.loop.dev_decodes import DevDecodes

    repeated = SOURCES[[0, 1, 0, 2, 0]]
    sampling = type(model.hparams)(**model.hparams.values()).parse("sampling_method=random")
    decoder = LineDecoder(
        _WithHParams(model, sampling),
        _IdsEncoder,
        _IdsEncoder,
        decode_hparams("beam_size=1,extra_length=4,batch_size=1"),
        log=lambda m: None,
        random_seed=11,
    )
    dev = DevDecodes.__new__(DevDecodes)  # its decoder and metric, without a problem
    dev.decoder = decoder
    dev.metric = DevMetric(input_ids=[[int(t) for t in row if t] for row in repeated])
    texts = dev.hypotheses()
    lines = [" ".join(str(t) for t in row if t > 1) for row in repeated]
    assert texts == [hyps[0].text for hyps in decoder.decode_lines(lines)]
    assert len({texts[0], texts[2], texts[4]}) == 3, texts  # each repeat its own sample


def test_the_exporters_check_samples_with_the_decoders_seed_and_buckets():
    """t2t-exporter checks its export against decoders of the exported search
    (``export_check.quiet_decoder``): with ``--random_seed=5`` they sample with seed 5, not
    LineDecoder's default 0 (the check then failed a correct export), and they search in the
    decoder's length buckets; only ``return_beams`` is theirs, and the one bucket all probe
    lines are padded to (``probe_bucket``: the decoder's bucket of the longest)."""
    import dataclasses

    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
    from t2t_repro.serving.export_check import probe_bucket, quiet_decoder
    from t2t_repro.text_encoding.byte_encoder import ByteTextEncoder

    model = build_model("transformer_tiny", f"{PLUMBING_MODEL},sampling_method=random", VOCAB)
    encoder = ByteTextEncoder()
    decoder = LineDecoder(model, encoder, encoder, decode_hparams("beam_size=1"), random_seed=5)
    decoder.searcher = decoder.searcher.with_config(length_buckets=(96,))
    for return_beams in (False, True):
        quiet = quiet_decoder(decoder, return_beams)
        want = dataclasses.replace(decoder.searcher.config, return_beams=return_beams)
        assert quiet.searcher.config == want and quiet.searcher.config.random_seed == 5
        one = quiet_decoder(decoder, return_beams, bucket=48).searcher.config
        assert one == dataclasses.replace(want, length_buckets=(48,))
    decoder.searcher = decoder.searcher.with_config(length_buckets=(8, 16, 24))
    assert probe_bucket(decoder, [[5] * 3, [5] * 17, [1]]) == 24
    assert probe_bucket(decoder, [[5] * 30]) == 30  # past the last bucket: its own length
