"""The SavedModel export of a text classifier (T2T's ``transformer_encoder`` with a class-label
target, issue #59): text in; the label's name, log-probability, id and the class probabilities
out, checked against ``t2t-decoder``'s labels before the export is put in place.

The model is T2T 1.15.7's own classifier (``test_text_classifier.py``'s fixture: T2T's train
dir, imported); its 13 input ids get words (a one-id-per-word vocabulary, which the export
encodes in its graph), so two lines are exactly two of T2T's unpadded reference rows, whose
labels T2T computed.
"""

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams
from t2t_repro.serving import ExportError
from t2t_repro.t2t_compat.text_encoder import ClassLabelEncoder
from t2t_repro.text_encoding.token_encoder import RESERVED
from t2t_repro.text_encoding.word_encoder import WordTextEncoder
from tests.t2t_fixtures import reference
from tests.test_text_classifier import REF, imported  # noqa: F401 (T2T's classifier)

WORDS = [f"w{i}" for i in range(len(RESERVED), 13)]  # id i is the word "w<i>"
NAMES = ["negative", "neutral", "positive"]


def files_of(directory: str) -> dict:
    """Each file's path under ``directory`` and its bytes."""
    root = Path(directory)
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def line_of(ids) -> str:
    """The line whose word ids are ``ids`` (EOS and padding dropped)."""
    return " ".join(f"w{i}" for i in ids if i > 1)


@pytest.fixture(scope="module")
def classifier(imported):  # noqa: F811 (the fixture imported above)
    model = imported[1]
    words = WordTextEncoder(tokens=WORDS)
    assert words.vocab_size == model.hparams.input_vocab_size
    decoder = LineDecoder(
        model, words, ClassLabelEncoder(NAMES), decode_hparams(""), lambda _: None
    )
    return model, decoder


@pytest.mark.slow  # traces, saves and loads a SavedModel
# The export against the decoder, both run here (T2T's labels are an argmax): tests/grappler.py
@pytest.mark.usefixtures("without_grappler_here")
def test_saved_model_serves_the_decoders_labels(classifier, tmp_path):
    from t2t_repro.serving.export_check import PROBE_LINES, check_export
    from t2t_repro.serving.exporter import export_saved_model
    from t2t_repro.serving.labels import LABEL_IDS, PROBABILITIES

    model, decoder = classifier
    ref = reference(REF)
    full = [row for row in range(len(ref["inputs"])) if ref["inputs"][row, -1] == 1]
    lines = [line_of(ref["inputs"][row]) for row in full] + ["w4 w4 w9", "", "Unknown words ."]
    checked = []

    def check(saved_model_dir):  # t2t-exporter's check, on its probe lines and these
        loaded = check_export(saved_model_dir, decoder, PROBE_LINES + tuple(lines))
        checked.append((saved_model_dir, files_of(saved_model_dir), loaded))

    export_dir = str(tmp_path / "export")
    encoders = {"inputs": decoder.input_encoder, "targets": decoder.target_encoder}
    config, length = decoder.searcher.config, decoder.max_input_length
    export_saved_model(model, encoders, config, length, export_dir, check=check)
    staged, staged_files, loaded = checked[0]
    assert not tf.io.gfile.exists(staged)  # checked, then renamed
    # The export is the SavedModel the check loaded, file for file: its signatures (their
    # costly first calls done) serve as a load of the export.
    assert files_of(export_dir) == staged_files
    signatures = loaded.signatures
    # One line a batch, as the check sends them: a classifier pools over its batch's padding.
    want = [decoder.decode_lines([line])[0][0] for line in lines]
    for line, hyp in zip(lines, want, strict=True):
        out = {k: v.numpy()[0] for k, v in signatures["serving_default"](sources=[line]).items()}
        assert out["translations"].decode() == hyp.text, line
        assert hyp.text == NAMES[out[LABEL_IDS]] and (out[LABEL_IDS],) == hyp.ids, line
        probs = out[PROBABILITIES]
        assert probs.shape == (len(NAMES),) and np.argmax(probs) == out[LABEL_IDS]
        np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-6)
        np.testing.assert_allclose(np.log(probs[out[LABEL_IDS]]), hyp.score, atol=1e-5)
        np.testing.assert_allclose(out["scores"], hyp.score, atol=1e-5)
    # T2T's own labels of its unpadded rows (the batch's longest: no padding to pool).
    assert [h.text for h in want[: len(full)]] == [NAMES[ref["labels"][r]] for r in full]
    assert len({h.text for h in want if h.text}) > 1  # not one class for every line
    nbest = signatures["nbest"](sources=tf.constant(lines[:2]))
    assert nbest["translations"].shape == (2, 1)
    assert [t[0].decode() for t in nbest["translations"].numpy()] == [h.text for h in want[:2]]


def test_ctranslate2_refuses_a_classifier_in_one_line(classifier, tmp_path):
    """CTranslate2 4.8's encoder-only model pools BERT's way (the first position, a dense
    layer and an activation), not T2T's mean over every position."""
    from t2t_repro.serving.ctranslate2_export import export_ctranslate2

    with pytest.raises(ExportError) as refused:
        export_ctranslate2(classifier[0], str(tmp_path / "ct2"))
    message = str(refused.value)
    assert "\n" not in message and "classifier" in message and "saved_model" in message
    assert not (tmp_path / "ct2").exists()


def test_graph_byte_encoder_gives_the_byte_encoders_ids():
    """A character classifier's sources are encoded in the export's graph as T2T's
    ``ByteTextEncoder`` encodes them (ids = UTF-8 bytes + 2)."""
    from t2t_repro.serving.export_check import PROBE_LINES
    from t2t_repro.text_encoding.byte_encoder import ByteTextEncoder
    from t2t_repro.text_encoding.graph_byte_encoder import GraphByteEncoder

    lines = [*PROBE_LINES, "\x00\x7f tab\there"]
    got = GraphByteEncoder(2).encode(tf.constant(lines)).to_list()
    assert got == [ByteTextEncoder().encode(line) for line in lines]


def test_a_byte_target_vocabulary_is_refused_in_one_line(tmp_path):
    """Bytes are encoded in the graph, not decoded (Python's replacement of invalid UTF-8)."""
    from t2t_repro.decoding.search import SearchConfig
    from t2t_repro.serving.exporter import export_saved_model
    from t2t_repro.text_encoding.byte_encoder import ByteTextEncoder

    chars = ByteTextEncoder()
    with pytest.raises(ExportError, match="^targets: a bytes vocabulary has no in-graph decoder"):
        encoders = {"inputs": chars, "targets": chars}
        export_saved_model(None, encoders, SearchConfig(), 64, str(tmp_path / "export"))
    assert list(tmp_path.iterdir()) == []  # no temp dir left behind
