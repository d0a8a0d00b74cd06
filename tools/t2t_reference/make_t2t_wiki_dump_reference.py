"""What tensor2tensor 1.15.7's datagen writes for its Wikipedia-dump language models
(``data_generators/wiki.py``): reference test data for ``t2t_repro/t2t_compat/wiki_dump_lm.py``.

T2T reads a 14 GB ``enwiki-20171201-pages-articles.xml.bz2``: this writes a SYNTHETIC one
under that name into ``<out>/tmp`` (a few dozen ``<page>`` elements of toy words, fixed seed:
titles with ":" and short redirect pages, escaped ``<ref>`` tags, a self-closing one, links
``[[a|b]]`` and ``[[Category:x]]``, ``'''bold'''``, an unclosed ``[[``, an empty
``<text/>``, texts of 140 and 141 characters, non-ASCII words, and an ASCII line longer than
the small split size). Then, as
``bin/t2t_datagen.py`` does (seeds 429459, a ``multiprocessing.Pool`` made before
``prepare_to_generate``, then ``generate_data(data_dir, tmp_dir, task_id)`` for each task), in a
scratch copy of tmp:

- ``problems``: T2T's own classes (``REAL``). The dump is one 4M part, part 0, which is dev
  (``dev_fraction`` 5000): no training text, so T2T builds its vocabulary from nothing.
- ``small``: subclasses (``SMALL``: shorter examples, a smaller vocabulary, ``dev_fraction``
  3, 3 train and 2 dev shards, ``max_dev_chars`` 9000) with ``split --line-bytes=6K`` in
  place of T2T's ``4M`` (``wiki.subprocess.call`` patched), so train and dev both get parts.

The pool has one worker (``--num_concurrent_processes=1``): T2T draws the scramble
permutations from numpy's global generator, which a forked worker inherits seeded and carries
from task to task. Python reseeds ``random`` in a forked worker from the OS, so each shard's
order differs from run to run in T2T itself: records are kept as the sha256 of their sorted
ids. Also kept: GNU split's parts of crafted inputs (``split_cases``), wiki.py's text helpers on
edge strings, the error of reading a part cut inside a UTF-8 character, and every problem's
class facts. In T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_wiki_dump_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_wiki_dump_reference
"""

import argparse
import bz2
import hashlib
import json
import multiprocessing
import os
import random
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DUMP = "enwiki-20171201-pages-articles.xml.bz2"
REAL = (
    "languagemodel_wiki_xml_v8k_l1k",
    "languagemodel_wiki_scramble_l128",
    "languagemodel_wiki_noref_v8k_l1k",
)
ALL = (
    "languagemodel_wiki_xml_v8k_l1k",
    "languagemodel_wiki_xml_v8k_l4k",
    "languagemodel_wiki_scramble_l128",
    "languagemodel_wiki_scramble_l1k",
    "languagemodel_wiki_noref_v8k_l1k",
    "languagemodel_wiki_noref_v8k_l16k",
    "languagemodel_wiki_noref_v32k_l1k",
    "languagemodel_wiki_noref_v32k_l16k",
    "languagemodel_wiki_noref_v128k_l1k",
)
SMALL_BYTES = "6K"  # the patched split size (T2T: 4M)
SMALL = {  # name: (T2T base class, sequence_length)
    "wiki_dump_small_xml": ("LanguagemodelWikiXmlV8kL1k", 64),
    "wiki_dump_small_scramble": ("LanguagemodelWikiScrambleL128", 32),
    "wiki_dump_small_noref": ("LanguagemodelWikiNorefV8kL1k", 48),
}
WORDS = (
    "the a river city was is of in and king born near old new small war north south "
    "church school station village island played music first second century known"
).split()
ODD = ["café", "Zürich", "naïve", "東京", "—", "&amp;", "&quot;x&quot;", "(1901)", "São"]
SPLIT_CASES = [  # (bytes, --line-bytes): GNU split's parts are recorded
    (b"ab\ncd\nef\n", 6),
    (b"abcdefghij\nk\n", 4),
    (b"ab\ncd\nefgh", 6),  # a last line without newline exactly filling the room left
    (b"ab\ncd\nefg", 6),
    (b"abcdef", 6),
    (b"\n\n\nabcdefgh\n\n", 3),
    (b"", 5),
]
EDGE_TEXTS = [
    "a [[b]] c [[d|e]] f [[Category:g]] h [[i|j|k]] l [[m",
    "x '''y''' z '''w",
    "p &lt;ref&gt;q&lt;/ref&gt; r &lt;ref name=s /&gt; t u &lt;/ref&gt; v &lt;ref&gt;w",
    "[[File:a.jpg|thumb|[[b|c]] d]] e",
]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS * 4 + ODD) for _ in range(rng.randint(4, 14))]
    i = rng.randrange(len(words))
    kind = rng.random()
    if kind < 0.2:
        words[i] = f"[[{words[i]}]]"
    elif kind < 0.35:
        words[i] = f"[[{words[i]} {rng.choice(WORDS)}|{words[i]}]]"
    elif kind < 0.45:
        words[i] = f"'''{words[i]}'''"
    elif kind < 0.55:
        words[i] += f"&lt;ref&gt;{rng.choice(WORDS)} {rng.randint(1, 99)}&lt;/ref&gt;"
    elif kind < 0.6:
        words[i] += '&lt;ref name="n" /&gt;'  # self-closing: T2T cuts to the next closing
    elif kind < 0.65:
        words[i] = f"[[Category:{words[i]}]]"
    return " ".join(words).capitalize() + "."


def page(title: str, text: str, empty: bool = False) -> str:
    body = f'      <text xml:space="preserve">{text}</text>\n'
    if empty:
        body = '      <text xml:space="preserve" />\n'
    return (
        f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>1</id>\n"
        f"    <revision>\n      <id>2</id>\n{body}    </revision>\n  </page>\n"
    )


def write_dump(path: str) -> bytes:
    """The synthetic dump's XML (bz2-compressed to ``path``)."""
    rng = random.Random(1201)
    pages = []
    for n in range(64):
        title = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} {n}"
        if n % 9 == 4:
            title = rng.choice(["Category", "Wikipedia", "File", "Template"]) + ":" + title
        if n % 7 == 3:  # a redirect: short, dropped by noref
            pages.append(page(title, f"#REDIRECT [[{rng.choice(WORDS)} {n}]]"))
            continue
        paragraphs = [
            " ".join(sentence(rng) for _ in range(rng.randint(1, 8)))
            for _ in range(rng.randint(1, 8))
        ]
        if n == 10:
            paragraphs.append("Open [[link never closed " + sentence(rng))
        if n == 17:
            paragraphs.append(" ".join(rng.choice(WORDS) for _ in range(2200)))  # ~13 KB ASCII
        if n == 31:
            pages.append(page(title, "", empty=True))
            continue
        pages.append(page(title, "\n\n".join(paragraphs)))
    pages.append(page("Exactly 140", "word " * 28))  # dropped: T2T keeps more than 140
    pages.append(page("Just 141", "word " * 28 + "s"))
    xml = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n"
        + "".join(pages)
        + "</mediawiki>\n"
    ).encode("utf-8")
    with open(path, "wb") as f:
        f.write(bz2.compress(xml, 9))
    return xml


def gnu_split_cases() -> list:
    """GNU split's parts of each crafted input (latin-1 strings)."""
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for i, (data, size) in enumerate(SPLIT_CASES):
            src = os.path.join(scratch, f"in{i}")
            with open(src, "wb") as f:
                f.write(data)
            prefix = os.path.join(scratch, f"in{i}-part-")
            argv = ["split", f"--line-bytes={size}", "--suffix-length=5", "--numeric-suffixes"]
            subprocess.check_call([*argv, src, prefix])
            parts = sorted(p for p in os.listdir(scratch) if p.startswith(f"in{i}-part-"))
            texts = []
            for p in parts:
                with open(os.path.join(scratch, p), "rb") as f:
                    texts.append(f.read().decode("latin-1"))
            found.append({"input": data.decode("latin-1"), "size": size, "parts": texts})
    return found


def sorted_digest(records: list) -> str:
    text = json.dumps(sorted(records), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def shard_ids(tf, path: str) -> list:
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in sorted(feature)])
    return found


def problem_facts(problem, data_dir: str, hparam) -> dict:
    hp = problem.get_hparams(hparam.HParams(data_dir=data_dir))
    return {
        "modality": dict(hp.modality),
        "vocab_size": dict(hp.vocab_size),
        "input_space_id": hp.input_space_id,
        "target_space_id": hp.target_space_id,
        "loss_multiplier": hp.loss_multiplier,
        "stop_at_eos": hp.stop_at_eos,
        "eval_metrics": list(problem.eval_metrics()),
        "vocab_filename": problem.vocab_filename,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
    }


def class_facts(problem, hparam) -> dict:
    """What a problem is, without data."""
    facts = {
        "class": type(problem).__name__,
        "bases": [c.__name__ for c in type(problem).__mro__[1:4]],
        "approx_vocab_size": problem.approx_vocab_size,
        "sequence_length": problem.sequence_length,
        "max_chars_for_vocab": problem.max_chars_for_vocab,
        "max_dev_chars": problem.max_dev_chars,
        "dev_fraction": problem.dev_fraction,
        "corpus_url": problem.corpus_url,
        "has_inputs": problem.has_inputs,
        "remainder_policy": problem.remainder_policy,
        "vocab_type": problem.vocab_type,
        "vocab_filename": problem.vocab_filename,
        "dataset_splits": [[s["split"], s["shards"]] for s in problem.dataset_splits],
        "num_generate_tasks": problem.num_generate_tasks,
        "multiprocess_generate": problem.multiprocess_generate,
        "max_length": problem.max_length(hparam.HParams(split_to_length=0)),
    }
    if hasattr(type(problem), "scramble"):
        facts["scramble_fraction"] = problem.scramble_fraction
        facts["targeted_vocab_size"] = problem.targeted_vocab_size
        facts["input_space_id"] = problem.input_space_id
    return facts


def _generate_task(arg) -> None:
    from tensor2tensor.utils import registry

    name, data_dir, tmp_dir, task_id = arg
    registry.problem(name).generate_data(data_dir, tmp_dir, task_id)


def run(name, tmp_dir, seed_all, registry, tf, hparam) -> dict:
    """T2T's datagen of one problem in a scratch copy of tmp; its summary."""
    work = tempfile.mkdtemp()
    data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
    os.makedirs(data_dir)
    shutil.copytree(tmp_dir, scratch)
    seed_all()
    problem = registry.problem(name)
    pool = multiprocessing.Pool(processes=1)  # generate_data_for_registered_problem
    problem.prepare_to_generate(data_dir, scratch)
    tasks = [(name, data_dir, scratch, task) for task in range(problem.num_generate_tasks)]
    pool.map(_generate_task, tasks)
    pool.close()
    pool.join()
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if "-of-" in f}
    with open(os.path.join(data_dir, problem.vocab_filename), "rb") as f:
        vocab = f.read()
    parts = {}
    for f in sorted(os.listdir(scratch)):
        with open(os.path.join(scratch, f), "rb") as fh:
            parts[f] = hashlib.sha256(fh.read()).hexdigest()
    summary = {
        "files": files,
        "vocab_sha256": hashlib.sha256(vocab).hexdigest(),
        "vocab_lines": vocab.decode("utf-8").count("\n"),
        "records": {f: len(r) for f, r in shards.items() if r},
        "records_sorted_sha256": {f: sorted_digest(r) for f, r in shards.items() if r},
        "tmp_files_after": parts,
        "hparams": problem_facts(problem, data_dir, hparam),
    }
    shutil.rmtree(work)
    print(name, sum(len(r) for r in shards.values()), "records", flush=True)
    return summary


def small_classes(wiki, registry) -> None:
    """The SMALL subclasses, registered; wiki.py's split at SMALL_BYTES."""

    def call(argv, *args, **kwargs):
        argv = [f"--line-bytes={SMALL_BYTES}" if a == "--line-bytes=4M" else a for a in argv]
        return subprocess.call(argv, *args, **kwargs)

    wiki.subprocess = type("PatchedSubprocess", (), {"call": staticmethod(call)})
    props = {
        "approx_vocab_size": 2**9,
        "dev_fraction": 3,
        "max_dev_chars": 9000,
        "dataset_splits": [{"split": "train", "shards": 3}, {"split": "dev", "shards": 2}],
    }
    for name, (base, length) in SMALL.items():
        attrs = {k: property(lambda self, v=v: v) for k, v in props.items()}
        attrs["sequence_length"] = property(lambda self, v=length: v)
        registry.register_problem(name)(type(name, (getattr(wiki, base),), attrs))


def helpers(wiki, xml: bytes) -> dict:
    """wiki.py's text helpers on edge strings, and its noref text of the whole dump."""
    text = xml.decode("utf-8")
    pages = wiki._dump_to_pages(text)
    edges = {
        t: {
            "references": wiki._remove_references(t),
            "double_brackets": wiki._remove_double_brackets(t),
            "triple_quotes": wiki._remove_triple_quotes(t),
        }
        for t in EDGE_TEXTS
    }
    edges["pages"] = wiki._dump_to_pages("<page>\na</page>\n<page>\nb</page>\n<page>\nc")
    edges["text_unclosed"] = wiki._page_to_text("<title>t</title><text a='1'>body")
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "dump")
        with open(path, "wb") as f:
            f.write(xml)
        noref = list(wiki.LanguagemodelWikiNorefV8kL1k().filepath_to_unicode_strings(path))
        with open(path, "wb") as f:
            f.write(xml[:200] + "é".encode()[:1])  # a part cut inside a character
        try:
            list(wiki.LanguagemodelWikiXmlV8kL1k().filepath_to_unicode_strings(path))
            cut_error = None
        except Exception as e:  # noqa: BLE001  (recorded)
            cut_error = type(e).__name__
    return {
        "pages": len(pages),
        "titles": [wiki._page_to_title(p) for p in pages],
        "edges": edges,
        "noref_texts": len(noref),
        "noref_sha256": hashlib.sha256(noref[0].encode("utf-8")).hexdigest(),
        "noref_chars": len(noref[0]),
        "noref_head": noref[0][:600],
        "utf8_cut_read_error": cut_error,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (tmp/, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import wiki
    from tensor2tensor.utils import hparam, registry

    def seed_all():
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, per problem
        random.seed(SEED)
        np.random.seed(SEED)

    tmp_dir = os.path.join(args.out, "tmp")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    os.makedirs(tmp_dir)
    xml = write_dump(os.path.join(tmp_dir, DUMP))
    summary = {
        "random_seed": SEED,
        "dump_xml_sha256": hashlib.sha256(xml).hexdigest(),
        "dump_xml_bytes": len(xml),
        "split_cases": gnu_split_cases(),
        "helpers": helpers(wiki, xml),
        "classes": {n: class_facts(registry.problem(n), hparam) for n in ALL},
        "problems": {n: run(n, tmp_dir, seed_all, registry, tf, hparam) for n in REAL},
    }
    small_classes(wiki, registry)
    summary["small_split_bytes"] = SMALL_BYTES
    summary["small"] = {n: run(n, tmp_dir, seed_all, registry, tf, hparam) for n in SMALL}
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(args.out, "t2t_1.15.7_wiki_dump.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
