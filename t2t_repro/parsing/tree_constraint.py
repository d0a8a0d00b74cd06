"""Tree-constrained search: only tokens that keep the output a well-formed linearised tree.

The target is T2T's linearisation (``parsing.linearize``): ``S NP DT NN /NP VP VBD /VP . /S``.
At every step the search's log-probabilities are masked so that the finished output is always
one tree over exactly the input's words:

- an opener (a phrase label) only while fewer POS slots than words have been emitted (a new
  constituent needs a word) and, once the root has closed, never again (one root); at most
  ``max_open_run`` openers in a row and ``max_same_label_run`` of one label in a row (what
  the training treebank has: ``run_limits``, computed at datagen);
- a closer only for the innermost open constituent, and only once it has a child (no empty
  brackets); the root closes only when every word has its slot. Other closers would close
  several constituents at once or none, which ``delinearize`` repairs but never scores well;
- a POS slot only inside a constituent and while fewer slots than words have been emitted. The
  slot of an input word that is punctuation (``PUNCTUATION_WORD_TAGS``) may only be its
  punctuation tag, and no other word may get a tag EVALB deletes (``, : `` '' . -NONE-``). The
  input words are known, so this is fair, and strict EVALB then scores every sentence;
- end of sequence only when the root has closed with every word slotted;
- the length limit: a token is allowed only if the words still unslotted, the constituents
  still open and EOS fit in the steps left, so a search that reaches the limit still ends with
  a valid tree. A hypothesis with nothing allowed (the limit is shorter than the sentence)
  may only end.

Scores: the mask is added to the model's log-softmax over the whole vocabulary, which is not
renormalised over the allowed tokens (``renormalize=False``, the default). A hypothesis then
keeps the model's own probability, so hypotheses stay comparable, and a step the constraint
forces is not free: renormalising gives log-prob 0 to forced tokens (the punctuation tag, the
closers at the end), which favours hypotheses the model thinks are wrong (label bias).
``renormalize=True`` gives the locally normalised alternative.

The per-hypothesis state (open constituents as a stack of closer ids, depth, slots emitted,
whether the innermost constituent has a child) is a dict of tensors carried in the search's
state and gathered with the beams, so it works in beam and greedy search, with and without
XLA. It is a ``decoding.constraints.SearchConstraint`` (by its methods: this package sits below
``decoding/``): the parsing problems hand it to the searches (``Problem.search_constraint``),
and it builds its own inputs, each input word's class and the word count, from the source
lines (``batch_inputs``) or in the graph from the source strings (``graph_inputs``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.parsing.linearize import PTB_POS_TAGS, PUNCTUATION_TAGS
from t2t_repro.text_encoding.reserved_tokens import EOS_ID

MAX_DEPTH = 64  # open constituents at once (the sample's training trees: 28 at most)
# Openers in a row before a tag (the sample's training targets: 88,120 runs, 28 longer than 4),
# and the same label opened in a row (69,869 runs, 16 longer than 3). An undertrained model
# that wants to end early otherwise opens VP VP VP ... by the dozen until the length limit.
# The limits come from the training treebank (``run_limits`` at datagen); these, the sample's,
# are the fallback for data dirs made before that.
MAX_OPEN_RUN = 4
MAX_SAME_LABEL_RUN = 3
# Input words that are punctuation and the tags they get (PTB usage). A ' closes a quote
# (tag '') only after an unclosed `; otherwise it is a possessive (POS) and an ordinary word:
# so in the sample's train split 76 of 77, and in dev and test all 5.
PUNCTUATION_WORD_TAGS = {word: (tag,) for word, tag in PUNCTUATION_TAGS.items()}
# Tags EVALB (COLLINS.prm) deletes: only punctuation words may get them.
DELETED_TAGS = (",", ":", "``", "''", ".", "-NONE-")


class TreeConstraint:
    """Masks for linearised-tree targets over a one-id-per-token target vocabulary."""

    def __init__(
        self,
        target_tokens: Sequence[str],
        renormalize: bool = False,
        pos_tags=PTB_POS_TAGS,
        max_open_run: int = MAX_OPEN_RUN,
        max_same_label_run: int = MAX_SAME_LABEL_RUN,
        input_encoder=None,
        one_id_per_word: bool = False,
    ) -> None:
        """``input_encoder`` gives the words of id rows decoded without their lines;
        ``one_id_per_word``: the source vocabulary has one id per word, so a line's words are
        its whitespace tokens (its ids decode rare words as their class)."""
        tokens = list(target_tokens)
        self.max_open_run = int(max_open_run)
        self.max_same_label_run = int(max_same_label_run)
        self.input_encoder = input_encoder
        self.one_id_per_word = one_id_per_word
        self._table = None
        ids = {t: i for i, t in enumerate(tokens)}
        vocab = len(tokens)
        self.vocab_size = vocab
        self.renormalize = renormalize
        closer_of = np.full([vocab], -1, np.int32)
        is_tag = np.zeros([vocab], bool)
        for i, tok in enumerate(tokens):
            if tok.startswith("<") and tok.endswith(">"):
                continue  # <pad>, <EOS>, <UNK>
            if tok in pos_tags:
                is_tag[i] = True
            elif not tok.startswith("/") and "/" + tok in ids:
                closer_of[i] = ids["/" + tok]
        missing = [t for t in (",", ".", ":", "``", "''", "NN") if t not in ids]
        if missing:
            raise ValueError(
                f"tree constraint: the target vocabulary lacks {missing}; it needs "
                "one id per label, closer and POS tag (a token vocabulary)."
            )
        deleted = np.array([t in DELETED_TAGS for t in tokens])
        # Class 0: an ordinary word; then one class per punctuation tag set.
        tag_sets = sorted(set(PUNCTUATION_WORD_TAGS.values()))
        self._class_of_word = {w: 1 + tag_sets.index(t) for w, t in PUNCTUATION_WORD_TAGS.items()}
        class_tags = [is_tag & ~deleted]
        for tag_set in tag_sets:
            row = np.zeros([vocab], bool)
            row[[ids[t] for t in tag_set if t in ids]] = True
            class_tags.append(row)
        self.class_tags = tf.constant(np.stack(class_tags))
        self.closer_of = tf.constant(closer_of)
        self.is_opener = tf.constant(closer_of >= 0)
        self.is_tag = tf.constant(is_tag)
        self.is_closer = tf.constant(np.isin(np.arange(vocab), closer_of[closer_of >= 0]))

    # -- its inputs (decoding/constraints.py) ----------------------------------------------
    def batch_inputs(self, rows, lines, length: int) -> tuple[np.ndarray, np.ndarray]:
        """(word classes [B, length], word counts [B]) of a batch of id rows (EOS included):
        the words are the lines' when the source has one id per word, else the decoded ids
        (a subword source is invertible)."""
        if lines is not None and self.one_id_per_word:
            words = [line.split()[: len(row) - 1] for line, row in zip(lines, rows, strict=True)]
        elif self.input_encoder is None:
            raise ValueError("the tree constraint needs the input encoder to read id rows")
        else:
            words = [
                self.input_encoder.decode([i for i in row if i != EOS_ID]).split() for row in rows
            ]
        classes = np.stack([self.word_classes(w, length) for w in words])
        return classes, np.array([len(w) for w in words], np.int32)

    def export_resources(self) -> list:
        if self._table is None:
            self._table = self.word_class_table()
        return [self._table]

    def graph_inputs(self, sources: tf.Tensor, inputs: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """``batch_inputs`` in the graph: the words are the whitespace-split ``sources``."""
        words = tf.strings.split(sources)
        classes = self.graph_word_classes(words.to_tensor(""), self.export_resources()[0])
        length = tf.shape(inputs)[1]
        classes = tf.pad(classes, [[0, 0], [0, tf.maximum(0, length - tf.shape(classes)[1])]])
        return classes[:, :length], tf.cast(words.row_lengths(), tf.int32)

    # -- host side -------------------------------------------------------------------------
    def word_classes(self, words: Sequence[str], length: int) -> np.ndarray:
        """[length] int32: each word's class (0 ordinary, k punctuation), zero-padded."""
        out = np.zeros([max(length, len(words))], np.int32)
        open_quotes = 0
        for k, word in enumerate(words):
            if word == "'" and open_quotes:
                word, open_quotes = "''", open_quotes - 1
            open_quotes += word == "`"
            out[k] = self._class_of_word.get(word, 0)
        return out[:length]

    def word_class_table(self) -> tf.lookup.StaticHashTable:
        """Punctuation word -> class, for ``graph_word_classes`` (an exported model keeps it)."""
        words = sorted(self._class_of_word)
        return tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(words), tf.constant([self._class_of_word[w] for w in words], tf.int32)
            ),
            0,
        )

    @staticmethod
    def graph_word_classes(words: tf.Tensor, table) -> tf.Tensor:
        """``word_classes`` in the graph: ``words`` [B, W] strings ("" padding) -> [B, W] int32.
        The open single quotes before each word follow a walk (+1 at `, -1 at ') that stays at
        or above 0: its running sum minus the running minimum of min(0, sum). A blank source
        (no word) scans nothing: ``tf.scan`` would read a first element that is not there."""
        step = tf.cast(words == "`", tf.int32) - tf.cast(words == "'", tf.int32)
        before = tf.math.cumsum(step, axis=1, exclusive=True)
        floor = tf.cond(
            tf.shape(words)[1] > 0,
            lambda: tf.transpose(tf.scan(tf.minimum, tf.transpose(tf.minimum(before, 0)))),
            lambda: before,
        )
        quote = (words == "'") & (before - floor > 0)
        return table.lookup(tf.where(quote, "''", words))

    # -- in the search ---------------------------------------------------------------------
    def initial_state(self, word_classes: tf.Tensor, num_words: tf.Tensor) -> dict:
        """State for [B] sentences: ``word_classes`` [B, L] int32, ``num_words`` [B] int32."""
        batch = tf.shape(word_classes)[0]
        zeros = tf.zeros([batch], tf.int32)
        return {
            "classes": tf.cast(word_classes, tf.int32),
            "num_words": tf.cast(num_words, tf.int32),
            "stack": tf.zeros([batch, MAX_DEPTH], tf.int32),
            "depth": zeros,
            "slots": zeros,
            "has_child": tf.zeros([batch], tf.bool),
            "started": tf.zeros([batch], tf.bool),
            "open_run": zeros,
            "same_run": zeros,
            "last_opened": zeros - 1,
        }

    def update(self, state: dict, token: tf.Tensor) -> dict:
        """The state after ``token`` [N] (a token the mask did not allow leaves it unharmed:
        such hypotheses carry a -1e7 score). An id past the vocabulary (``vocab_divisor``'s
        padding, always masked) changes nothing, as PAD (id 0)."""
        token = tf.where(token < tf.shape(self.is_opener)[0], token, tf.zeros_like(token))
        opens = tf.gather(self.is_opener, token)
        tags = tf.gather(self.is_tag, token)
        closes = tf.gather(self.is_closer, token)
        depth = state["depth"]
        push = tf.logical_and(opens, depth < MAX_DEPTH)
        at_top = tf.one_hot(
            tf.clip_by_value(depth, 0, MAX_DEPTH - 1), MAX_DEPTH, on_value=True, off_value=False
        )
        stack = tf.where(
            tf.logical_and(at_top, push[:, None]),
            tf.gather(self.closer_of, token)[:, None],
            state["stack"],
        )
        depth = (
            depth + tf.cast(push, tf.int32) - tf.cast(tf.logical_and(closes, depth > 0), tf.int32)
        )
        same = opens & tf.equal(token, state["last_opened"])
        return dict(
            state,
            stack=stack,
            depth=depth,
            open_run=tf.where(
                opens, state["open_run"] + 1, tf.where(tags | closes, 0, state["open_run"])
            ),
            same_run=tf.where(
                same,
                state["same_run"] + 1,
                tf.where(opens, 1, tf.where(tags | closes, 0, state["same_run"])),
            ),
            last_opened=tf.where(opens, token, tf.where(tags | closes, -1, state["last_opened"])),
            slots=state["slots"] + tf.cast(tags, tf.int32),
            has_child=tf.where(
                opens, False, tf.logical_or(state["has_child"], tf.logical_or(tags, closes))
            ),
            started=tf.logical_or(state["started"], opens),
        )

    def allowed(self, state: dict, steps_left) -> tf.Tensor:
        """[N, V] bool: tokens allowed now, with ``steps_left`` steps after this one."""
        depth, slots, words = state["depth"], state["slots"], state["num_words"]
        todo = words - slots

        def fits(todo_after, depth_after):  # words to slot + closers + EOS within the limit
            return todo_after + depth_after + 1 <= steps_left

        more_words = todo > 0
        open_ok = (
            more_words
            & (depth < MAX_DEPTH)
            & fits(todo, depth + 1)
            & (state["open_run"] < self.max_open_run)
        )
        tag_ok = more_words & (depth > 0) & fits(todo - 1, depth)
        close_ok = (
            (depth > 0) & state["has_child"] & ((depth > 1) | ~more_words) & fits(todo, depth - 1)
        )
        eos_ok = state["started"] & (depth == 0) & ~more_words
        slot_class = tf.gather(
            state["classes"],
            tf.clip_by_value(slots, 0, tf.shape(state["classes"])[1] - 1),
            batch_dims=1,
        )
        top = tf.gather(state["stack"], tf.clip_by_value(depth - 1, 0, MAX_DEPTH - 1), batch_dims=1)
        vocab = self.vocab_size
        repeated = (
            tf.one_hot(state["last_opened"], vocab, on_value=True, off_value=False)
            & (state["same_run"] >= self.max_same_label_run)[:, None]
        )
        allowed = (
            (open_ok[:, None] & self.is_opener[None] & ~repeated)
            | (tag_ok[:, None] & tf.gather(self.class_tags, slot_class))
            | (close_ok[:, None] & tf.one_hot(top, vocab, on_value=True, off_value=False))
            | (eos_ok[:, None] & tf.one_hot(EOS_ID, vocab, on_value=True, off_value=False)[None])
        )
        stuck = ~tf.reduce_any(allowed, axis=1)
        return allowed | (
            stuck[:, None] & tf.one_hot(EOS_ID, vocab, on_value=True, off_value=False)[None]
        )

    def allowed_next(self, ids: tf.Tensor, i, state: dict, decode_length) -> tuple:
        """Applies the token of step i-1 (column i of ``ids``) to ``state``; (allowed tokens
        [N, V], state). The search masks the rest (``decoding.constraints.mask_log_probs``)."""
        state = self.update(state, tf.gather(ids, i, axis=1))  # column 0 (PAD) changes nothing
        return self.allowed(state, decode_length - 1 - i), state


def tree_constraint_for(
    target_encoder, dhp, limits: dict | None = None, input_encoder=None, one_id_per_word=False
) -> TreeConstraint | None:
    """The tree constraint the decode hparams ask for (``tree_constraint``), else None;
    ``limits``: ``run_limits`` of the training treebank."""
    if not dhp.get("tree_constraint", False):
        return None
    tokens = getattr(target_encoder, "tokens", None)
    if tokens is None:
        raise ValueError(
            "tree_constraint=True needs a target vocabulary with one id per token "
            "(a parsing problem's; rerun t2t-datagen if its vocab is a subword "
            "one), or pass --decode_hparams=tree_constraint=False."
        )
    return TreeConstraint(
        tokens,
        renormalize=dhp.get("tree_renormalize", False),
        input_encoder=input_encoder,
        one_id_per_word=one_id_per_word,
        **(limits or {}),
    )


RUN_LIMIT_SHARE = 0.001  # a limit may cut at most this share of the training treebank's runs


def run_limits(targets: Iterable[str], pos_tags=PTB_POS_TAGS) -> dict[str, int]:
    """``{"max_open_run", "max_same_label_run"}`` of linearised training trees: for openers in
    a row, and for one label opened in a row, the smallest limit that at most
    ``RUN_LIMIT_SHARE`` of the treebank's runs exceed (rare deep chains are cut, so an
    undertrained model cannot open VP VP VP ... until the length limit). The PTB sample gives
    4 and 3, today's fallback values."""
    open_runs: Counter = Counter()
    same_runs: Counter = Counter()
    for target in targets:
        run = same = 0
        last = None
        for token in target.split() + ["/"]:  # a final closer ends the last run
            if token in pos_tags or token.startswith("/"):
                open_runs[run] += run > 0
                same_runs[same] += same > 0
                run = same = 0
                last = None
                continue
            run += 1
            if token != last and same:
                same_runs[same] += 1
                same = 0
            same, last = same + 1, token
    return {
        "max_open_run": _limit(open_runs, MAX_OPEN_RUN),
        "max_same_label_run": _limit(same_runs, MAX_SAME_LABEL_RUN),
    }


def _limit(runs: Counter, fallback: int) -> int:
    """The smallest n with at most ``RUN_LIMIT_SHARE`` of ``runs`` (length -> count) longer."""
    total = sum(runs.values())
    if not total:
        return fallback
    longer = total
    for n in range(1, max(runs) + 1):
        longer -= runs.get(n, 0)
        if longer <= RUN_LIMIT_SHARE * total:
            return n
    return max(runs)
