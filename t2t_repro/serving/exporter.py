"""SavedModel export: source strings in, translations and scores out, tokenisation in-graph.

The serving signature ``serving_default(sources: string [B]) -> {"translations": string [B],
"scores": float32 [B]}`` does what ``t2t-decoder`` does for a batch: subword-encode with the
problem's vocabulary (an asset of the SavedModel; a one-id-per-word vocabulary is a lookup
table instead, ``GraphWordEncoder``), append EOS, truncate where the decoder would
(``LineDecoder.max_input_length``), run the same search (``t2t_repro.decoding.search``) with
the decode hparams, keep the best beam cut at its first EOS, and detokenize. Sources are
first normalised as the decoder's lines are (:mod:`t2t_repro.data.source_lines`); a blank
one is EOS alone, translated as T2T's serving client has it (``serving_utils``: the encoded
line plus EOS). A language model's (``has_input`` false) sources are prompts, as
``t2t-decoder`` reads them (``decoding/prompt.py``): a space after final punctuation, no
EOS, the prompt forced, its continuation returned; a blank prompt is decoded from nothing. A
text classifier's (a class-label target) returns its label's name, log-probability, id and
the class probabilities (``serving/labels.py``).

The signature ``nbest`` (same input) returns every beam, best first: ``translations``
string [B, beam_size] and ``scores`` float32 [B, beam_size], what ``t2t-decoder
--decode_hparams=return_beams=True,write_beam_scores=True`` prints (the search runs until the
worst finished beam beats every alive one, as T2T's ``return_beams``). A column that holds no
hypothesis (the search's placeholders) has translation
"" and a score below ``PLACEHOLDER_SCORE`` (-1e6) (``serving/nbest.py``); t2t-decoder
writes a placeholder as T2T's decoder does, "<pad>" for each position.
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
from collections.abc import Callable

import tensorflow as tf

from t2t_repro import fileio
from t2t_repro.data.source_lines import normalize_source_lines_in_graph
from t2t_repro.decoding.class_label import predicts_labels
from t2t_repro.decoding.constraints import SearchConstraint
from t2t_repro.decoding.search import SearchConfig, search
from t2t_repro.hparams_lib.sizes import logits_width
from t2t_repro.serving import ExportError
from t2t_repro.serving.labels import as_nbest, label_names, label_outputs
from t2t_repro.serving.nbest import NBEST_SIGNATURE, PLACEHOLDER_SCORE
from t2t_repro.text_encoding.graph_byte_encoder import GraphByteEncoder
from t2t_repro.text_encoding.graph_text_encoder import GraphSubwordEncoder, write_plain_vocab
from t2t_repro.text_encoding.graph_word_encoder import GraphWordEncoder
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

# A source ending in one of Python's string.punctuation characters (T2T's
# _get_language_modeling_inputs appends a space to such a prompt).
FINAL_PUNCTUATION = r"([!-/:-@\[-`{-~])$"


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
        input_byte_offset: int | None = None,
    ) -> None:
        super().__init__(name="translator")
        self.model = model
        self.prompt = not model.hparams.get("has_input", True)  # a language model's prompts
        self.labels = predicts_labels(model)  # a text classifier's labels, not a search
        self.config = config
        self.max_input_length = max_input_length
        self.input_cut = t2t_input_cut(model)
        self.constraint = constraint
        # One search graph for both signatures (traced, saved and loaded once), the stop rule
        # an input: ``nbest`` wants T2T's ``return_beams`` rule, ``serving_default`` the best
        # beam's. The rule only decides when the loop ends: the best beam is the same under
        # both (test_beam_search), the other beams may not be. In a plain closure: a
        # tf.function attribute would also be saved (and traced again for that) on its own.
        search_fn = tf.function(self.run_search, autograph=False)
        self.search_all_beams = lambda sources, stop_early: search_fn(sources, stop_early)
        if constraint is not None:  # tracked, so the export keeps them
            self.constraint_resources = constraint.export_resources()
        if input_tokens is not None:  # a one-id-per-word source vocabulary
            self.input_encoder = GraphWordEncoder(input_tokens)
        elif input_byte_offset is not None:  # a character (byte) source vocabulary
            self.input_encoder = GraphByteEncoder(input_byte_offset)
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
        """[B] strings -> [B, L] int32 ids with EOS, padded with 0: within
        ``max_input_length`` (the decoder's bound: ``LineDecoder.split_input_length``), then
        T2T's cut (``input_cut``; ``export_input_ids`` is the same in Python)."""
        ids = self.input_encoder.encode(sources)[:, : self.max_input_length - 1]
        eos = tf.fill([tf.shape(sources)[0], 1], EOS_ID)
        ids = tf.concat([ids, tf.RaggedTensor.from_tensor(eos)], axis=1)
        if self.input_cut > 0:
            ids = ids[:, : self.input_cut]
        return ids.to_tensor(0)

    def encode_prompts(self, sources: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """A language model's prompts, as ``LineDecoder.encode_prompt``: ids [B, L] padded
        with 0 and their lengths [B]."""
        spaced = tf.strings.regex_replace(sources, FINAL_PUNCTUATION, r"\1 ")
        ids = self.input_encoder.encode(spaced)[:, : self.max_input_length - 1]
        return ids.to_tensor(0), tf.cast(ids.row_lengths(), tf.int32)

    @staticmethod
    def after_prompts(ids: tf.Tensor, lengths: tf.Tensor) -> tf.Tensor:
        """[N, T] search outputs with each row's prompt (``lengths`` [N] ids after the initial
        id) removed: the initial id, then the continuation, 0 after."""
        positions = tf.range(tf.shape(ids)[1])[None]
        source = tf.where(positions > 0, positions + lengths[:, None], 0)
        inside = source < tf.shape(ids)[1]
        moved = tf.gather(ids, tf.minimum(source, tf.shape(ids)[1] - 1), batch_dims=1)
        return tf.where(inside, moved, tf.zeros_like(moved))

    @staticmethod
    def output_ids(ids: tf.Tensor) -> tf.RaggedTensor:
        """[N, T] search outputs -> each without its initial id, cut before the first EOS,
        trailing pads dropped."""
        best = ids[:, 1:]
        before_eos = tf.cumsum(tf.cast(best == EOS_ID, tf.int32), axis=1) == 0
        positions = tf.range(tf.shape(best)[1])[None]
        kept = tf.where(before_eos & (best != 0), positions + 1, 0)
        length = tf.reduce_max(tf.concat([kept, tf.zeros_like(kept[:, :1])], 1), axis=1)
        return tf.RaggedTensor.from_tensor(best, lengths=length)

    def run_search(self, sources: tf.Tensor, stop_early: tf.Tensor):
        """The search's (ids [B, beams, T], scores [B, beams]) of the normalised sources, with
        the beam search's stop rule ``stop_early`` (a scalar bool tensor)."""
        config = self.config
        sources = normalize_source_lines_in_graph(sources)  # as t2t-decoder does
        if self.prompt:
            inputs, lengths = self.encode_prompts(sources)
            extra = (inputs, lengths)  # the PromptConstraint's
        else:
            inputs = self.encode_inputs(sources)
            extra = () if self.constraint is None else self.constraint.graph_inputs(sources, inputs)
        decode_length = tf.shape(inputs)[1] + config.extra_length
        ids, scores = search(
            self.model,
            config,
            inputs,
            decode_length,
            self.constraint,
            constraint_inputs=extra,
            stop_early=stop_early,
        )
        if self.prompt:
            beams = tf.shape(ids)[1]
            flat = tf.reshape(ids, [-1, tf.shape(ids)[2]])
            flat = self.after_prompts(flat, tf.repeat(lengths, beams))
            ids = tf.reshape(flat, tf.shape(ids))
        return ids, scores

    # No tensor control flow in the signatures or the search (explicit tf.while_loops): no
    # autograph.
    @tf.function(
        input_signature=[tf.TensorSpec([None], tf.string, name="sources")], autograph=False
    )
    def translate(self, sources: tf.Tensor) -> dict:
        if self.labels:
            return self.classify(sources)
        ids, scores = self.search_all_beams(sources, tf.constant(True))
        text = self.target_encoder.decode(self.output_ids(ids[:, 0]))
        return {"translations": text, "scores": scores[:, 0]}

    @tf.function(
        input_signature=[tf.TensorSpec([None], tf.string, name="sources")], autograph=False
    )
    def translate_beams(self, sources: tf.Tensor) -> dict:
        """Every beam (T2T's ``return_beams``): translations and scores [B, beam_size]."""
        if self.labels:
            return as_nbest(self.classify(sources))
        ids, scores = self.search_all_beams(sources, tf.constant(False))
        batch, beams = tf.shape(ids)[0], tf.shape(ids)[1]
        flat = tf.reshape(ids, [batch * beams, tf.shape(ids)[2]])
        text = tf.reshape(self.target_encoder.decode(self.output_ids(flat)), [batch, beams])
        first = tf.range(beams)[None] == 0
        # Later beams scored like the search's -INF are placeholders, no hypothesis (which
        # t2t-decoder writes as T2T's does: line_decoder.hypotheses_found).
        placeholder = ~first & (scores < PLACEHOLDER_SCORE)
        return {"translations": tf.where(placeholder, "", text), "scores": scores}

    def classify(self, sources: tf.Tensor) -> dict:
        """A classifier's outputs (``serving/labels.py``) for the normalised sources."""
        sources = normalize_source_lines_in_graph(sources)  # as t2t-decoder does
        inputs = self.encode_inputs(sources)
        return label_outputs(self.model, inputs, self.target_encoder)


class GraphTokenDecoder(tf.Module):
    """In-graph ``TokenTextEncoder.decode``: ids -> their tokens joined by spaces."""

    def __init__(self, tokens) -> None:
        super().__init__(name="target_tokens")
        self.tokens = tf.constant(list(tokens))

    def decode(self, ids: tf.RaggedTensor) -> tf.Tensor:
        return tf.strings.reduce_join(tf.gather(self.tokens, ids), axis=1, separator=" ")


def padded_tokens(tokens, width: int, labels: bool) -> list[str]:
    """A token vocabulary over the logits' ``width``: ``vocab_divisor``'s padded ids decode
    as ``t2t-decoder`` writes them (``decoding/postprocess.py``, ``decode_text``): ``ID_<id>``,
    as T2T's ``TokenTextEncoder`` decodes an id it lacks (``_safe_id_to_token``), and a
    padded class has no name ("")."""
    tokens = list(tokens)
    return tokens + [("" if labels else f"ID_{i}") for i in range(len(tokens), width)]


def check_no_gumbel_noise(hp) -> None:
    """One line, before anything is written: T2T's hard attention with Gumbel noise draws
    noise at every decode (``layers/hard_attention.py``), which the SavedModel export (and its
    check against ``t2t-decoder``'s decodes) does not implement."""
    if hp.get("hard_attention_k", 0) > 0 and hp.get("gumbel_noise_weight", 0.0) > 0:
        raise ExportError(
            f"gumbel_noise_weight={hp.gumbel_noise_weight}: T2T's hard attention draws Gumbel "
            "noise at every decode, which this exporter does not implement; export a model "
            "trained without it (or decode with t2t-decoder)."
        )


def export_saved_model(
    model,
    encoders: dict,
    config: SearchConfig,
    max_input_length: int,
    export_dir: str,
    constraint: SearchConstraint | None = None,
    check: Callable[[str], None] | None = None,
    as_text: bool = False,
) -> str:
    """Writes the SavedModel to ``export_dir`` (via a temp dir, renamed when complete); with
    ``as_text``, its graph as ``saved_model.pbtxt`` (T2T's exporter ``--as_text``).
    ``constraint``: the problem's search constraint, in the export too (it builds its inputs
    from the source strings, ``graph_inputs``). ``check(saved_model_dir)``, if given, runs on
    the complete SavedModel before it is renamed into place (``export_check.py``)."""
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
            known = ("subwords", "tokens", "words", "labels", "bytes")
            if kind not in known or (feature == "targets" and kind == "bytes"):
                raise ExportError(
                    f"{feature}: a {kind} vocabulary has no in-graph "
                    f"{'encoder' if feature == 'inputs' else 'decoder'}; serve the "
                    "model with t2t-decoder (--decode_interactive or --decode_from_file)."
                )
            if feature == "inputs" and kind in ("words", "bytes"):
                vocab_paths[feature] = None  # GraphWordEncoder, GraphByteEncoder
                continue
            if feature == "targets" and encoder is encoders["inputs"]:
                vocab_paths[feature], alphabets[feature] = (
                    vocab_paths["inputs"],
                    alphabets["inputs"],
                )
                continue
            if feature == "targets" and kind in ("tokens", "words", "labels"):
                vocab_paths[feature] = None  # tokens or label names: GraphTokenDecoder
                continue
            vocab_paths[feature] = os.path.join(work, f"vocab.{feature}.txt")
            try:
                write_plain_vocab(list(encoder.all_subtoken_strings), vocab_paths[feature])
            except ValueError as e:
                raise ExportError(f"{feature} vocabulary: {e}") from None
            alphabets[feature] = encoder.alphabet
        tokens = getattr(encoders["targets"], "tokens", None)
        if getattr(encoders["targets"], "graph_kind", "") == "labels":
            tokens = label_names(encoders["targets"])
        if tokens is not None:
            tokens = padded_tokens(tokens, logits_width(model.hparams), predicts_labels(model))
        input_tokens = (
            getattr(encoders["inputs"], "tokens", None) if not vocab_paths["inputs"] else None
        )
        input_byte_offset = None
        if getattr(encoders["inputs"], "graph_kind", "") == "bytes":
            input_tokens, input_byte_offset = None, encoders["inputs"].num_reserved_ids
        translator = Translator(
            model,
            vocab_paths,
            alphabets,
            config,
            max_input_length,
            constraint,
            tokens,
            input_tokens,
            input_byte_offset,
        )
        staging = os.path.join(work, "saved_model")
        # return_beams: T2T's export then gives every beam in its one signature
        # (utils/t2t_model.py, estimator_spec_predict: top_beams = beam_size)
        default = translator.translate
        if config.return_beams and not translator.labels:
            default = translator.translate_beams
        signatures = {"serving_default": default, NBEST_SIGNATURE: translator.translate_beams}
        tf.saved_model.save(translator, staging, signatures=signatures)
        if as_text:
            _graph_as_text(staging)
        if check is not None:
            check(staging)  # before the rename: a failed check leaves no export behind
        fileio.replace_dir(staging, export_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return export_dir


def t2t_input_cut(model) -> int:
    """How many ids (EOS included) of an input T2T's export keeps: the model hparam
    ``max_input_seq_length`` (its ``serving_input_fn`` runs ``preprocess_example``, i.e.
    ``data_generators/problem.py``, ``preprocess_example_common``; a cut drops the EOS);
    0: all. A language model's prompt is not cut here."""
    if not model.hparams.get("has_input", True):
        return 0
    return int(model.hparams.get("max_input_seq_length", 0) or 0)


def export_input_ids(encoder, line: str, max_input_length: int, cut: int) -> list[int]:
    """``Translator.encode_inputs`` for one line, in Python (the export's check)."""
    ids = encoder.encode(line)[: max_input_length - 1] + [EOS_ID]
    return ids[:cut] if cut > 0 else ids


def _graph_as_text(saved_model_dir: str) -> None:
    """``saved_model.pb`` rewritten as ``saved_model.pbtxt`` (the SavedModel proto in text
    format, which TensorFlow and TensorFlow Serving load alike), as Estimator writes it with
    ``as_text``."""
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2

    binary = os.path.join(saved_model_dir, "saved_model.pb")
    proto = saved_model_pb2.SavedModel()
    with open(binary, "rb") as f:
        proto.ParseFromString(f.read())
    with open(os.path.join(saved_model_dir, "saved_model.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(proto))
    os.remove(binary)


def versioned_export_dir(base: str) -> str:
    """T2T's layout (Estimator's ``export_saved_model`` under ``--export_dir``, default
    ``<checkpoint dir>/export``): ``<base>/<unix time>``, the version directory TensorFlow
    Serving's ``--model_base_path`` expects; a time already taken is followed by the next
    free second, as Estimator retries a second later."""
    version = int(time.time())
    while fileio.exists(os.path.join(base, str(version))):
        version += 1
    return os.path.join(base, str(version))
