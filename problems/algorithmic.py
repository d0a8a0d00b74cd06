"""Small generated problems for tests and the offline quickstart: no download, fixed seeds.

* ``algorithmic_copy``: copy a random sequence of symbols (``"c a f"`` -> ``"c a f"``).
* ``algorithmic_reverse``: reverse it (``"c a f"`` -> ``"f a c"``).
* ``translate_toy`` (and ``translate_toy_rev``): translation between two made-up languages with
  real structure: a small grammar generates SVO sentences in language A; language B maps every
  word deterministically, is verb-final (SOV), puts adjectives and the determiner after the
  noun, uses postpositions, marks plural with a suffix on nouns and makes the verb agree with a
  plural subject. A small Transformer learns it in minutes; its test split is BLEU-able text.

Symbols are space-separated words, so the shared subword vocab (built like any other) holds
one id per symbol. Datagen takes a few seconds.
"""

from __future__ import annotations

import random

from t2t_repro import registry
from t2t_repro.builtin.problems.base import Text2TextProblem
from t2t_repro.builtin.problems.reversed_problem import register_with_rev
from t2t_repro.data.pair_sources import GeneratedPairs


class AlgorithmicProblem(Text2TextProblem):
    """Random symbol sequences -> a deterministic function of them."""

    num_shards = {"train": 2, "dev": 1, "test": 1}
    num_pairs = {"train": 10000, "dev": 500, "test": 500}
    approx_vocab_size = 2**6
    symbols = "abcdefghij"
    min_length, max_length = 1, 16
    seed = 1234
    eval_metrics = ("accuracy", "accuracy_per_sequence", "neg_log_perplexity")

    def transform(self, seq: list[str]) -> list[str]:
        raise NotImplementedError

    def generate_pairs(self, split: str):
        rng = random.Random(f"{self.name}:{split}:{self.seed}")
        for _ in range(self.num_pairs[split]):
            seq = [
                rng.choice(self.symbols)
                for _ in range(rng.randint(self.min_length, self.max_length))
            ]
            yield " ".join(seq), " ".join(self.transform(seq))

    def split_sources(self, tmp_dir: str, split: str):
        return [
            GeneratedPairs(lambda: self.generate_pairs(split), f"{self.name} {split} (generated)")
        ]


@registry.register_problem
class AlgorithmicCopy(AlgorithmicProblem):
    """Copy the input sequence."""

    def transform(self, seq):
        return list(seq)


@registry.register_problem
class AlgorithmicReverse(AlgorithmicProblem):
    """Reverse the input sequence."""

    def transform(self, seq):
        return seq[::-1]


# ----------------------------------------------------------------------------- toy translation
# word in language A -> word in language B
NOUNS = {
    "dax": "hola",
    "wug": "mesi",
    "blick": "turo",
    "fep": "kanu",
    "zorp": "bele",
    "mib": "pono",
    "toma": "sira",
    "lurn": "gavi",
    "kiv": "lute",
    "snell": "noka",
    "gorp": "fedu",
    "yint": "rami",
}
ADJECTIVES = {
    "vel": "zeki",
    "mok": "lomu",
    "sarn": "pira",
    "plim": "tasa",
    "dree": "wodi",
    "hux": "neru",
}
VERBS = {
    "kels": "amba",
    "brapt": "ilto",
    "tosh": "uvek",
    "gliv": "ospa",
    "murn": "egli",
    "fazz": "iruk",
}
DETERMINERS = {"ta": "si", "en": "nu"}
PREPOSITIONS = {"ul": "ge", "pim": "do", "dorsk": "ve"}
PLURAL_A, PLURAL_B, VERB_PLURAL_B = "s", "ri", "n"


def _noun_phrase(rng: random.Random) -> tuple[list[str], list[str], bool]:
    det = rng.choice(sorted(DETERMINERS))
    adjs = rng.sample(sorted(ADJECTIVES), rng.choice((0, 0, 1, 1, 2)))
    noun = rng.choice(sorted(NOUNS))
    plural = rng.random() < 0.3
    a = [det] + adjs + [noun + (PLURAL_A if plural else "")]
    b = (
        [NOUNS[noun] + (PLURAL_B if plural else "")]
        + [ADJECTIVES[x] for x in reversed(adjs)]
        + [DETERMINERS[det]]
    )
    return a, b, plural


def toy_sentence_pair(rng: random.Random) -> tuple[str, str]:
    """One (language A, language B) sentence pair from the grammar."""
    subj_a, subj_b, plural = _noun_phrase(rng)
    obj_a, obj_b, _ = _noun_phrase(rng)
    verb = rng.choice(sorted(VERBS))
    a, b = subj_a + [verb] + obj_a, subj_b + obj_b
    if rng.random() < 0.4:
        prep = rng.choice(sorted(PREPOSITIONS))
        pp_a, pp_b, _ = _noun_phrase(rng)
        a += [prep] + pp_a
        b += pp_b + [PREPOSITIONS[prep]]
    b.append(VERBS[verb] + (VERB_PLURAL_B if plural else ""))
    return " ".join(a) + " .", " ".join(b) + " ."


def toy_corpus(sizes: dict, seed: int) -> dict:
    """Unique sentences from the grammar, split into train/dev/test (no source sentence repeats)."""
    rng, seen, pairs = random.Random(seed), set(), []
    total = sum(sizes.values())
    while len(pairs) < total:
        src, tgt = toy_sentence_pair(rng)
        if src not in seen:
            seen.add(src)
            pairs.append((src, tgt))
    out, start = {}, 0
    for split in ("train", "dev", "test"):
        out[split] = pairs[start : start + sizes.get(split, 0)]
        start += sizes.get(split, 0)
    return out


@register_with_rev
class TranslateToy(Text2TextProblem):
    """Toy A -> B translation (see module docstring); ``translate_toy_rev`` is B -> A."""

    num_shards = {"train": 4, "dev": 1, "test": 1}
    num_pairs = {"train": 12000, "dev": 500, "test": 500}
    approx_vocab_size = 2**8
    seed = 20170612  # the Transformer paper's arXiv date
    _corpus_cache: dict = {}

    def corpus(self) -> dict:
        key = (self.seed, tuple(sorted(self.num_pairs.items())))
        if key not in TranslateToy._corpus_cache:
            TranslateToy._corpus_cache[key] = toy_corpus(self.num_pairs, self.seed)
        return TranslateToy._corpus_cache[key]

    def split_sources(self, tmp_dir: str, split: str):
        return [
            GeneratedPairs(lambda: iter(self.corpus()[split]), f"{self.name} {split} (generated)")
        ]
