"""T2T's ``SubwordTextEncoder`` for a usr_dir (``data_generators/text_encoder.py``): the
project's compiled encoder (``text_encoding/text_encoder.py``) with T2T's internal methods and
attributes, which real usr_dirs call or override.

Why two paths: T2T encodes in Python, one overridable method a step (``encode`` ->
``_tokens_to_subtoken_ids`` -> ``_token_to_subtoken_ids`` -> ``_escaped_token_to_subtoken_ids``
-> ``_escaped_token_to_subtoken_strings``; ``decode`` -> ``_subtoken_ids_to_tokens`` ->
``_subtoken_id_to_subtoken_string``). When a subclass (or an instance) overrides one of those
steps, ``encode``/``decode`` run T2T's steps, so the override takes effect as in T2T;
otherwise the compiled path, whose ids are the same, encodes. The vocabulary is T2T's state
(``_all_subtoken_strings``, ``_subtoken_string_to_id``, ``_max_subtoken_len``, ``_alphabet``);
the compiled vocabulary is rebuilt from it when any of those is replaced or grows.
"""

from __future__ import annotations

import io
import operator
from collections.abc import Iterable

from t2t_repro.text_encoding import text_encoder as project
from t2t_repro.text_encoding import tokenizer
from t2t_repro.text_encoding.escaping import ESCAPE_CHARS, escape_token, unescape_token

_ENCODE_STEPS = (
    "_tokens_to_subtoken_ids",
    "_token_to_subtoken_ids",
    "_escaped_token_to_subtoken_ids",
    "_escaped_token_to_subtoken_strings",
)
_LOOKUP_STEPS = ("_subtoken_id_to_subtoken_string", "vocab_size")


def _text(s) -> str:
    """T2T's ``native_to_unicode``: bytes decoded as UTF-8, undecodable bytes dropped."""
    return project.decode_utf8_dropping_errors(s) if isinstance(s, (bytes, bytearray)) else s


class SubwordTextEncoder(project.SubwordTextEncoder):
    """T2T's ``SubwordTextEncoder``: T2T's signatures, internals and file reading."""

    def __init__(self, filename: str | None = None) -> None:
        self._subtoken_string_to_id: dict[str, int] = {}
        self._max_subtoken_len = 0
        self._compiled_for: tuple | None = None  # the T2T state _compiled was built from
        super().__init__(None)
        self._alphabet = set()
        self.filename = filename
        if filename is not None:
            self._load_from_file(filename)  # T2T's __init__ calls it: an override is used

    def _overrides(self, names: tuple[str, ...]) -> bool:
        cls = type(self)
        return any(
            getattr(cls, n) is not getattr(SubwordTextEncoder, n) or n in self.__dict__
            for n in names
        )

    @property
    def graph_kind(self) -> str:
        """The exporter's in-graph encoder is the vocabulary's own segmentation: an encoder
        that overrides a step of it has none, and the exporter says so in one line."""
        steps = ("encode", "decode", "decode_list", "_subtoken_ids_to_tokens")
        overridden = self._overrides((*steps, *_ENCODE_STEPS, *_LOOKUP_STEPS))
        return "T2T SubwordTextEncoder subclass" if overridden else "subwords"

    # -- T2T's state, and the compiled vocabulary made from it --------------------------
    def _state(self) -> tuple:
        """T2T's vocabulary objects, and their sizes (a set or dict may grow in place)."""
        objects = (self._all_subtoken_strings, self._subtoken_string_to_id, self._alphabet)
        return objects, (*map(len, objects), self._max_subtoken_len)

    def _init_subtokens(self, subtoken_strings, alphabet=None) -> None:
        """The project's builders and reader: T2T's index of what they set."""
        super()._init_subtokens(subtoken_strings, alphabet)
        strings = self._all_subtoken_strings
        self._max_subtoken_len = max(map(len, strings))
        self._subtoken_string_to_id = {s: i for i, s in enumerate(strings) if s}
        self._compiled_for = self._state()

    def _check_ready(self) -> None:
        """Before the compiled path encodes: rebuild its vocabulary if T2T's state changed."""
        if not self._subtoken_string_to_id and not self._all_subtoken_strings:
            super()._check_ready()  # no vocabulary: the project's one line
        state, old = self._state(), self._compiled_for
        if old and old[1] == state[1] and all(map(operator.is_, old[0], state[0])):
            return
        # What T2T's greedy loop can pick: the dict's strings up to _max_subtoken_len.
        strings = [""] * (max(self._subtoken_string_to_id.values(), default=-1) + 1)
        for s, i in self._subtoken_string_to_id.items():
            if 0 <= i and len(s) <= self._max_subtoken_len:
                strings[i] = s
        from t2t_repro.text_encoding.compiled_vocabulary import CompiledVocabulary

        self._compiled = CompiledVocabulary(strings, self._alphabet)
        self._compiled_for = state

    def _init_subtokens_from_list(self, subtoken_strings, reserved_tokens=None) -> None:
        """T2T's: the reserved tokens first (never encoded to: not in the dict), the alphabet
        unchanged (``SubwordTextEncoder._init_subtokens_from_list``)."""
        if reserved_tokens is None:
            reserved_tokens = []
        if not subtoken_strings:  # T2T: max() of an empty list
            raise ValueError("a subword vocabulary needs at least one subtoken")
        self._all_subtoken_strings = (
            reserved_tokens + subtoken_strings if reserved_tokens else subtoken_strings
        )
        self._max_subtoken_len = max([len(s) for s in subtoken_strings])
        self._subtoken_string_to_id = {
            s: i + len(reserved_tokens) for i, s in enumerate(subtoken_strings) if s
        }

    def _init_alphabet_from_tokens(self, tokens: Iterable[str]) -> None:
        """T2T's: every character of ``tokens`` and the escape characters."""
        self._alphabet = {c for token in tokens for c in token}
        self._alphabet |= ESCAPE_CHARS

    # -- files ---------------------------------------------------------------------------
    def _load_from_file(self, filename: str) -> None:
        """T2T's (a missing file is a ValueError); the lines as ``tf.gfile`` gives them."""
        lines = project.read_vocab_lines(filename)
        f = io.StringIO("".join(line + "\n" for line in lines))
        f.name = filename
        self._load_from_file_object(f)

    def _load_from_file_object(self, f) -> None:
        """T2T's reading of each line (``project.subtoken_strings_of_lines``, which also
        refuses a corrupt quoted file), then T2T's two init steps."""
        lines = [_text(line) for line in f]
        lines = [line[:-1] if line.endswith("\n") else line for line in lines]
        strings = project.subtoken_strings_of_lines(getattr(f, "name", "vocabulary"), lines)
        self._init_subtokens_from_list(strings)
        self._init_alphabet_from_tokens(strings)

    def store_to_file(self, filename: str, add_single_quotes: bool = True) -> None:
        super().store_to_file(filename, add_single_quotes)

    # -- encoding: the compiled path, or T2T's steps when one is overridden ---------------
    def encode(self, s) -> list[int]:
        if self._overrides(_ENCODE_STEPS):
            return self._tokens_to_subtoken_ids(tokenizer.encode(_text(s)))
        return super().encode(s)

    def encode_without_tokenizing(self, token_text) -> list[int]:
        if self._overrides(_ENCODE_STEPS):
            return self._tokens_to_subtoken_ids([_text(token_text)])
        return super().encode_without_tokenizing(token_text)

    def encode_batch(self, texts: Iterable[str]) -> list[list[int]]:
        if self._overrides(("encode", *_ENCODE_STEPS)):
            return [self.encode(t) for t in texts]
        return super().encode_batch(texts)

    def _tokens_to_subtoken_ids(self, tokens: Iterable[str]) -> list[int]:
        ret: list[int] = []
        for token in tokens:
            ret.extend(self._token_to_subtoken_ids(token))
        return ret

    def _token_to_subtoken_ids(self, token: str) -> list[int]:
        """T2T's, without its result cache (the same ids)."""
        return self._escaped_token_to_subtoken_ids(escape_token(token, self._alphabet))

    def _escaped_token_to_subtoken_ids(self, escaped_token: str) -> list[int]:
        ids = self._subtoken_string_to_id
        return [ids[s] for s in self._escaped_token_to_subtoken_strings(escaped_token)]

    def _escaped_token_to_subtoken_strings(self, escaped_token: str) -> list[str]:
        """T2T's greedy segmentation: the longest subtoken at each position."""
        ret, start, n = [], 0, len(escaped_token)
        while start < n:
            for end in range(min(n, start + self._max_subtoken_len), start, -1):
                if escaped_token[start:end] in self._subtoken_string_to_id:
                    ret.append(escaped_token[start:end])
                    start = end
                    break
            else:  # T2T asserts; the project's one line
                raise ValueError(
                    f"cannot encode the escaped token {escaped_token[:80]!r}: no subtoken of "
                    f"this vocabulary starts at its position {start}"
                )
        return ret

    # -- decoding: T2T's steps, the project's lookup unless T2T's is overridden ------------
    def decode(self, ids, strip_extraneous: bool = False) -> str:
        if strip_extraneous:  # T2T's strip_ids
            ids, reserved = list(ids), range(self._num_reserved_ids or 0)
            while ids and ids[-1] in reserved:
                ids.pop()
        return tokenizer.decode(self._subtoken_ids_to_tokens(ids))

    def decode_list(self, ids) -> list[str]:
        if self._overrides(_LOOKUP_STEPS):
            return [self._subtoken_id_to_subtoken_string(i) for i in ids]
        return super().decode_list(ids)

    def _subtoken_ids_to_tokens(self, subtokens) -> list[str]:
        strings = SubwordTextEncoder.decode_list(self, subtokens)
        tokens = (unescape_token(t + "_") for t in "".join(strings).split("_") if t)
        return [t for t in tokens if t]

    def _subtoken_id_to_subtoken_string(self, subtoken: int) -> str:
        if 0 <= subtoken < self.vocab_size:
            return self._all_subtoken_strings[subtoken]
        return ""
