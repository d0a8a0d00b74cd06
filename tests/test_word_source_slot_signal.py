"""One-id-per-word parsing source (``wsj_parsing_ptb_sample_words``) and the decoder's slot
signal (hparam ``slot_signal``): the vocabulary, the problem, the model, and the tools."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro import registry
from t2t_repro.commands.builtins import register_builtins
from t2t_repro.hparams_lib.build import create_hparams
from t2t_repro.layers.attention import attention_bias_ignore_padding
from t2t_repro.text_encoding.token_encoder import UNK_ID
from t2t_repro.text_encoding.word_encoder import (
    WordTextEncoder,
    build_word_vocab,
    word_signature,
)
from tests.grappler import grappler_off_env
from tests.model_utils import (
    assert_cached_search_matches_uncached,
    assert_cached_steps_match_full_pass,
)
from tests.test_wsj_parsing import make_ldc
from tests.tools import NO_DROPOUT, NO_ENCODER_LAYER, SMALL_BATCH_SHUFFLE, run_tool

register_builtins()


# The tools' runs check the words problem's plumbing, ids and files.
# Without Grappler: tests/grappler.py.
pytestmark = pytest.mark.usefixtures("without_grappler")


@pytest.mark.parametrize(
    "word,signature",
    [
        ("walking", "<unk-ing>"),
        ("Brussels", "<unk-Cap-s>"),
        ("NASA", "<unk-CAPS>"),
        ("1.5", "<unk-num-sym>"),
        ("mid-1990s", "<unk-num-dash-s>"),
        ("McDonald", "<unk-Cap>"),
        ("iPod", "<unk-mixed>"),
        ("glass", "<unk>"),  # -ss is not a plural
        ("ed", "<unk>"),  # a suffix needs two letters before it
        ("quickly", "<unk-ly>"),
    ],
)
def test_word_signature(word, signature):
    assert word_signature(word) == signature


def test_word_vocab_keeps_frequent_words_and_classes_rare_ones(tmp_path):
    sentences = ["the dog barked .", "the cat walked .", "the dog slept"]
    tokens = build_word_vocab(sentences, min_count=2, keep=["?", "."])
    # Rare words' classes (most frequent first), then frequent words, then the kept ones.
    assert tokens == ["<pad>", "<EOS>", "<UNK>", "<unk-ed>", "<unk>", "the", ".", "dog", "?"]
    encoder = WordTextEncoder(tokens=tokens)
    ids = encoder.encode("the dog jumped ? Zebra")
    assert ids == [5, 7, 3, 8, UNK_ID]  # jumped -> <unk-ed>; <unk-Cap> is not in the vocab
    assert encoder.decode(ids) == "the dog <unk-ed> ? <UNK>"
    path = tmp_path / "vocab.words"
    encoder.store_to_file(str(path))
    assert WordTextEncoder(str(path)).encode("the dog jumped") == [5, 7, 3]


def test_words_problem_datagen(tmp_path):
    tmp_dir, data_dir = make_ldc(tmp_path / "raw"), str(tmp_path / "data")
    problem = registry.problem("wsj_parsing_words")  # reads the miniature LDC tree
    problem.generate_data(data_dir, str(tmp_dir), progress=False)
    inputs = problem.get_encoders(data_dir)["inputs"]
    assert isinstance(inputs, WordTextEncoder)
    # "The", "sat", "." are frequent; each "catNN" is seen once, so it is its class.
    assert inputs.decode(inputs.encode("The cat5 sat .")) == "The <unk-num> sat ."
    assert len(inputs.encode("Rome waits , -LRB- dogs -RRB- .")) == 7  # one id per word
    assert "," in inputs.tokens and "``" in inputs.tokens  # punctuation is always itself
    assert problem.target_slot_ids(data_dir) == "3:51"  # the 48 POS tags, after <pad> <EOS> <UNK>
    assert registry.problem("translate_toy").target_slot_ids(data_dir) == ""


def _slot_model(slot_signal: bool, feed: bool = False):
    """One decoder layer and no encoder layer (NO_ENCODER_LAYER): the slot signal and the
    source feed enter below the decoder's first layer, and the feed reads the encoder's output
    (here its embeddings' final layer norm) whatever its depth. Its 24 weights, not the 36
    with an encoder layer, leave the XLA steps and searches fewer ops to trace and compile."""
    hp = create_hparams(
        "transformer_tiny",
        f"hidden_size=32,filter_size=48,num_heads=4,{NO_ENCODER_LAYER},slot_signal={slot_signal}"
        f",slot_source_feed={feed}",
        input_vocab_size=50,
        target_vocab_size=50,
        target_slot_ids="3:20",
    )
    model = registry.model("transformer")(hp)
    model.build()
    return model


def test_slot_signal_is_added_only_when_asked():
    assert _slot_model(False).slot_features is None  # the problem's ids alone add nothing
    assert _slot_model(True).hparams.target_slot_ids == "3:20"
    hp = create_hparams("transformer_tiny", "slot_signal=True", input_vocab_size=50)
    with pytest.raises(ValueError, match="needs a problem whose targets fill the input's words"):
        registry.model("transformer")(hp)


@pytest.mark.slow
def test_slot_signal_cached_steps_match_the_full_decoder():
    tf.random.set_seed(3)
    model = _slot_model(True)
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0]])
    length = 7
    ids = np.zeros([2, length + 1], np.int32)
    ids[:, 1:] = [[4, 30, 5, 31, 6, 7, 40], [30, 30, 3, 19, 20, 41, 8]]  # slots: ids 3..19
    full = assert_cached_steps_match_full_pass(model, inputs, ids)
    model.slot_features = None  # the same weights without the signal: other logits
    without = model({"inputs": inputs, "targets": tf.constant(ids[:, 1:])}).numpy()
    assert np.abs(without - full).max() > 1e-3
    # Count 0 (positions before any slot) has a signal too (cos 0 = 1): those move as well.
    assert np.abs(without[:, 0] - full[:, 0]).max() > 1e-3


def test_slot_source_feed_needs_slot_signal():
    with pytest.raises(ValueError, match="slot_source_feed=True .* needs slot_signal=True"):
        _slot_model(False, feed=True)


@pytest.mark.slow
def test_slot_source_feed_cached_steps_match_the_full_decoder():
    """The decoder input at position i gets the encoder's output at the word the next slot
    fills; the incremental steps (XLA) find the same word from the ids decoded so far."""
    tf.random.set_seed(4)
    model = _slot_model(True, feed=True)
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0]])
    length = 8
    ids = np.zeros([2, length + 1], np.int32)
    # Both rows emit more slots than they have words: past the end the feed is padding's 0.
    ids[:, 1:] = [[4, 3, 30, 5, 31, 6, 7, 40], [30, 3, 3, 19, 20, 41, 8, 5]]
    full = assert_cached_steps_match_full_pass(model, inputs, ids)
    model.slot_features.source_feed = False  # the same weights without the feed: other logits
    without = model({"inputs": inputs, "targets": tf.constant(ids[:, 1:])}).numpy()
    assert np.abs(without - full).max() > 1e-3


def test_slot_source_feed_by_hand():
    encoder_output = tf.reshape(tf.range(2 * 4 * 3, dtype=tf.float32), [2, 4, 3])
    bias = attention_bias_ignore_padding(tf.constant([[5, 6, 1, 0], [5, 6, 7, 1]]))
    slots = tf.constant([[0, 2, 3, 9], [1, 3, 4, 0]])
    from t2t_repro.layers.slot_features import source_at

    feed = source_at(slots, encoder_output, bias).numpy()
    expected = encoder_output.numpy()[[[0, 0, 0, 0], [1, 1, 1, 1]], [[0, 2, 3, 3], [1, 3, 3, 0]]]
    expected[0, 2:] = 0  # position 3 of row 1 is padding
    np.testing.assert_array_equal(feed, expected)


@pytest.mark.slow
@pytest.mark.parametrize("use_xla", [False, True])
def test_slot_source_feed_beam_search_with_and_without_cache(use_xla):
    tf.random.set_seed(5)
    model = _slot_model(True, feed=True)
    inputs = tf.constant([[5, 6, 7, 1, 0], [8, 9, 1, 0, 0], [11, 12, 13, 14, 1]])
    assert_cached_search_matches_uncached(model, inputs, beam_size=3, use_xla=use_xla)


@pytest.mark.slow
def test_trainer_and_decoder_run_the_words_problem_with_slot_signal(tmp_path):
    tmp_dir, data_dir = make_ldc(tmp_path / "raw"), tmp_path / "data"
    problem = registry.problem("wsj_parsing_words")
    problem.generate_data(str(data_dir), str(tmp_dir), progress=False)
    train = tmp_path / "train"
    # batch_size: the set's 4,096 tokens make batches of 315 copies of the 20 training trees,
    # and T2T's shuffle over 512 batches then reads ~160,000 examples before step 1 (30 s).
    hparams = f"hidden_size=32,filter_size=48,num_heads=4,{NO_ENCODER_LAYER},slot_signal=True"
    hparams += f",batch_size=256,{SMALL_BATCH_SHUFFLE},{NO_DROPOUT}"
    hparams += ",word_dropout_alpha=0.5"  # word dropout (its own tests: test_word_dropout.py)
    hparams += ",slot_source_feed=True"
    out = run_tool(
        "t2t-trainer",
        "--problem=wsj_parsing_words",
        "--hparams_set=transformer_parsing_cpu",
        f"--hparams={hparams}",
        f"--data_dir={data_dir}",
        f"--output_dir={train}",
        "--train_steps=2",
        # One evaluation, at the end: ~30% of the run's CPU (the eval step and a greedy dev
        # decode scored by EVALB), kept: the suite's only run of the words problem's eval.
        "--local_eval_frequency=0",
        "--no-attention_images",
        env=grappler_off_env(),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    saved = json.loads((train / "hparams.json").read_text())
    assert saved["slot_signal"] is True and saved["target_slot_ids"] == "3:51"
    assert saved["slot_source_feed"] is True
    assert saved["word_dropout_alpha"] == 0.5 and "word dropout: alpha 0.5 replaces" in out.stdout
    words = data_dir / "wsj_parsing_words.test.words"
    decodes = tmp_path / "decodes.txt"
    out = run_tool(
        "t2t-decoder",
        "--problem=wsj_parsing_words",
        f"--data_dir={data_dir}",
        f"--output_dir={train}",
        "--decode_hparams=beam_size=2",
        f"--decode_from_file={words}",
        f"--decode_to_file={decodes}",
        env=grappler_off_env(),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    out = run_tool(
        "t2t-evalb",
        f"--gold={data_dir / 'wsj_parsing_words.test.trees'}",
        f"--test={decodes}",
        "--linearized",
        "--json",
    )
    assert out.returncode == 0, out.stderr[-3000:]
    scores = json.loads(out.stdout)["all"]
    assert scores["errors"] == 0 and scores["valid"] == 2


def test_resuming_a_run_saved_before_slot_signal_existed(tmp_path):
    from t2t_repro.training.output_dir import saved_changes, saved_hparams

    hp = create_hparams("transformer_parsing_cpu", input_vocab_size=50, target_vocab_size=50)
    old = json.loads(hp.to_json())
    del old["slot_signal"]
    (tmp_path / "hparams.json").write_text(json.dumps(old))
    saved = saved_hparams(str(tmp_path))
    assert saved_changes(saved, hp, "transformer_parsing_cpu") == {}  # at the set's default
    hp.set_hparam("slot_signal", True)  # a change a rerun names
    assert saved_changes(saved, hp, "transformer_parsing_cpu") == {"slot_signal": (None, True)}
    # A problem hparam the saved run lacks (target_slot_ids, given by parsing problems since)
    # describes the same data: no change.
    hp.set_hparam("slot_signal", False)
    hp.add_hparam("target_slot_ids", "3:20")
    assert saved_changes(saved, hp, "transformer_parsing_cpu") == {}


WORDS = (
    "walking Brussels NASA 1.5 mid-1990s McDonald iPod glass ed quickly Éclair ÉTÉ straße "
    "naïve ١٢٣ ² ǅungla ΑΘΗΝΑ x-ray -- ... 's U.S. ACTIVITIES Ing sing ss classes bless "
    "Reading REFORMS stressful 3Com O'Brien"
).split()


def test_graph_word_signature_matches_python():
    from t2t_repro.text_encoding.graph_word_encoder import graph_word_signature

    graph = [s.decode() for s in graph_word_signature(tf.constant(WORDS)).numpy()]
    assert graph == [word_signature(w) for w in WORDS]


def test_graph_word_encoder_matches_python():
    from t2t_repro.text_encoding.graph_word_encoder import GraphWordEncoder

    encoder = WordTextEncoder(
        tokens=build_word_vocab(["the dog barked .", "the dog slept", "NASA 1.5"], keep=["?"])
    )
    sentences = ["the dog walking ?", " ".join(WORDS), "", "the  Zebra"]
    graph = GraphWordEncoder(encoder.tokens).encode(tf.constant(sentences)).to_list()
    assert graph == [encoder.encode(s) for s in sentences]


@pytest.mark.slow
@pytest.mark.parametrize("feed", [False, True])
def test_exported_words_parser_with_slot_signal_decodes_like_the_decoder(tmp_path, feed):
    import keras

    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
    from t2t_repro.serving.exporter import export_saved_model

    problem = registry.problem("wsj_parsing_words")
    data_dir = str(tmp_path / "data")
    problem.generate_data(data_dir, str(make_ldc(tmp_path / "raw")), progress=False)
    encoders = problem.get_encoders(data_dir)
    keras.utils.set_random_seed(2)
    sizes = problem.vocab_sizes(data_dir)
    hp = create_hparams(
        "transformer_tiny",
        f"hidden_size=32,filter_size=48,num_heads=4,{NO_ENCODER_LAYER},slot_signal=True"
        f",slot_source_feed={feed}",
        input_vocab_size=sizes[0],
        target_vocab_size=sizes[1],
        target_slot_ids=problem.target_slot_ids(data_dir),
    )
    model = registry.model("transformer")(hp)
    model.build()
    dhp = decode_hparams("beam_size=2,extra_length=6,batch_size=1", problem.decode_defaults)
    constraint = problem.search_constraint(data_dir, dhp)
    decoder = LineDecoder(
        model, encoders["inputs"], encoders["targets"], dhp, lambda m: None, constraint
    )
    lines = ["The cat sat .", "Rome waits , ` he said '"]
    export_dir = str(tmp_path / "exported")
    export_saved_model(model, encoders, decoder.searcher.config, 64, export_dir, decoder.constraint)
    parse = tf.saved_model.load(export_dir).signatures["serving_default"]
    exported = [
        parse(sources=tf.constant([line]))["translations"].numpy()[0].decode() for line in lines
    ]
    assert exported == [hyps[0].text for hyps in decoder.decode_lines(lines)]
    assert [len(encoders["inputs"].encode(line)) for line in lines] == [4, 7]
    # The constraint reads the line's own words: "'" is not in this vocabulary (its id is
    # <UNK>), yet both paths know that it closes the quote.
    assert encoders["inputs"].decode(encoders["inputs"].encode("'")) == "<UNK>"
    assert exported[1].split().count("``") == 1 and exported[1].split().count("''") == 1


@pytest.mark.slow
def test_words_datagen_on_the_real_ptb_sample(tmp_path):
    from tests.test_wsj_parsing import PTB_SAMPLE

    if not PTB_SAMPLE.is_file():
        pytest.skip(f"{PTB_SAMPLE} is absent (shared fixture data; see ../shared/data/README.md)")
    problem = registry.problem("wsj_parsing_ptb_sample_words")
    data_dir = str(tmp_path / "data")
    summary = problem.generate_data(data_dir, str(PTB_SAMPLE.parent), progress=False)
    assert summary.pairs == {"train": 3669, "dev": 127, "test": 118}
    inputs = problem.get_encoders(data_dir)["inputs"]
    classes = [t for t in inputs.tokens if t.startswith("<unk")]
    assert inputs.vocab_size == 5633 and len(classes) == 116
    for split in ("dev", "test"):
        with open(problem.gold_file(data_dir, split, "words")) as f:
            for line in f:
                assert len(inputs.encode(line)) == len(line.split())
    assert problem.target_slot_ids(data_dir) == "3:51"
    # The tree constraint's run limits, computed from the training trees, are the values
    # that were read off this sample by hand (so its decodes are unchanged).
    assert problem.constraint_limits(data_dir) == {"max_open_run": 4, "max_same_label_run": 3}
