"""Language models (problems without inputs: T2T's ``Text2SelfProblem``) against T2T 1.15.7.

The train dir under tests/data/t2t_reference was made by T2T 1.15.7 itself: its ``Transformer``
with targets-only problem hparams (``has_input`` false: no encoder, no encoder-decoder attention),
``transformer_tiny`` at hidden 16, trained 300 steps on counting sequences, and T2T's EVAL logits
and its greedy and beam decodes from prompts, read back from that checkpoint
(tools/t2t_reference/lm_reference.py, README there). Logits agree within 1e-4 and decodes id for
id, as for the other T2T checkpoints (test_t2t_import.py).
"""

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.hparams_lib.build import create_hparams
from tests.model_utils import build_model, shared_toy_data
from tests.t2t_fixtures import REFERENCE, load_imported, reference, shared_import

LM_DIR = REFERENCE / "t2t_lm_train_dir"
TINY = "hidden_size=32,filter_size=64,num_heads=2,num_hidden_layers=1"
REF = "t2t_1.15.7_lm_decodes.npz"


class IdsText:
    """A target encoder whose text is the ids (the reference has no vocabulary)."""

    def decode(self, ids):
        return " ".join(map(str, ids))

    def encode(self, text):
        return [int(t) for t in text.split()]


@pytest.fixture(scope="module")
def imported():
    return shared_import(LM_DIR)  # the run's one import of it (read only)


@pytest.fixture(scope="module")
def t2t_lm(imported):
    return load_imported(imported[0])


@pytest.fixture(scope="module")
def greedy_searcher(t2t_lm):
    """The reference's greedy search (extra_length 6), which several tests' decoders share:
    one trace for each batch size for them all, where each decoder's own searcher traced its
    own (~0.3 CPU-s a trace, AMD EPYC Zen 3)."""
    dhp = decode_hparams(f"beam_size=1,extra_length={int(reference(REF)['extra_length'])}")
    return LineDecoder(t2t_lm, IdsText(), IdsText(), dhp).searcher


def sharing(decoder, searcher):
    """``decoder`` searching with ``searcher``, which searches as its own would: the same
    model, configuration and prompt constraint (functions traced for another decoder)."""
    own = decoder.searcher
    assert own.model is searcher.model and own.config == searcher.config
    assert type(own.constraint) is type(searcher.constraint)
    assert vars(own.constraint) == vars(searcher.constraint)
    decoder.searcher = searcher
    return decoder


def test_import_is_the_decoder_alone_and_logits_equal_t2t(imported, t2t_lm):
    out, result = imported
    assert result.step == 300 and result.with_optimizer
    hp = result.imported.hparams
    assert hp.has_input is False and hp.input_vocab_size == hp.target_vocab_size == 13
    names = [v.path for v in t2t_lm.weights]
    assert not [n for n in names if "encoder" in n or "encdec" in n or "target_space" in n]
    ref = reference(REF)
    # Its inputs are not read: any ids (here none) give the same logits.
    logits = t2t_lm({"inputs": np.zeros([3, 0], np.int32), "targets": ref["targets"]}).numpy()
    np.testing.assert_allclose(logits, ref["logits"], atol=1e-4, rtol=0)


def until_eos(row):
    """T2T's output row cut before its first EOS (what the decoder writes)."""
    row = [int(t) for t in row]
    return row[: row.index(1)] if 1 in row else row


@pytest.mark.parametrize(
    "name, beam, return_beams", [("greedy", 1, False), ("beam3", 3, False), ("beam3_all", 3, True)]
)
def test_prompt_decodes_equal_t2t(t2t_lm, greedy_searcher, name, beam, return_beams):
    """Each prompt is the prefix of the targets (T2T's partial targets, forced): the output is
    what follows it, with T2T's score (the prompt's forced steps add 0)."""
    ref = reference(REF)
    dhp = decode_hparams(
        f"beam_size={beam},alpha={float(ref['alpha'])},extra_length={int(ref['extra_length'])},"
        f"return_beams={return_beams}"
    )
    decoder = LineDecoder(t2t_lm, IdsText(), IdsText(), dhp)
    if beam == 1:
        decoder = sharing(decoder, greedy_searcher)
    for p in range(int(ref["num_prompts"])):
        prompt = ref[f"prompt{p}"].tolist()
        (hyps,) = decoder.decode_ids([prompt])
        want = ref[f"prompt{p}_{name}_ids"].reshape(len(hyps) if return_beams else 1, -1)
        assert [list(h.ids) for h in hyps] == [until_eos(r) for r in want], (p, name)
        want_scores = ref[f"prompt{p}_{name}_scores"].reshape(-1)
        np.testing.assert_allclose([h.score for h in hyps], want_scores, atol=1e-4, rtol=1e-5)


def test_a_batch_forces_each_prompt_to_its_own_length(t2t_lm, greedy_searcher):
    """Prompts of 1, 3 and 5 ids in one batch: each row continues its own prompt (T2T, which
    forces the batch's padding too, computes this for batches of one line)."""
    ref = reference(REF)
    dhp = decode_hparams(f"beam_size=1,extra_length={int(ref['extra_length'])}")
    decoder = sharing(LineDecoder(t2t_lm, IdsText(), IdsText(), dhp), greedy_searcher)
    prompts = [ref[f"prompt{p}"].tolist() for p in range(int(ref["num_prompts"]))]
    for p, hyps in enumerate(decoder.decode_ids(prompts)):
        want = until_eos(ref[f"prompt{p}_greedy_ids"][0])
        assert list(hyps[0].ids[: len(want)]) == want, p


def test_decode_lines_continue_prompts_as_t2t_reads_them(t2t_lm, greedy_searcher):
    """A line is a prompt: no EOS, a space after final punctuation (T2T's
    _get_language_modeling_inputs), an empty line decoded from nothing."""
    seen = []

    class Recording(IdsText):
        def encode(self, text):
            seen.append(text)
            return [int(t) for t in text.split() if t.isdigit()]

    dhp = decode_hparams("beam_size=1,extra_length=6")  # the shared search's: its trace
    decoder = sharing(LineDecoder(t2t_lm, Recording(), IdsText(), dhp), greedy_searcher)
    out = decoder.decode_lines(["5 6 7", "11 .", ""])
    assert seen == ["5 6 7", "11 . ", ""]
    assert out[0][0].ids[:1] == (8,) and out[1][0].ids[:1] == (12,)
    assert len(out[2][0].ids) > 0  # not the empty output of an empty translation line


def test_a_language_models_lines_are_batched_in_file_order(t2t_lm, monkeypatch):
    """T2T batches a language model's lines as the file has them (decode_from_file:
    sorted_keys = range(...), no sort by length), and a batch sets each line's decode length
    (its longest prompt + extra_length): translation lines are sorted, prompts are not."""
    from t2t_repro.decoding.line_decoder import Hypothesis

    decoder = LineDecoder(t2t_lm, IdsText(), IdsText(), decode_hparams("batch_size=2"))
    batches = []

    def record(batch, lines=None, occurrences=None):
        batches.append(batch)
        return [[Hypothesis("", 0.0)] for _ in batch]

    monkeypatch.setattr(decoder, "decode_ids", record)
    decoder.decode_lines(["5", "6 7 8", "9 10"])
    assert batches == [[[5], [6, 7, 8]], [[9, 10]]]


def test_score_file_scores_a_language_models_lines_as_t2t_reads_them(t2t_lm, tmp_path):
    """T2T's score_file without inputs: a line is the target, or the text after its one tab
    (all were nan here); the loss score is times the problem's loss_multiplier (T2T's
    _loss_single: a character-level problem's 2), the log-probability is not."""
    import types

    from t2t_repro.decoding import runner

    decoder = types.SimpleNamespace(input_encoder=IdsText(), target_encoder=IdsText(), log=print)
    setup = types.SimpleNamespace(model=t2t_lm, decoder=decoder, dhp=decode_hparams("batch_size=2"))
    lines = tmp_path / "lines.txt"
    lines.write_text("5 6 7\nignored\t5 6 7\n3 4\n")
    loss = runner.score_file(setup, str(lines), str(tmp_path / "loss.txt"))
    log_prob = runner.score_file(setup, str(lines), str(tmp_path / "lp.txt"), "log_prob")
    assert all(np.isfinite(loss)) and loss[0] == loss[1] and loss[0] != loss[2]
    tokens = (4, 4, 3)  # with EOS
    want = [-lp / n for lp, n in zip(log_prob, tokens, strict=True)]
    np.testing.assert_allclose(loss, want, rtol=1e-6)
    t2t_lm.hparams.add_hparam("loss_multiplier", 2.0)
    try:
        doubled = runner.score_file(setup, str(lines), str(tmp_path / "x2.txt"))
    finally:
        t2t_lm.hparams.del_hparam("loss_multiplier")
    assert doubled == [2 * x for x in loss]


@pytest.mark.parametrize(
    "hparams_set, overrides",
    [
        ("transformer_tiny", ""),
        ("transformer_tiny", "self_attention_type=dot_product_relative,pos=none"),
        ("transformer_base_v1", "num_hidden_layers=2"),  # the paper's post-norm
    ],
)
def test_cached_steps_equal_the_full_decoder_without_inputs(hparams_set, overrides):
    """The decoder-only model's cached steps (plain and relative self-attention, pre- and
    post-norm) give the teacher-forced logits; its inputs are never read."""
    sizes = "hidden_size=16,filter_size=24,num_heads=2,max_relative_position=2"
    overrides = ",".join(filter(None, [sizes, overrides]))
    model = build_model(hparams_set, overrides, has_input=False)  # built once, without inputs
    ids = np.zeros([2, 8], np.int32)
    ids[:, 1:] = np.random.default_rng(0).integers(2, 50, size=[2, 7])
    full = model({"inputs": tf.zeros([2, 0], tf.int32), "targets": tf.constant(ids[:, 1:])})
    cache = model.init_cache(tf.zeros([2, 3], tf.int32), 7)
    for i in range(7):
        logits, cache = model.decode_step(tf.constant(ids), tf.constant(i), cache)
        np.testing.assert_allclose(logits.numpy(), full.numpy()[:, i], atol=2e-4, rtol=1e-4)


@pytest.mark.slow  # traces and saves the two exported searches
@pytest.mark.usefixtures("without_grappler_here")  # its own export and decoder run alike
def test_saved_model_continues_prompts_as_the_decoder(tmp_path):
    """The export of a language model: its sources are prompts (no EOS, T2T's space after
    final punctuation, a blank prompt decoded); both signatures give t2t-decoder's
    continuations and scores (the exporter's own check, export_check.py, on its probe lines
    and here on more: one check of both, one load of the export and one trace of each
    search); one batch of prompts gives the decoder's batch."""

    import keras

    from t2t_repro.serving.export_check import PROBE_LINES, check_export
    from t2t_repro.serving.exporter import export_saved_model

    # The run's one translate_toy datagen output (its vocabulary is all this reads).
    encoder = registry.problem("translate_toy").get_encoders(str(shared_toy_data()))["targets"]
    keras.utils.set_random_seed(1)
    model = build_model("transformer_tiny", TINY, vocab_size=encoder.vocab_size)
    hp = model.hparams
    hp.add_hparam("has_input", False)
    model = type(model)(hp)
    model.build()
    dhp = decode_hparams("beam_size=2,extra_length=5")
    decoder = LineDecoder(model, encoder, encoder, dhp, lambda m: None)
    # Every prompt padded to one length bucket (the probe lines have 0 to 73 ids: five of the
    # default buckets), so each of the decoder's searches traces once, not once a bucket (the
    # check's two searches take the decoder's configuration): 3 traces instead of 11. The
    # padding is masked and the decode length is the prompt's (decoding/search.py), so the
    # ids are those of the prompt's own length (tests/test_decode_length_buckets.py, on
    # inputs); the other tests here decode prompts in the default buckets.
    decoder.searcher = decoder.searcher.with_config(length_buckets=(96,))
    lines = ["a b", "c d e .", "", "b"]
    translations = []

    def check(saved_model_dir):
        # The checked export, loaded once: its one batch of the four prompts below too.
        loaded = check_export(saved_model_dir, decoder, [*PROBE_LINES, *lines])
        out = loaded.signatures["serving_default"](sources=tf.constant(lines))
        translations.extend(t.decode() for t in out["translations"].numpy())

    export_dir = str(tmp_path / "export")
    export_saved_model(
        model,
        {"inputs": encoder, "targets": encoder},
        decoder.searcher.config,
        decoder.max_input_length,
        export_dir,
        decoder.constraint,
        check=check,
    )
    assert tf.saved_model.contains_saved_model(export_dir)  # checked, then put in place
    assert translations == [h[0].text for h in decoder.decode_lines(lines)]


def test_flops_count_the_decoder_alone():
    from t2t_repro.hparam import HParams
    from t2t_repro.models.flops import forward_flops

    sizes = "hidden_size=16,filter_size=24,num_heads=2"
    hp = create_hparams("transformer_tiny", sizes, input_vocab_size=50, target_vocab_size=50)
    lm = HParams(**{**hp.values(), "has_input": False})
    assert forward_flops(lm, 2, 9, 5) == forward_flops(lm, 2, 0, 5)
    assert forward_flops(lm, 2, 9, 5) < forward_flops(hp, 2, 9, 5)


def test_ctranslate2_generator_continues_prompts_as_t2t(t2t_lm, tmp_path):
    """The CTranslate2 export of T2T's language model (a decoder-only spec) and its
    Generator engine: T2T's greedy continuations and scores, each prompt forced."""
    from t2t_repro.decoding.ctranslate2_generator import CTranslate2PromptSearcher
    from t2t_repro.serving.ctranslate2_export import export_ctranslate2

    ref = reference(REF)
    model_dir = export_ctranslate2(t2t_lm, str(tmp_path / "ct2"))
    extra = int(ref["extra_length"])
    searcher = CTranslate2PromptSearcher(model_dir, 1, 0.0, extra)
    decoder = LineDecoder(
        searcher,
        IdsText(),
        IdsText(),
        decode_hparams(f"beam_size=1,extra_length={extra}"),
        searcher=searcher,
    )
    for p in range(int(ref["num_prompts"])):
        (hyps,) = decoder.decode_ids([ref[f"prompt{p}"].tolist()])
        assert list(hyps[0].ids) == until_eos(ref[f"prompt{p}_greedy_ids"][0]), p
        np.testing.assert_allclose(hyps[0].score, ref[f"prompt{p}_greedy_scores"][0], atol=1e-4)
    prompts = [ref[f"prompt{p}"].tolist() for p in range(int(ref["num_prompts"]))]
    for p, hyps in enumerate(decoder.decode_ids(prompts)):  # one batch, three lengths
        want = until_eos(ref[f"prompt{p}_greedy_ids"][0])
        assert list(hyps[0].ids[: len(want)]) == want, p


def test_set_search_takes_the_next_lines_decode_length(t2t_lm, greedy_searcher):
    """t2t-decoder's interactive dl=N (LineDecoder.set_search): the lines after it are
    decoded with the shorter length, a prefix of the longer greedy decode (shorter for some)."""
    ref = reference(REF)
    dhp = decode_hparams("beam_size=1,extra_length=6")
    decoder = sharing(LineDecoder(t2t_lm, IdsText(), IdsText(), dhp), greedy_searcher)
    prompts = [ref[f"prompt{p}"].tolist() for p in range(int(ref["num_prompts"]))]
    before = [list(decoder.decode_ids([p])[0][0].ids) for p in prompts]
    decoder.set_search(decode_hparams("beam_size=1,extra_length=1"))
    after = [list(decoder.decode_ids([p])[0][0].ids) for p in prompts]
    assert all(a == b[: len(a)] for a, b in zip(after, before, strict=True)), (after, before)
    assert any(len(a) < len(b) for a, b in zip(after, before, strict=True)), (after, before)


def test_a_splits_decode_does_not_read_max_input_size(t2t_lm, greedy_searcher, tmp_path):
    """T2T's dataset decode never reads max_input_size; its decode_from_file cuts to it (the
    decoder cuts a line before its search, which is the same with or without it: shared)."""
    from t2t_repro.decoding import split_decoding

    ref = reference(REF)
    prompts = [" ".join(map(str, ref[f"prompt{p}"])) for p in range(int(ref["num_prompts"]))]
    whole = LineDecoder(t2t_lm, IdsText(), IdsText(), decode_hparams("beam_size=1,extra_length=6"))
    whole = sharing(whole, greedy_searcher)
    dhp = decode_hparams("beam_size=1,extra_length=6,max_input_size=2")
    cut = sharing(
        LineDecoder(t2t_lm, IdsText(), IdsText(), dhp, log=lambda msg: None), whole.searcher
    )

    class Split:  # a problem whose split is these prompts
        def source_lines(self, tmp_dir, split):
            return prompts, prompts

    paths = split_decoding.SplitPaths(str(tmp_path / "decodes"), str(tmp_path / "targets"))
    split_decoding.decode_split(cut, Split(), "", "dev", paths)
    split_decodes = (tmp_path / "decodes").read_text().splitlines()
    assert split_decodes == [hyps[0].text for hyps in whole.decode_lines(prompts)]
    assert split_decodes != [hyps[0].text for hyps in cut.decode_lines(prompts)]  # a file's
