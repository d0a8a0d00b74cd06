"""What tensor2tensor 1.15.7's datagen writes for seven of its own translation problems (reference
test data for ``t2t_repro/t2t_compat/translate_problems.py``).

The corpora are not ours to ship: this writes SYNTHETIC ones (toy sentence pairs, fixed seed)
under T2T's archive and file names into ``<out>/<problem>/tmp``: ``translate_envi_iwslt32k``
(two ``.tgz``), ``translate_enro_wmt8k`` (a ``.tgz``, the SETIMES ``.zip`` and the dev ``.sgm``
files in a ``.tgz``), ``translate_entn_rma`` (``.tar.gz?raw=true`` names, its own vocab name),
``translate_enmk_setimes_characters`` (a character vocabulary), ``translate_encs_wmt32k``
(CzEng's tsv of gzipped files in a ``.tar``, read through its compiled train files for the
vocabulary, and three ``.tgz``), ``translate_enfr_wmt_small8k`` (train and dev from one
``.tgz``) and ``translate_ende_wmt_pc_clean32k`` (WMT's three ``.tgz`` and ParaCrawl's gzipped
tmx, cleaned, and ``translate_ende_wmt32k``'s vocabulary). Then it runs each problem's datagen as
``bin/t2t_datagen.py`` does (seeds 429459 for each problem,
``problem.generate_data(data_dir, tmp_dir, None)``) and writes ``<out>/
t2t_1.15.7_translate.json``: each vocabulary file's sha256, and each shard's records (their
ids, which hold the shuffle; T2T serializes a record's feature map in the process's hash order,
so the bytes are compared as ids). In T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_translate_reference.py \
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_translate_reference
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import random
import shutil
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
WORDS = {
    "en": "the a cat dog house river sees likes small old red near".split(),
    "vi": "con meo cho nha song thay thich nho cu do gan mot".split(),
    "ro": "pisica caine casa rau vede place mic vechi rosu langa un o".split(),
    "tn": "katse ntša ntlo noka bona rata nnye kgale hibidu gaufi nngwe le".split(),
    "mk": "мачка куче куќа река гледа сака мал стар црвен близу една до".split(),
    "cs": "kočka pes dům řeka vidí má malý starý červený blízko jedna do".split(),
    "fr": "le un chat chien maison rivière voit aime petit vieux rouge près".split(),
    "de": "der ein Katze Hund Haus Fluss sieht mag klein alt rot nahe".split(),
}
DATE = 1_600_000_000  # archive members' mtime: the same bytes on every run


def pairs(rng: random.Random, lang: str, n: int) -> list[tuple[str, str]]:
    """``n`` toy pairs: English words and their word-for-word ``lang`` counterparts."""
    out = []
    for _ in range(n):
        idx = [rng.randrange(len(WORDS["en"])) for _ in range(rng.randint(2, 9))]
        out.append((" ".join(WORDS["en"][i] for i in idx), " ".join(WORDS[lang][i] for i in idx)))
    return out


def text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def sgm(lines: list[str], lang: str) -> bytes:
    body = [f'<srcset setid="newsdev2016" srclang="any"><doc docid="x" lang="{lang}">']
    body += [f'<seg id="{i}">{line}</seg>' for i, line in enumerate(lines, 1)]
    return text([*body, "</doc>", "</srcset>"])


def write_tar(path: str, members: dict[str, bytes], mode: str = "w:gz") -> None:
    """A tar archive (gzipped unless ``mode`` is "w"), the same bytes on every run."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), DATE
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    with open(path, "wb") as f:
        f.write(gzip.compress(data, mtime=DATE) if mode == "w:gz" else data)


def write_zip(path: str, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, date_time=(2020, 9, 13, 12, 0, 0)), data)


def parallel(rng, lang: str, n: int, name1: str, name2: str, sgm_lang: str = "") -> dict:
    got = pairs(rng, lang, n)
    src, trg = [p[0] for p in got], [p[1] for p in got]
    if sgm_lang:
        return {name1: sgm(src, "en"), name2: sgm(trg, sgm_lang)}
    return {name1: text(src), name2: text(trg)}


def write_corpora(out: str) -> dict[str, str]:
    """Each problem's synthetic ``tmp`` folder; returns {problem: tmp dir}."""
    rng = random.Random(2017)
    tmp = {}

    def folder(problem: str) -> str:
        tmp[problem] = os.path.join(out, problem, "tmp")
        shutil.rmtree(tmp[problem], ignore_errors=True)
        os.makedirs(tmp[problem])
        return tmp[problem]

    d = folder("translate_envi_iwslt32k")
    write_tar(f"{d}/train-en-vi.tgz", parallel(rng, "vi", 160, "train.en", "train.vi"))
    write_tar(f"{d}/dev-2012-en-vi.tgz", parallel(rng, "vi", 15, "tst2012.en", "tst2012.vi"))
    d = folder("translate_enro_wmt8k")
    euro = parallel(rng, "ro", 120, "europarl-v7.ro-en.en", "europarl-v7.ro-en.ro")
    write_tar(f"{d}/ro-en.tgz", euro)
    write_zip(f"{d}/en-ro.txt.zip", parallel(rng, "ro", 60, "SETIMES.en-ro.en", "SETIMES.en-ro.ro"))
    dev = parallel(
        rng,
        "ro",
        12,
        "dev/newsdev2016-roen-ref.en.sgm",
        "dev/newsdev2016-roen-src.ro.sgm",
        sgm_lang="ro",
    )
    write_tar(f"{d}/dev-romanian-updated.tgz", dev)
    d = folder("translate_entn_rma")
    train = parallel(rng, "tn", 140, "entn_parallel.train.en", "entn_parallel.train.tn")
    write_tar(f"{d}/eng_tswane.train.tar.gz?raw=true", train)
    dev = parallel(rng, "tn", 12, "entn_parallel.dev.en", "entn_parallel.dev.tn")
    write_tar(f"{d}/eng_tswane.dev.tar.gz?raw=true", dev)
    d = folder("translate_enmk_setimes_characters")
    train = parallel(rng, "mk", 130, "setimes.en-mk.en.txt", "setimes.en-mk.mk.txt")
    write_tar(f"{d}/setimes.en-mk.txt.tgz", train)
    dev = parallel(rng, "mk", 12, "MTE1984-dev.en", "MTE1984-dev.mk")
    write_tar(f"{d}/MTE-1984-dev.enmk.tgz", dev)
    d = folder("translate_encs_wmt32k")
    rows = pairs(rng, "cs", 50)  # CzEng's tsv: id, score, Czech, English
    tsv = [f"{i}\t0.9\t{cs}\t{en}" for i, (en, cs) in enumerate(rows)]
    write_tar(
        f"{d}/data-plaintext-format.tar",
        {"data.plaintext-format/01train.gz": gzip.compress(text(tsv), mtime=DATE)},
        mode="w",
    )
    for archive, prefix, n in (
        ("training-parallel-nc-v13.tgz", "training-parallel-nc-v13/news-commentary-v13", 40),
        ("training-parallel-commoncrawl.tgz", "commoncrawl", 30),
        ("training-parallel-europarl-v7.tgz", "training/europarl-v7", 30),
    ):
        corpus = parallel(rng, "cs", n, f"{prefix}.cs-en.en", f"{prefix}.cs-en.cs")
        write_tar(f"{d}/{archive}", corpus)
    dev = parallel(rng, "cs", 12, "dev/newstest2013.en", "dev/newstest2013.cs")
    write_tar(f"{d}/dev.tgz", dev)
    d = folder("translate_enfr_wmt_small8k")
    base = "baseline-1M-enfr/baseline-1M"
    train = parallel(rng, "fr", 120, f"{base}_train.en", f"{base}_train.fr")
    valid = parallel(rng, "fr", 12, f"{base}_valid.en", f"{base}_valid.fr")
    write_tar(f"{d}/baseline-1M-enfr.tgz", {**train, **valid})
    d = folder("translate_ende_wmt_pc_clean32k")  # WMT's three corpora, ParaCrawl's tmx
    for archive, prefix, n in (
        ("training-parallel-nc-v13.tgz", "training-parallel-nc-v13/news-commentary-v13", 40),
        ("training-parallel-commoncrawl.tgz", "commoncrawl", 30),
        ("training-parallel-europarl-v7.tgz", "training/europarl-v7", 30),
    ):
        corpus = parallel(rng, "de", n, f"{prefix}.de-en.en", f"{prefix}.de-en.de")
        write_tar(f"{d}/{archive}", corpus)
    dev = parallel(rng, "de", 12, "dev/newstest2013.en", "dev/newstest2013.de")
    write_tar(f"{d}/dev.tgz", dev)
    units = [  # sentences T2T's cleaner keeps (a capital, a full stop) and a few it drops
        (en.capitalize() + ".", de.capitalize() + ".") if i % 5 else (en, de)
        for i, (en, de) in enumerate(pairs(rng, "de", 40))
    ]
    tmx = ['<?xml version="1.0" encoding="utf-8"?>', '<tmx version="1.4">', "<body>"]
    for en, de in units:
        tmx += ["  <tu>", '    <tuv xml:lang="en">', f"      <seg>{en}</seg>", "    </tuv>"]
        tmx += ['    <tuv xml:lang="de">', f"      <seg>{de}</seg>", "    </tuv>", "  </tu>"]
    with open(f"{d}/en-de.bicleaner07.tmx.gz", "wb") as f:
        f.write(gzip.compress(text([*tmx, "</body>", "</tmx>"]), mtime=DATE))
    return tmp


def shard_ids(tf, path: str) -> list[list[list[int]]]:
    """Each record's [inputs ids, targets ids], in file order."""
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in ("inputs", "targets")])
    return found


def ids_digest(records: list) -> str:
    return hashlib.sha256(json.dumps(records, separators=(",", ":")).encode()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder (<problem>/tmp, JSON)")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import (  # noqa: F401  (registers the problems)
        translate_encs,
        translate_ende,
        translate_enfr,
        translate_enmk,
        translate_enro,
        translate_entn,
        translate_envi,
    )
    from tensor2tensor.utils import registry

    summary = {"random_seed": SEED, "problems": {}}
    for name, tmp_dir in write_corpora(args.out).items():
        work = tempfile.mkdtemp()
        data_dir, scratch = os.path.join(work, "data"), os.path.join(work, "tmp")
        shutil.copytree(tmp_dir, scratch)
        os.makedirs(data_dir)
        tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, set_random_seed per problem
        random.seed(SEED)
        np.random.seed(SEED)
        problem = registry.problem(name)
        problem.generate_data(data_dir, scratch, None)
        files = sorted(os.listdir(data_dir))
        shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if f.startswith(name)}
        vocab_path = os.path.join(data_dir, problem.vocab_filename)
        vocab = b""
        if problem.vocab_type != "character":  # T2T writes no file of a character vocabulary
            with open(vocab_path, "rb") as f:
                vocab = f.read()
        summary["problems"][name] = {
            "files": files,
            "vocab_file": problem.vocab_filename if vocab else None,
            "vocab_sha256": hashlib.sha256(vocab).hexdigest() if vocab else None,
            "records": {f: len(r) for f, r in shards.items()},
            "records_sha256": {f: ids_digest(r) for f, r in shards.items()},
            "tmp_files_after": sorted(os.listdir(scratch)),
        }
        shutil.rmtree(work)
        print(name, sum(len(r) for r in shards.values()), "records")
    summary["versions"] = {
        "tensor2tensor": metadata.version("tensor2tensor"),
        "tensorflow": tf.__version__,
        "python": sys.version.split()[0],
    }
    with open(os.path.join(args.out, "t2t_1.15.7_translate.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
