"""T2T 1.15.7's Wikipedia-dump language models (``data_generators/wiki.py``;
t2t_compat/wiki_dump_lm.py) under T2T's names: datagen writes what T2T 1.15.7's writes from the
same synthetic ``enwiki-20171201-pages-articles.xml.bz2`` (the vocabulary's sha256, each
shard's records, the files left in --tmp_dir: the decompressed XML and GNU split's parts), for
T2T's own classes (one 4M part: all dev) and for subclasses split at 6K (train and dev); the
other problems are T2T's by their class facts (tests/data/t2t_wiki_dump_reference, made by T2T
itself: tools/t2t_reference/make_t2t_wiki_dump_reference.py)."""

import bz2
import hashlib
import json
import shutil
from pathlib import Path

import pytest

from t2t_repro import registry
from t2t_repro.commands import datagen
from t2t_repro.data.text_files import DataError
from t2t_repro.t2t_compat.hparam import HParams
from tests.t2t_records import problem_facts, record_ids
from tests.usr_dir_registry import restored_registry

REFERENCE = Path(__file__).parent / "data" / "t2t_wiki_dump_reference"
EXPECTED = json.loads((REFERENCE / "t2t_1.15.7_wiki_dump.json").read_text(encoding="utf-8"))
DUMP = "enwiki-20171201-pages-articles.xml.bz2"
FLAGS = ["--offline", "--noprogress", "--num_workers=1"]
SMALL = {  # the reference script's subclasses: (base, sequence_length)
    "wiki_dump_small_xml": ("LanguagemodelWikiXmlV8kL1k", 64),
    "wiki_dump_small_scramble": ("LanguagemodelWikiScrambleL128", 32),
    "wiki_dump_small_noref": ("LanguagemodelWikiNorefV8kL1k", 48),
}
SMALL_PROPS = {
    "approx_vocab_size": 2**9,
    "dev_fraction": 3,
    "max_dev_chars": 9000,
    "dataset_splits": [{"split": "train", "shards": 3}, {"split": "dev", "shards": 2}],
}


@pytest.fixture(scope="module")
def wiki():
    """The module, its problems and the reference's subclasses registered for this test
    module only (as ``aliases._register_t2t_problems`` registers T2T's)."""
    restore = restored_registry(set())
    next(restore)
    from t2t_repro.t2t_compat import wiki_dump_lm

    for cls in wiki_dump_lm.T2T_REGISTERED_PROBLEMS:
        registry.register_problem(cls.problem_name)(cls)
    for name, (base, length) in SMALL.items():
        attrs = {k: property(lambda self, v=v: v) for k, v in SMALL_PROPS.items()}
        attrs["sequence_length"] = property(lambda self, v=length: v)
        cls = type(name, (getattr(wiki_dump_lm, base),), attrs)
        cls.name = cls.problem_name = name
        registry.register_problem(name)(cls)
    yield wiki_dump_lm
    next(restore, None)


def _sorted_digest(records: list) -> str:
    text = json.dumps(sorted(records), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_datagen(root: Path, name: str, want: dict) -> None:
    """t2t-datagen of ``name`` on a copy of the dump: T2T's files, vocabulary, records (sorted:
    T2T's pool worker shuffles with an OS-seeded ``random``) and tmp files."""
    tmp_dir, data_dir = root / "tmp", root / "data"
    shutil.copytree(REFERENCE / "tmp", tmp_dir)
    argv = [f"--problem={name}", f"--tmp_dir={tmp_dir}", f"--data_dir={data_dir}"]
    assert datagen.main([*argv, *FLAGS]) == 0
    files = sorted(p.name for p in data_dir.iterdir() if not p.name.endswith(".datagen.json"))
    assert files == want["files"]
    vocab = (data_dir / want["hparams"]["vocab_filename"]).read_bytes()
    assert hashlib.sha256(vocab).hexdigest() == want["vocab_sha256"]
    features = tuple(sorted(want["hparams"]["modality"]))
    for shard in (f for f in files if "-of-" in f):
        found = record_ids(data_dir / shard, features)
        assert len(found) == want["records"].get(shard, 0), shard
        if found:
            assert _sorted_digest(found) == want["records_sorted_sha256"][shard], shard
    tmp_files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in tmp_dir.iterdir()}
    assert tmp_files == want["tmp_files_after"]
    assert problem_facts(registry.problem(name), data_dir) == want["hparams"]


@pytest.mark.parametrize("name", sorted(EXPECTED["problems"]))
def test_datagen_of_t2ts_classes_writes_what_t2t_writes(wiki, name, tmp_path):
    """One 4M part, part 0: T2T's dev (dev_fraction 5000), no training text, so the vocabulary
    is built from none (reserved ids and the escape characters), as T2T's is; the .bz2 is gone
    (bunzip2), the XML and its part stay."""
    _check_datagen(tmp_path, name, EXPECTED["problems"][name])


@pytest.mark.parametrize("name", sorted(EXPECTED["small"]))
def test_datagen_split_smaller_writes_what_t2t_writes(wiki, name, tmp_path, monkeypatch):
    """Split at 6K (T2T's split run with --line-bytes=6K): 12 parts, every 3rd dev, read by 3
    train and 2 dev tasks in T2T's round robin, dev cut to max_dev_chars; the scramble's
    permutations are numpy's draws from the seed, task after task."""
    assert EXPECTED["small_split_bytes"] == "6K"
    monkeypatch.setattr(wiki, "PART_BYTES", 6 * 1024)
    _check_datagen(tmp_path, name, EXPECTED["small"][name])


def test_the_other_problems_are_t2ts_by_their_class_facts(wiki):
    for name, want in EXPECTED["classes"].items():
        problem = registry.problem(name)
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
            "max_length": problem.max_length(HParams(split_to_length=0)),
        }
        if hasattr(type(problem), "scramble"):
            facts["scramble_fraction"] = problem.scramble_fraction
            facts["targeted_vocab_size"] = problem.targeted_vocab_size
            facts["input_space_id"] = problem.input_space_id
        assert facts == want, name
    assert set(EXPECTED["classes"]) == {c.problem_name for c in wiki.T2T_REGISTERED_PROBLEMS}


def test_split_line_bytes_is_gnu_splits(wiki, tmp_path):
    """Whole lines up to the size, a longer line cut at it, a last line without newline that
    exactly fills the room left moved on, an empty file no part: GNU split's parts."""
    for i, case in enumerate(EXPECTED["split_cases"]):
        src = tmp_path / f"in{i}"
        src.write_bytes(case["input"].encode("latin-1"))
        parts = wiki.split_line_bytes(str(src), f"{src}-part-", case["size"])
        assert [Path(p).read_bytes().decode("latin-1") for p in parts] == case["parts"], case
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == []


def test_the_text_helpers_and_the_noref_text_are_t2ts(wiki, tmp_path):
    """T2T's quirks kept: an unclosed '[[' or ref drops the rest, a self-closing ref removes
    up to the next closing one, nested links keep a tail; titles with ':' and texts of 140
    characters or fewer are dropped."""
    want = EXPECTED["helpers"]
    for text, edges in want["edges"].items():
        if isinstance(edges, dict):
            assert wiki._remove_references(text) == edges["references"]
            assert wiki._remove_double_brackets(text) == edges["double_brackets"]
            assert wiki._remove_triple_quotes(text) == edges["triple_quotes"]
    pages = wiki._dump_to_pages("<page>\na</page>\n<page>\nb</page>\n<page>\nc")
    assert pages == want["edges"]["pages"]
    assert wiki._page_to_text("<title>t</title><text a='1'>body") == want["edges"]["text_unclosed"]
    xml = bz2.decompress((REFERENCE / "tmp" / DUMP).read_bytes())
    assert hashlib.sha256(xml).hexdigest() == EXPECTED["dump_xml_sha256"]
    dump_pages = wiki._dump_to_pages(xml.decode("utf-8"))
    assert [wiki._page_to_title(p) for p in dump_pages] == want["titles"]
    path = tmp_path / "dump.xml"
    path.write_bytes(xml)
    noref = list(wiki.LanguagemodelWikiNorefV8kL1k().filepath_to_unicode_strings(str(path)))
    assert len(noref) == want["noref_texts"] and len(noref[0]) == want["noref_chars"]
    assert noref[0].startswith(want["noref_head"])
    assert hashlib.sha256(noref[0].encode("utf-8")).hexdigest() == want["noref_sha256"]


def test_a_part_cut_inside_a_character_is_one_line(wiki, tmp_path):
    """GNU split cuts a line longer than 4M at a byte: T2T's read of such a part raises
    UnicodeDecodeError; here one line naming the file."""
    assert EXPECTED["helpers"]["utf8_cut_read_error"] == "UnicodeDecodeError"
    path = tmp_path / "part"
    path.write_bytes(b"<page>\n" + "é".encode()[:1])
    for problem in (wiki.LanguagemodelWikiXmlV8kL1k(), wiki.LanguagemodelWikiNorefV8kL1k()):
        with pytest.raises(DataError, match="not UTF-8") as refused:
            list(problem.filepath_to_unicode_strings(str(path)))
        assert str(path) in str(refused.value) and "\n" not in str(refused.value)


def test_a_missing_dump_offline_and_stray_parts_are_one_line(wiki, tmp_path, capsys):
    """Offline without the dump: one line naming T2T's file; parts not numbered from 00000
    (an interrupted split): one line, nothing read."""
    data_dir = tmp_path / "data"
    argv = [f"--tmp_dir={tmp_path}", f"--data_dir={data_dir}", *FLAGS]
    assert datagen.main(["--problem=languagemodel_wiki_xml_v8k_l1k", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert DUMP in err and "\n" not in err
    (tmp_path / "enwiki-20171201-pages-articles.xml-part-00001").write_text("x\n")
    problem = registry.problem("languagemodel_wiki_noref_v8k_l1k")
    with pytest.raises(DataError, match="remove them") as refused:
        problem.train_text_filepaths(str(tmp_path))
    assert "\n" not in str(refused.value)
