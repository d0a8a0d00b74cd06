"""``tensor2tensor.data_generators.pointer_generator_word``: T2T 1.15.7's
``text2text_copyable_tokens`` (``Text2textCopyableTokens``) and its ``TokenTextEncoderOov``.

The problem is ``text2text_tmpdir_tokens`` (``inputs.train.txt``... and ``vocab.txt`` in
--tmp_dir) whose records also hold ``inputs_extend`` and ``targets_extend``: each source token
missing from the vocabulary gets a temporary id past it (``vocab_size`` + its order of first
appearance in the source), which a target token equal to it shares, for a pointer-generator
decoder to copy. This project's Transformer trains on ``inputs`` and ``targets`` as T2T's does
(the input pipeline drops the other fields, ``example_reading.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import tensorflow as tf

from t2t_repro.t2t_compat import refusals, text_encoder
from t2t_repro.t2t_compat import registry as t2t_registry
from t2t_repro.t2t_compat.tmpdir_problems import Text2textTmpdirTokens


class TokenTextEncoderOov(text_encoder.TokenTextEncoder):
    """T2T's ``TokenTextEncoder`` that also numbers a source's unknown tokens past the
    vocabulary (``pointer_generator_word.py``); as T2T's, ``encode`` returns a 4-tuple."""

    def encode(self, s: str) -> tuple[list[int], list[int], dict[str, int], list[str]]:
        """``(ids, ids_extend, oovs, source_oov_id_to_token)``: ``ids`` with the OOV token's
        id for an unknown token, ``ids_extend`` with its temporary id; ``oovs`` maps each
        unknown token to its order of first appearance."""
        ids: list[int] = []
        ids_extend: list[int] = []
        oovs: dict[str, int] = {}
        for token in s.strip().split():
            known = self._token_to_id.get(token)
            if known is not None:
                ids.append(known)
                ids_extend.append(known)
                continue
            order = oovs.setdefault(token, len(oovs))
            ids_extend.append(self.vocab_size + order)
            ids.append(self._token_to_id[self._replace_oov])
        by_order = [""] * len(oovs)
        for token, order in oovs.items():
            by_order[order] = token
        if self._reverse:
            return ids[::-1], ids_extend[::-1], oovs, by_order
        return ids, ids_extend, oovs, by_order

    def encode_target(self, target: str, source_oovs: dict[str, int]) -> tuple[list, list]:
        """``(ids, ids_extend)`` of a target: an unknown token that is one of the source's
        gets the source's temporary id in ``ids_extend``, any other the OOV token's id."""
        ids: list[int] = []
        ids_extend: list[int] = []
        for token in target.strip().split():
            known = self._token_to_id.get(token)
            if known is not None:
                ids.append(known)
                ids_extend.append(known)
                continue
            oov_id = self._token_to_id[self._replace_oov]
            ids.append(oov_id)
            if token in source_oovs:
                ids_extend.append(self.vocab_size + source_oovs[token])
            else:
                ids_extend.append(oov_id)
        if self._reverse:
            return ids[::-1], ids_extend[::-1]
        return ids, ids_extend

    def decode_oov(self, ids: Iterable[int], source_oov: list[str]) -> str:
        return " ".join(self.decode_list_oov(ids, source_oov))

    def decode_list_oov(self, ids: Iterable[int], source_oov_id_to_token: list[str]) -> list[str]:
        """Tokens of ``ids``, a temporary id as the source token it stands for."""
        ids = list(ids)
        seq = reversed(ids) if self._reverse else ids
        return [
            self._id_to_token[i]
            if i in self._id_to_token
            else source_oov_id_to_token[i - self.vocab_size]
            for i in seq
        ]


@t2t_registry.register_problem
class Text2textCopyableTokens(Text2textTmpdirTokens):
    """``text2text_tmpdir_tokens`` with T2T's extended ids of source OOVs
    (``inputs_extend``, ``targets_extend``) in its records."""

    def get_or_create_vocab(self, data_dir: str, tmp_dir: str | None, force_get: bool = False):
        # T2T's reads the file Text2textTmpdirTokens.generate_samples stored.
        path = os.path.join(data_dir, self.vocab_filename)
        return TokenTextEncoderOov(path, replace_oov=self.oov_token)

    def generate_encoded_samples(self, data_dir, tmp_dir, dataset_split) -> Iterator[dict]:
        generator = self.generate_samples(data_dir, tmp_dir, dataset_split)
        encoder = self.get_or_create_vocab(data_dir, tmp_dir)
        return self.text2text_generate_encoded_oovs(generator, encoder, has_inputs=self.has_inputs)

    def text2text_generate_encoded_oovs(
        self,
        sample_generator: Iterable[dict],
        vocab: TokenTextEncoderOov,
        targets_vocab: TokenTextEncoderOov | None = None,
        has_inputs: bool = True,
    ) -> Iterator[dict]:
        """Each sample with its ids and extended ids, EOS at the end of each list."""
        targets_vocab = targets_vocab or vocab
        eos = text_encoder.EOS_ID
        for sample in sample_generator:
            source_oovs: dict[str, int] = {}  # T2T's would fail here without inputs
            if has_inputs:
                ids, extended, source_oovs, _ = vocab.encode(sample["inputs"])
                sample["inputs"], sample["inputs_extend"] = ids + [eos], extended + [eos]
            ids, extended = targets_vocab.encode_target(sample["targets"], source_oovs)
            sample["targets"], sample["targets_extend"] = ids + [eos], extended + [eos]
            yield sample

    def example_reading_spec(self) -> tuple[dict, None]:
        """T2T's four int64 fields (the Transformer reads ``inputs`` and ``targets``)."""
        fields = ("inputs", "inputs_extend", "targets", "targets_extend")
        return {name: tf.io.VarLenFeature(tf.int64) for name in fields}, None


# What T2T registers itself (aliases.install registers them again after a registry reset).
T2T_REGISTERED_PROBLEMS = (Text2textCopyableTokens,)

__getattr__ = refusals.module_getattr("tensor2tensor.data_generators.pointer_generator_word")
