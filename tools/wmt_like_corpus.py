#!/usr/bin/env python3
"""A WMT14-sized EN-DE corpus made up on the spot, in the layout ``translate_ende_wmt32k`` reads.

    .venv/bin/python -m tools.wmt_like_corpus --pairs=4500000 --tmp_dir=/tmp/wmt_like

Why: the real WMT14 data is more than a gigabyte of downloads that offline machines cannot
fetch, yet datagen's cost at that size (time, memory, disk) is a claim users need to check.
This corpus has what matters for that cost: the size, WMT14's mix and line lengths, a Zipfian
vocabulary of well over a million types (so the subword vocab is built from a realistic long
tail) and web-text dirt.

* Files (plain UTF-8-ish text, one sentence a line, as ``problems/translate_wmt.py`` finds them
  in ``--tmp_dir``): ``europarl-v7.de-en.{en,de}``, ``commoncrawl.de-en.{en,de}``,
  ``news-commentary-v13.de-en.{en,de}`` (train, shares of the real line counts),
  ``newstest2013.{en,de}`` (dev) and ``newstest2014-deen.{en,de}`` (test).
* Lengths: log-normal words per English sentence per corpus (~23 whitespace-separated words on
  average, German ~22), German length correlated with it, and rare very long lines (hundreds
  to thousands of words).
* Words: per language a table of generated word forms (syllables, German compounds and
  capitalised nouns, English possessives, hyphenations, numbers), drawn with Zipf's law
  (P(rank k) ~ 1/k, steeper in the tail); commas and final punctuation attached as in raw text.
* Dirt, mostly in commoncrawl as in the real one: empty lines on one or both sides, URLs,
  e-mail addresses, HTML entities and tags, tabs, control characters, a stray CR, U+2028,
  no-break and zero-width spaces, mojibake, Latin-1 and other invalid UTF-8 bytes, emoji.
* Deterministic: each chunk of lines has its own generator seeded by (seed, corpus, chunk), so
  the same seed and sizes give byte-identical files (with the same numpy version).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time

import numpy as np

from t2t_repro.atomic_write import atomic_open

CHUNK_LINES = 50_000  # lines generated at a time (fixed: part of what a seed means)
DEFAULT_TYPES = 1_500_000  # word types per language (EN and DE tables are distinct)
# The real WMT14/T2T line counts (T2T's translate_ende_wmt32k mix), which set each share.
REAL_TRAIN_LINES = {
    "europarl-v7.de-en": 1_920_209,
    "commoncrawl.de-en": 2_399_123,
    "news-commentary-v13.de-en": 284_246,
}


@dataclasses.dataclass(frozen=True)
class LengthModel:
    """Words per English line: log-normal with this mean; a few very long and empty lines."""

    mean_words: float
    sigma: float
    very_long_rate: float  # lines of 300-3000 words
    empty_rate: float  # lines with an empty side (both sides empty a third of the time)
    dirt_rate: float  # per token: a web-text oddity instead of a word


MODELS = {
    "europarl-v7.de-en": LengthModel(27.0, 0.60, 2e-5, 1e-3, 1e-4),
    "commoncrawl.de-en": LengthModel(22.0, 0.85, 1e-4, 6e-3, 4e-3),
    "news-commentary-v13.de-en": LengthModel(25.5, 0.50, 1e-5, 2e-3, 2e-4),
    "newstest2013": LengthModel(22.0, 0.55, 0.0, 0.0, 1e-4),
    "newstest2014-deen": LengthModel(22.5, 0.55, 0.0, 0.0, 1e-4),
}

# Web-text oddities (bytes: some are not UTF-8). Each is one "word" followed by a space.
ODDITIES = [
    b"http://www.beispiel-seite.de/index.php?id=4711&amp;lang=de",
    b"https://www.example.com/en/products/item_12.html#top",
    b"www.hotel-am-see.at",
    b"info@firma-xy.de",
    b"&amp;",
    b"&quot;",
    b"&lt;br&gt;",
    b"&#39;",
    b"&nbsp;",
    b"<br />",
    b"<b>Preis:</b>",
    b"\t",
    b"col1\tcol2",
    b"\x0b",
    b"\x0c",
    b"\x1b[0m",
    b"\x00",
    b"\x7f",
    b"mid\rline",
    "Absatz\u2028Zeile".encode(),
    "100\u00a0km".encode(),
    "zero\u200bwidth".encode(),
    "\ufeffBOM".encode(),
    "fÃ¼r".encode(),  # mojibake: UTF-8 read as Latin-1, written as UTF-8
    "MÃ¤rz".encode(),
    "\U0001f600".encode(),
    "東京".encode(),
    "Москва".encode(),
    b"gr\xfc\xdfe",  # Latin-1 bytes: invalid UTF-8
    b"Stra\xdfe",
    b"\xff\xfe",
    b"\xc3\x28",  # a lead byte without its continuation
    b"\xe2\x82",  # a truncated 3-byte sequence
    b"\xed\xa0\x80",  # an encoded surrogate
    b"\xc0\xaf",  # an overlong encoding
    b"==========",
    b"...",
    b"***",
    b"A" * 40 + b"QkFTRTY0" * 40,  # a 360-byte "word" (base64 junk)
]
COMMA = b", "
ENDINGS = [b"\n", b".\n", b".\n", b".\n", b".\n", b".\n", b"?\n", b"!\n", b":\n", b'"\n']
ENDING_P = np.array([0.06, 0.74, 0, 0, 0, 0, 0.07, 0.03, 0.05, 0.05])

EN_ONSETS = (
    "b c d f g h j k l m n p r s t v w y br cr dr fr gr pr tr bl cl fl pl sl sh ch th st sp wh qu"
).split()
EN_NUCLEI = "a e i o u y ea ee oo ou ai oa ie".split()
EN_CODAS = [""] * 6 + "n s t r l d m ng nd st ck ght rt ss ll ce te".split()
DE_ONSETS = (
    "b d f g h j k l m n p r s t w z br dr fr gr kr pr tr bl fl gl kl pl schl schw sch st sp pf ch"
).split()
DE_NUCLEI = "a e i o u ä ö ü au ei eu ie".split()
DE_CODAS = [""] * 4 + "n s t r l m ng nd st ch cht ß ck tz ft rn".split()
DE_SUFFIXES = [""] * 24 + "ung heit keit lich isch chen schaft en er es em".split()
DE_LINKS = ["", "", "s", "en", "e"]


def _ragged_gather(blob: np.ndarray, start: np.ndarray, length: np.ndarray, ids: np.ndarray):
    """The concatenation of pieces ``ids`` of ``blob`` (piece i: ``length[i]`` bytes from
    ``start[i]``): one index per output byte. Returns (bytes array, each id's output start)."""
    lens = length[ids]
    out_start = np.cumsum(lens) - lens
    index = np.repeat(start[ids] - out_start, lens) + np.arange(int(lens.sum()))
    return blob[index], out_start


def _pieces(strings: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(blob, start, length) of byte strings laid end to end."""
    length = np.fromiter(map(len, strings), np.int64, len(strings))
    return np.frombuffer(b"".join(strings), np.uint8), np.cumsum(length) - length, length


def _words(rng, n: int, onsets, nuclei, codas, per_log_rank: float, most: int) -> list[bytes]:
    """n word forms of random syllables (onset + nucleus + coda, short ones likelier), in rank
    order: the i-th has 1 + Poisson(per_log_rank * ln(i + 1)^2) syllables (at most ``most``), so
    frequent words are short (Zipf's law of abbreviation) and tokens average ~5 (EN) and ~6 (DE)
    characters, as in WMT text."""
    parts = [(o, v, c) for o in onsets for v in nuclei for c in codas]
    syllables = [(o + v + c).encode() for o, v, c in parts]
    weight = np.array(
        [(3 if not c else 1 / len(c) ** 2) / (len(o) * len(v)) ** 2 for o, v, c in parts]
    )
    blob, start, length = _pieces(syllables + [b"\n"])
    counts = 1 + rng.poisson(per_log_rank * np.log1p(np.arange(n)) ** 2)
    counts = np.minimum(counts, most)
    ends = np.cumsum(counts + 1) - 1
    ids = rng.choice(len(syllables), size=len(ends) + int(counts.sum()), p=weight / weight.sum())
    ids[ends] = len(syllables)  # the separator
    out, _ = _ragged_gather(blob, start, length, ids)
    return out.tobytes().split(b"\n")[:-1]


def _number(rng) -> bytes:
    """A number as written in news text: a year, a count, a decimal or a percentage."""
    kind, value = int(rng.integers(5)), int(rng.integers(10**7))
    forms = (
        f"{1900 + value % 130}",
        f"{value % 100_000}",
        f"{value % 1000},{value % 10}",
        f"{value % 100}%",
        f"{value // 1000 % 1000}.{value % 1000:03d}",
    )
    return forms[kind].encode()


def word_table(lang: str, n_types: int, seed: int) -> list[bytes]:
    """``n_types`` distinct word forms of ``lang`` (UTF-8), in rank order (most frequent first)."""
    rng = np.random.default_rng([seed, 1 if lang == "en" else 2])
    n_cand = int(n_types * 1.5) + 1000
    if lang == "de":
        base = _words(rng, n_cand, DE_ONSETS, DE_NUCLEI, DE_CODAS, 0.008, 3)
        suffix = rng.integers(len(DE_SUFFIXES), size=n_cand)
        base = [w + DE_SUFFIXES[i].encode() for w, i in zip(base, suffix.tolist(), strict=True)]
        # Compounds (Bundes+verfassungs+gericht), rarer words more often: two or three frequent
        # forms joined by s/en/e or nothing.
        compound = rng.random(n_cand) < np.minimum(0.6, 0.003 * np.log1p(np.arange(n_cand)) ** 2)
        kinds = np.where(compound, 1 + (rng.random(n_cand) < 0.15), 0).tolist()
        picks = zipf_ranks(rng, n_cand, 3 * n_cand).reshape(n_cand, 3).tolist()
        links = rng.integers(len(DE_LINKS), size=n_cand).tolist()
        link = [x.encode() for x in DE_LINKS]
        words = [
            base[i]
            if k == 0
            else base[a] + link[j] + base[b].lower()
            if k == 1
            else base[a] + link[j] + base[b].lower() + b"s" + base[c].lower()
            for i, k, (a, b, c), j in zip(range(n_cand), kinds, picks, links, strict=True)
        ]
        capital_rate = 0.45  # nouns
    else:
        words = _words(rng, n_cand, EN_ONSETS, EN_NUCLEI, EN_CODAS, 0.012, 5)
        possessive = (rng.random(n_cand) < 0.03).tolist()
        words = [w + b"'s" if p else w for w, p in zip(words, possessive, strict=True)]
        capital_rate = 0.12  # names
    for i in np.flatnonzero(rng.random(n_cand) < capital_rate).tolist():
        words[i] = words[i].decode().capitalize().encode()
    for i in np.flatnonzero(rng.random(n_cand) < 0.02).tolist():  # EU-Kommission, long-term
        words[i] = words[rng.integers(n_cand)].decode()[:2].upper().encode() + b"-" + words[i]
    for i in np.flatnonzero(rng.random(n_cand) < 0.03).tolist():
        words[i] = _number(rng)
    distinct = list(dict.fromkeys(words))  # first occurrence order: deterministic
    if len(distinct) < n_types:
        raise ValueError(f"only {len(distinct)} distinct {lang} word forms for {n_types} types")
    return distinct[:n_types]


@dataclasses.dataclass
class Table:
    """Every token string of one language in one byte array: words, then oddities, comma,
    endings."""

    blob: np.ndarray  # uint8
    start: np.ndarray  # int64 per token id
    length: np.ndarray  # int64 per token id
    attach_left: np.ndarray  # bool: the space before this token is removed
    n_words: int
    first_oddity: int
    comma: int
    first_ending: int

    @classmethod
    def build(cls, words: list[bytes]) -> Table:
        strings = [w + b" " for w in words] + [o + b" " for o in ODDITIES] + [COMMA] + ENDINGS
        blob, start, lengths = _pieces(strings)
        n, n_odd = len(words), len(ODDITIES)
        attach = np.zeros(len(strings), bool)
        attach[n + n_odd :] = True
        return cls(blob, start, lengths, attach, n, n, n + n_odd, n + n_odd + 1)


def zipf_ranks(rng, n_types: int, size: int, head: int = 10_000, tail_s: float = 1.5):
    """Ranks 0..n_types-1 with P(k) ~ 1/k up to rank ``head`` and ~ k^-tail_s beyond: the two
    regimes of word frequencies in large corpora (Ferrer i Cancho & Sole 2001). With 1.5M types
    0.9M draws hit ~95k of them and 110M draws ~1.1M (sampled once); a pure 1/k law would hit
    ~2.8x as many in 0.9M draws, far more distinct words in the vocab sample than real text has.
    Inverse CDF of the continuous law."""
    head = min(head, n_types)
    head_mass = np.log(head)
    tail_mass = (1 - (head / (n_types + 1.0)) ** (tail_s - 1)) / (tail_s - 1)
    u = rng.random(size) * (head_mass + tail_mass)
    x = np.exp(np.minimum(u, head_mass))
    tail = u >= head_mass
    x[tail] = head * (1 - (u[tail] - head_mass) * (tail_s - 1)) ** (-1 / (tail_s - 1))
    return np.minimum(x.astype(np.int64) - 1, n_types - 1)


def render(table: Table, lengths: np.ndarray, rng, dirt_rate: float) -> bytes:
    """Lines of ``lengths`` tokens (0 = an empty line) as bytes, each ending in a newline."""
    n_lines, n_tok = len(lengths), int(lengths.sum())
    ends = np.cumsum(lengths + 1) - 1  # position of each line's ending token
    is_end = np.zeros(n_tok + n_lines, bool)
    is_end[ends] = True
    ids = np.empty(n_tok + n_lines, np.int64)
    words = zipf_ranks(rng, table.n_words, n_tok)
    dirty = rng.random(n_tok) < dirt_rate
    words[dirty] = table.first_oddity + rng.integers(len(ODDITIES), size=int(dirty.sum()))
    line_first = ends - lengths  # first token of each line (== ending for empty lines)
    comma = rng.random(n_tok) < 0.06  # a comma instead of a word, never first or last
    first_word = (line_first - np.arange(n_lines))[lengths > 0]
    comma[first_word] = False
    comma[first_word + lengths[lengths > 0] - 1] = False
    ids[~is_end] = np.where(comma, table.comma, words)
    ending = table.first_ending + rng.choice(len(ENDINGS), size=n_lines, p=ENDING_P)
    ids[ends] = np.where(lengths > 0, ending, table.first_ending)  # empty: just "\n"
    # Gather every token's bytes (a ragged gather: one index per output byte).
    out, out_start = _ragged_gather(table.blob, table.start, table.length, ids)
    # Punctuation attaches to the word before it: drop the space before it.
    keep = np.ones(len(out), bool)
    pos = out_start[table.attach_left[ids]] - 1
    pos = pos[pos >= 0]
    keep[pos[out[pos] == ord(" ")]] = False
    # Sentence-initial capital (ASCII letters of words, not of oddities).
    first = line_first[lengths > 0]
    first = out_start[first[ids[first] < table.n_words]]
    lower = (out[first] >= ord("a")) & (out[first] <= ord("z"))
    out[first[lower]] -= 32
    return out[keep].tobytes()


def line_lengths(rng, model: LengthModel, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(English, German) words per line: log-normal, rare very long lines, some empty sides."""
    mu = np.log(model.mean_words) - model.sigma**2 / 2
    en = np.maximum(1, np.rint(rng.lognormal(mu, model.sigma, n))).astype(np.int64)
    long = rng.random(n) < model.very_long_rate
    en[long] = rng.integers(300, 3000, size=int(long.sum()))
    de = np.maximum(1, np.rint(en * np.exp(rng.normal(-0.06, 0.18, n)))).astype(np.int64)
    empty = rng.random(n) < model.empty_rate
    side = rng.integers(3, size=n)  # 0: English empty, 1: German empty, 2: both
    en[empty & (side != 1)] = 0
    de[empty & (side != 0)] = 0
    return en, de


def corpus_sizes(pairs: int) -> dict[str, int]:
    """Train lines per corpus: ``pairs`` split in the real corpora's proportions."""
    total = sum(REAL_TRAIN_LINES.values())
    sizes = {stem: pairs * n // total for stem, n in REAL_TRAIN_LINES.items()}
    sizes["commoncrawl.de-en"] += pairs - sum(sizes.values())
    return sizes


def write_corpus(
    tmp_dir: str,
    pairs: int,
    seed: int = 1,
    dev_pairs: int = 3000,
    test_pairs: int = 3003,
    n_types: int = DEFAULT_TYPES,
) -> dict:
    """Write every file into ``tmp_dir`` (each atomically); returns a summary (counts, bytes,
    seconds)."""
    start = time.monotonic()
    os.makedirs(tmp_dir, exist_ok=True)
    tables = {lang: Table.build(word_table(lang, n_types, seed)) for lang in ("en", "de")}
    table_seconds = time.monotonic() - start
    plan = dict(corpus_sizes(pairs), newstest2013=dev_pairs, **{"newstest2014-deen": test_pairs})
    files, total_bytes = {}, 0
    for corpus_index, (stem, n_lines) in enumerate(plan.items()):
        paths = {lang: os.path.join(tmp_dir, f"{stem}.{lang}") for lang in ("en", "de")}
        with atomic_open(paths["en"], "wb") as f_en, atomic_open(paths["de"], "wb") as f_de:
            for chunk, first in enumerate(range(0, n_lines, CHUNK_LINES)):
                rng = np.random.default_rng([seed, corpus_index, chunk])
                model = MODELS[stem]
                en, de = line_lengths(rng, model, min(CHUNK_LINES, n_lines - first))
                f_en.write(render(tables["en"], en, rng, model.dirt_rate))
                f_de.write(render(tables["de"], de, rng, model.dirt_rate))
        for path in paths.values():
            files[os.path.basename(path)] = os.path.getsize(path)
            total_bytes += files[os.path.basename(path)]
    return {
        "tmp_dir": tmp_dir,
        "train_pairs": pairs,
        "dev_pairs": dev_pairs,
        "test_pairs": test_pairs,
        "seed": seed,
        "word_types_per_language": n_types,
        "files": files,
        "bytes": total_bytes,
        "table_seconds": table_seconds,
        "seconds": time.monotonic() - start,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=4_500_000, help="training pairs")
    parser.add_argument("--tmp_dir", required=True, help="where the files go (t2t-datagen's)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dev_pairs", type=int, default=3000)
    parser.add_argument("--test_pairs", type=int, default=3003)
    parser.add_argument("--types", type=int, default=DEFAULT_TYPES, help="word types per language")
    args = parser.parse_args(argv)
    if min(args.pairs, args.dev_pairs, args.test_pairs, args.types) < 1:
        parser.error("--pairs, --dev_pairs, --test_pairs and --types must be positive")
    summary = write_corpus(
        args.tmp_dir, args.pairs, args.seed, args.dev_pairs, args.test_pairs, args.types
    )
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
