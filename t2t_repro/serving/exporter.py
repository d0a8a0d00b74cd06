"""SavedModel export: source strings in, translations and scores out, tokenisation in-graph.

The serving signature ``serving_default(sources: string [B]) -> {"translations": string [B],
"scores": float32 [B]}`` does what ``t2t-decoder`` does for a batch: subword-encode with the
problem's vocabulary (an asset of the SavedModel; a one-id-per-word vocabulary is a lookup
table instead, ``GraphWordEncoder``), append EOS, truncate to the model's
maximum input, run the same search (``t2t_repro.decoding.search``) with the decode hparams,
keep the best beam cut at its first EOS, and detokenize. Sources are first normalised as
the decoder's lines are (:mod:`t2t_repro.data.source_lines`); blank ones give "" and score 0.
Loading needs only TensorFlow and tensorflow-text (for its ops), not this project:

    import tensorflow as tf, tensorflow_text  # noqa: registers the ops
    translate = tf.saved_model.load(path).signatures["serving_default"]
    translate(sources=tf.constant(["a sentence ."]))["translations"]
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.data.source_lines import normalize_source_lines_in_graph
from t2t_repro.decoding.constraints import SearchConstraint
from t2t_repro.decoding.search import SearchConfig, search
from t2t_repro.serving import ExportError
from t2t_repro.text_encoding.graph_text_encoder import GraphSubwordEncoder, write_plain_vocab
from t2t_repro.text_encoding.graph_word_encoder import GraphWordEncoder
from t2t_repro.text_encoding.reserved_tokens import EOS_ID


class Translator(tf.Module):
    """The exported object: the model's variables, the vocabularies and the signature."""

    def __init__(
        self,
        model,
        vocab_paths: dict,
        alphabets: dict,
        config: SearchConfig,
        max_input_length: int,
        constraint: SearchConstraint | None = None,
        target_tokens: tuple | None = None,
        input_tokens: tuple | None = None,
    ) -> None:
        super().__init__(name="translator")
        self.model = model
        self.config = config
        self.max_input_length = max_input_length
        self.constraint = constraint
        if constraint is not None:  # tracked, so the export keeps them
            self.constraint_resources = constraint.export_resources()
        if input_tokens is not None:  # a one-id-per-word source vocabulary
            self.input_encoder = GraphWordEncoder(input_tokens)
        else:
            self.input_vocab = tf.saved_model.Asset(vocab_paths["inputs"])
            self.input_encoder = GraphSubwordEncoder(self.input_vocab, alphabets["inputs"])
        if target_tokens is not None:  # a one-id-per-token target vocabulary
            self.target_encoder = GraphTokenDecoder(target_tokens)
        elif vocab_paths["targets"] == vocab_paths["inputs"]:
            self.target_encoder = self.input_encoder
        else:
            self.target_vocab = tf.saved_model.Asset(vocab_paths["targets"])
            self.target_encoder = GraphSubwordEncoder(self.target_vocab, alphabets["targets"])

    def encode_inputs(self, sources: tf.Tensor) -> tf.Tensor:
        """[B] strings -> [B, L] int32 ids with EOS, padded with 0 (truncated as the decoder)."""
        ids = self.input_encoder.encode(sources)[:, : self.max_input_length - 1]
        eos = tf.fill([tf.shape(sources)[0], 1], EOS_ID)
        return tf.concat([ids, tf.RaggedTensor.from_tensor(eos)], axis=1).to_tensor(0)

    @staticmethod
    def best_output_ids(ids: tf.Tensor) -> tf.RaggedTensor:
        """Best beam without its initial id, cut before the first EOS, trailing pads dropped."""
        best = ids[:, 0, 1:]
        before_eos = tf.cumsum(tf.cast(best == EOS_ID, tf.int32), axis=1) == 0
        positions = tf.range(tf.shape(best)[1])[None]
        kept = tf.where(before_eos & (best != 0), positions + 1, 0)
        length = tf.reduce_max(tf.concat([kept, tf.zeros_like(kept[:, :1])], 1), axis=1)
        return tf.RaggedTensor.from_tensor(best, lengths=length)

    # No tensor control flow here or in the search (explicit tf.while_loops): no autograph.
    @tf.function(
        input_signature=[tf.TensorSpec([None], tf.string, name="sources")], autograph=False
    )
    def translate(self, sources: tf.Tensor) -> dict:
        sources = normalize_source_lines_in_graph(sources)  # as t2t-decoder does
        inputs = self.encode_inputs(sources)
        decode_length = tf.shape(inputs)[1] + self.config.extra_length
        extra = () if self.constraint is None else self.constraint.graph_inputs(sources, inputs)
        ids, scores = search(
            self.model,
            self.config,
            inputs,
            decode_length,
            self.constraint,
            constraint_inputs=extra,
        )
        text = self.target_encoder.decode(self.best_output_ids(ids))
        blank = tf.strings.length(sources) == 0
        return {
            "translations": tf.where(blank, "", text),
            "scores": tf.where(blank, 0.0, scores[:, 0]),
        }


class GraphTokenDecoder(tf.Module):
    """In-graph ``TokenTextEncoder.decode``: ids -> their tokens joined by spaces."""

    def __init__(self, tokens) -> None:
        super().__init__(name="target_tokens")
        self.tokens = tf.constant(list(tokens))

    def decode(self, ids: tf.RaggedTensor) -> tf.Tensor:
        return tf.strings.reduce_join(tf.gather(self.tokens, ids), axis=1, separator=" ")


def export_saved_model(
    model,
    encoders: dict,
    config: SearchConfig,
    max_input_length: int,
    export_dir: str,
    constraint: SearchConstraint | None = None,
) -> str:
    """Writes the SavedModel to ``export_dir`` (via a temp dir, renamed when complete).
    ``constraint``: the problem's search constraint, in the export too (it builds its inputs
    from the source strings, ``graph_inputs``)."""
    if config.use_xla:
        raise ExportError(
            "the exported search runs for any input length; export without "
            "use_xla (XLA needs a static length per compiled function)."
        )
    if fileio.exists(export_dir):
        raise FileExistsError(
            f"{export_dir} already exists; choose another --export_dir or remove it."
        )
    parent = os.path.dirname(fileio.expand(export_dir))
    fileio.makedirs(parent)
    # Staged locally for gs:// and other schemes, then copied (top-level files last).
    work = tempfile.mkdtemp(prefix=".export-", dir=None if fileio.is_url(parent) else parent)
    try:
        vocab_paths, alphabets = {}, {}
        for feature in ("inputs", "targets"):
            encoder = encoders[feature]
            kind = getattr(encoder, "graph_kind", "subwords")
            if feature == "inputs" and kind == "words":
                vocab_paths[feature] = None  # one id per word: GraphWordEncoder
                continue
            if feature == "targets" and encoder is encoders["inputs"]:
                vocab_paths[feature], alphabets[feature] = (
                    vocab_paths["inputs"],
                    alphabets["inputs"],
                )
                continue
            if feature == "targets" and kind in ("tokens", "words"):
                vocab_paths[feature] = None  # a token vocabulary: decoded by GraphTokenDecoder
                continue
            vocab_paths[feature] = os.path.join(work, f"vocab.{feature}.txt")
            try:
                write_plain_vocab(list(encoder.all_subtoken_strings), vocab_paths[feature])
            except ValueError as e:
                raise ExportError(f"{feature} vocabulary: {e}") from None
            alphabets[feature] = encoder.alphabet
        tokens = getattr(encoders["targets"], "tokens", None)
        input_tokens = (
            getattr(encoders["inputs"], "tokens", None) if not vocab_paths["inputs"] else None
        )
        translator = Translator(
            model,
            vocab_paths,
            alphabets,
            config,
            max_input_length,
            constraint,
            tokens,
            input_tokens,
        )
        staging = os.path.join(work, "saved_model")
        tf.saved_model.save(
            translator, staging, signatures={"serving_default": translator.translate}
        )
        fileio.replace_dir(staging, export_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return export_dir


def default_export_dir(output_dir: str) -> str:
    """T2T's layout: ``<output_dir>/export/<unix time>``."""
    return os.path.join(output_dir, "export", str(int(time.time())))
