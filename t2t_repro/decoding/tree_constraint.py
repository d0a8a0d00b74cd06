"""Tree-constrained search: only tokens that keep the output a well-formed linearised tree.

The target is T2T's linearisation (``parsing.linearize``): ``S NP DT NN /NP VP VBD /VP . /S``.
At every step the search's log-probabilities are masked so that the finished output is always
one tree over exactly the input's words:

- an opener (a phrase label) only while fewer POS slots than words have been emitted (a new
  constituent needs a word) and, once the root has closed, never again (one root); at most
  ``MAX_OPEN_RUN`` openers in a row and ``MAX_SAME_LABEL_RUN`` of one label in a row (what
  the treebank has);
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
XLA. The searches call ``constrain(log_probs, ids, i, states)`` after the model's step
(``beam_search``/``greedy_search`` argument ``constrain_fn``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from t2t_repro.parsing.linearize import PTB_POS_TAGS, PUNCTUATION_TAGS

EOS_ID = 1
NEG_INF = -1e7
MAX_DEPTH = 64  # open constituents at once (the sample's training trees: 28 at most)
# Openers in a row before a tag (the sample's training targets: 88,120 runs, 28 longer than 4),
# and the same label opened in a row (69,869 runs, 16 longer than 3). An undertrained model
# that wants to end early otherwise opens VP VP VP ... by the dozen until the length limit.
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
        self, target_tokens: Sequence[str], renormalize: bool = False, pos_tags=PTB_POS_TAGS
    ) -> None:
        tokens = list(target_tokens)
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
        or above 0: its running sum minus the running minimum of min(0, sum)."""
        step = tf.cast(words == "`", tf.int32) - tf.cast(words == "'", tf.int32)
        before = tf.math.cumsum(step, axis=1, exclusive=True)
        floor = tf.transpose(tf.scan(tf.minimum, tf.transpose(tf.minimum(before, 0))))
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
        indices are clipped, and such hypotheses carry a -1e7 score)."""
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
            & (state["open_run"] < MAX_OPEN_RUN)
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
            & (state["same_run"] >= MAX_SAME_LABEL_RUN)[:, None]
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

    def constrain(
        self, log_probs: tf.Tensor, ids: tf.Tensor, i, state: dict, decode_length
    ) -> tuple[tf.Tensor, dict]:
        """Applies the token of step i-1 (column i of ``ids``) to ``state``; masks ``log_probs``."""
        state = self.update(state, tf.gather(ids, i, axis=1))  # column 0 (PAD) changes nothing
        allowed = self.allowed(state, decode_length - 1 - i)
        if self.renormalize:
            masked = tf.where(allowed, log_probs, NEG_INF)
            return masked - tf.reduce_logsumexp(masked, axis=-1, keepdims=True), state
        return tf.where(allowed, log_probs, log_probs + NEG_INF), state


def constrained_step(
    step, constraint: TreeConstraint, model_cache, word_classes, num_words, decode_length
):
    """(step, states, constrain_fn) for a search: the model's cache and the tree state travel
    together as ``{"model": ..., "tree": ...}``."""

    def wrapped_step(ids, i, states):
        logits, cache = step(ids, i, states["model"])
        return logits, {"model": cache, "tree": states["tree"]}

    def constrain_fn(log_probs, ids, i, states):
        log_probs, tree = constraint.constrain(log_probs, ids, i, states["tree"], decode_length)
        return log_probs, {"model": states["model"], "tree": tree}

    states = {"model": model_cache, "tree": constraint.initial_state(word_classes, num_words)}
    return wrapped_step, states, constrain_fn
