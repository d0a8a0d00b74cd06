"""What tensor2tensor 1.15.7's ``cleaner_en_xx`` and the tmx and cleaning paths of its
``translate.compile_data`` give (reference test data for ``t2t_repro/t2t_compat/cleaner_en_xx.py``
and ``translate.py``; ``tests/test_t2t_cleaner.py`` compares with it).

Three parts, all on crafted or SYNTHETIC text (no real corpus):

* ``cleaner``: T2T's ``clean_en_xx_pairs`` on each crafted pair (one pair or more per rule of
  its filter and sentence splitter), and ``paracrawl_v3_pairs`` on a crafted ParaCrawl tmx (its
  lines as bytes, as T2T reads a ``.gz`` one), raw and cleaned.
* ``compile``: ``translate.compile_data`` on a tmx (gzipped, and not), a tsv, two text files
  and two ``.sgm`` files, with several ``datatypes_to_clean``; the compiled files, or the error.
* ``datagen``: ``translate_enes_wmt_clean32k``'s datagen (seeds 429459, then
  ``problem.generate_data(data_dir, tmp_dir, None)``, as ``bin/t2t_datagen.py``) on synthetic
  archives under T2T's names; each shard's record ids, the vocabulary's sha256, the compiled
  files' sha256, the tmp files after.

T2T 1.15.7 pairs split sentences with ``itertools.izip``, which Python 3 has not: each crafted
pair is first cleaned by T2T as it is (recording the ``AttributeError`` where it is raised),
then everything runs with ``itertools.izip = zip``, Python 2's meaning of T2T's code, which the
project follows. In T2T's venv (tools/t2t_reference/README.md)::

    /tmp/t2tvenv/bin/python tools/t2t_reference/make_t2t_cleaner_reference.py \\
        --shim=/work/shared/t2t_shim --out=tests/data/t2t_cleaner_reference
"""

import argparse
import gzip
import hashlib
import io
import itertools
import json
import os
import random
import shutil
import sys
import tarfile
import tempfile
from importlib import metadata

SEED = 429459  # t2t_datagen's --random_seed default
DATE = 1_600_000_000  # archives' mtime: the same bytes on every run
PROBLEM = "translate_enes_wmt_clean32k"

# (English, other) pairs, each for a rule of cleaner_en_xx.py (a drop, or a near miss kept).
PAIRS = [
    ("The cat sleeps.", "El gato duerme."),
    ("the cat sleeps.", "el gato duerme."),  # no capital first
    ("Über den Fluss.", "Sobre el río."),  # a capital, not ASCII
    ("The cat sleeps", "El gato duerme"),  # no final mark
    ("The cat sleeps..", "El gato duerme.."),
    ("Is the cat asleep?", "¿Duerme el gato?"),
    ("The cat sleeps!”", "¡El gato duerme!”"),
    ("“The cat sleeps,” he said.", "“El gato duerme”, dijo."),
    ('"The cat sleeps."', '"El gato duerme."'),
    ('"The cat" sleeps "here" now.', '"El gato" duerme "aquí" ahora.'),
    ('He said "yes" and "no" and "maybe."', 'Dijo "sí" y "no" y "quizás".'),
    ('He said "yes.', 'Dijo "sí.'),
    ('"He said yes.', '"Dijo que sí.'),
    ('He said yes."', 'Dijo que sí."'),
    ("Note: the cat sleeps.", "Nota: el gato duerme."),
    ("Fig. 2: The cat sleeps.", "Fig. 2: El gato duerme."),
    ("The man said: yes.", "El hombre dijo: sí."),
    ("It costs 1 000 euros.", "Cuesta 1 000 euros."),
    ("It costs 1\u00a0000 euros.", "Cuesta 1\u00a0000 euros."),
    ("It costs \u0661 \u0662 dinars.", "Cuesta \u0661 \u0662 dinares."),
    ("It's John's dog's bone.", "Es el hueso del perro de John."),
    ("He 'said' 'no' 'way' today.", "Él 'dijo' 'de' 'ninguna' forma."),
    ("He said '' nothing.", "No dijo '' nada."),
    ("He said ‘ ’ nothing.", "No dijo ‘ ’ nada."),
    ("Hello , world.", "Hola , mundo."),
    ("Yes ; no.", "Sí ; no."),
    ("Hello\u00a0,\u00a0world.", "Hola\u00a0,\u00a0mundo."),
    ("Copyright 2010 Acme Inc.", "Copyright 2010 Acme Inc."),
    ("All rights © Acme Inc.", "Todos los derechos © Acme Inc."),
    ("This (is open.", "Esto (está abierto."),
    ("This is) closed.", "Esto está) cerrado."),
    ("This (is) fine.", "Esto (está) bien."),
    ("PARIS - The president spoke.", "PARÍS - El presidente habló."),
    ("NEW YORK  - Stocks fell.", "NUEVA YORK - Las bolsas cayeron."),
    ("FOO_BAR is set.", "FOO_BAR está puesto."),
    ("Foo_bar is set.", "Foo_bar está puesto."),
    ("Café closes at noon.", "El café cierra a mediodía."),
    # Sentence splitting: equal counts give the sentences; unequal drops the pair.
    ("I came. I saw.", "Vine. Vi."),
    ("I came. I saw. I won!", "Vine. Vi. ¡Vencí!"),
    ("Who came? I saw it.", "¿Quién vino? Lo vi."),
    ("I came. I saw.", "Vine y vi."),
    ("I came. Note: it is late.", "Vine. Nota: es tarde."),
    ("In 2010. Then it rained.", "En 2010. Entonces llovió."),
    ("In 2010. Then it rained.", "En el año. Entonces llovió."),
    ("He lives in the USA. He works.", "Vive en EEUU. Trabaja."),
    ("He lives in the U.S. He works.", "Vive en EE.UU. Trabaja."),
    ("He met A. Smith today.", "Vio a A. Smith hoy."),
    ("I came. he saw it. Then I left.", "Vine. él lo vio. Luego me fui."),
    ("I came. I saw.", "Vine y vi.__|__"),
    ("I came.__|__I saw.", "Vine.__|__Vi."),
    ("I came.  I saw.", "Vine.  Vi."),
    ("", "Vacío."),
    ("Empty.", ""),
]

# A ParaCrawl v3 tmx: <seg> lines (indented with spaces) taken two by two, entities decoded.
TMX_SEGS = [
    ("The cat &amp; the dog sleep.", "El gato &amp; el perro duermen."),
    ("Rock & amp; roll &apos;n&apos; more.", "Rock & amp; roll &apos;n&apos; más."),
    ("He said &quot;no&quot; twice.", "Dijo &quot;no&quot; dos veces."),
    ("It is &lt;b&gt; bold &amp;amp; &amp;lt; more.", "Es &lt;b&gt; negrita &amp;amp;."),
    ("It is & quot;odd& quot; and & lt;x& gt;.", "Es & quot;raro& quot; y & lt;x& gt;."),
    ("I came. I saw.", "Vine. Vi."),
    ("I came. I saw.", "Vine y vi.__|__"),
    ("note: lower case.", "nota: minúsculas."),
    ("", "Vacío."),
    ("Café — naïve façade.", "Café — fachada ingenua."),
    ("The end is near.", "El fin está cerca."),
]


def tmx_bytes() -> bytes:
    """The crafted tmx, with lines T2T's pattern skips: a <seg> at column 0, one indented
    by a tab, one ending in CRLF, two on one line, and an odd last segment."""
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<tmx version="1.4">', "<body>"]
    for i, (en, xx) in enumerate(TMX_SEGS):
        lines.append(f'  <tu tuid="{i}" datatype="Text">')
        for lang, seg in (("en", en), ("es", xx)):
            lines += [f'    <tuv xml:lang="{lang}">', f"      <seg>{seg}</seg>", "    </tuv>"]
        lines.append("  </tu>")
    lines += [
        "<seg>At column zero.</seg>",
        "\t<seg>Indented by a tab.</seg>",
        "      <seg>Ends in CRLF.</seg>\r",
        "      <seg>Two on.</seg> <seg>One line.</seg>",
        "      <seg>Paired with the next.</seg>",
        "      <seg>Emparejada con la anterior.</seg>",
        "      <seg>Paired with the one before.</seg>",
        "      <seg>An odd last one.</seg>",
        "</body>",
        "</tmx>",
    ]
    return "".join(line + "\n" for line in lines).encode("utf-8")


# compile_data's other inputs: a tsv (id, score, es, en), two text files, two sgm files.
TSV_ROWS = [
    ("The cat sleeps.", "El gato duerme."),
    ("the cat sleeps.", "el gato duerme."),
    ("I came. I saw.", "Vine. Vi."),
    ("Note: late.", "Nota: tarde."),
    ("I came. I saw.", "Vine y vi.__|__"),
    ("  Spaced out.  ", "  Espaciado.  "),
]
TXT_PAIRS = [
    ("The dog barks.", "El perro ladra."),
    ("the dog barks.", "el perro ladra."),
    ("I came. I saw. I won!", "Vine. Vi. ¡Vencí!"),
    ("", ""),
    ("I came. I saw.", "Vine y vi.__|__"),
    ("PARIS - It rains.", "PARÍS - Llueve."),
]
URL = "https://example.invalid/corpora/"
COMPILE_DATASETS = {
    "tmx_gz": [[URL + "para.en-es.tmx.gz", ("tmx", "para.en-es.tmx.gz")]],
    "tmx_plain": [[URL + "para.en-es.tmx", ("tmx", "para.en-es.tmx")]],
    "mixed": [
        ["local-tsv", ("tsv", 3, 2, "pairs*.tsv")],
        [URL + "para.en-es.tmx.gz", ("tmx", "para.en-es.tmx.gz")],
        ["local-txt", ("pairs.en", "pairs.es")],
    ],
    "sgm": [["local-sgm", ("news.en.sgm", "news.es.sgm")]],
}
COMPILE_CASES = [
    ("tmx_gz", None),
    ("tmx_gz", ["tmx"]),
    ("tmx_gz", ["txt", "tsv"]),
    ("tmx_gz", "tmx"),  # T2T tests membership with `in`: a string works as its substrings
    ("tmx_plain", None),
    ("mixed", None),
    ("mixed", ["tsv"]),
    ("mixed", ["txt", "tsv", "tmx"]),
    ("sgm", None),
    ("sgm", ["txt"]),
]

WORDS = {
    "en": "the cat dog house river sees likes small old red near bird".split(),
    "es": "el gato perro casa río ve quiere pequeño viejo rojo cerca pájaro".split(),
}


def text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def write_compile_inputs(folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    data = tmx_bytes()
    with open(os.path.join(folder, "para.en-es.tmx"), "wb") as f:
        f.write(data)
    with open(os.path.join(folder, "para.en-es.tmx.gz"), "wb") as f:
        f.write(gzip.compress(data, mtime=DATE))
    rows = [f"{i}\t0.9\t{es}\t{en}" for i, (en, es) in enumerate(TSV_ROWS)]
    files = {
        "pairs1.tsv": text(rows + ["no tab here"]),
        "pairs.en": text([p[0] for p in TXT_PAIRS]),
        "pairs.es": text([p[1] for p in TXT_PAIRS]),
    }
    for lang, idx in (("en", 0), ("es", 1)):
        segs = [f'<seg id="{i}">{p[idx]}</seg>' for i, p in enumerate(TXT_PAIRS[:3], 1)]
        head = f'<refset setid="news" srclang="any"><doc docid="x" lang="{lang}">'
        files[f"news.{lang}.sgm"] = text([head, *segs, "</doc>", "</refset>"])
    for name, data in files.items():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


def sentence(rng: random.Random) -> tuple[str, str]:
    idx = [rng.randrange(len(WORDS["en"])) for _ in range(rng.randint(2, 6))]
    en, es = (" ".join(WORDS[k][i] for i in idx) for k in ("en", "es"))
    return en[0].upper() + en[1:] + ".", es[0].upper() + es[1:] + "."


def noisy_pair(rng: random.Random) -> tuple[str, str]:
    """A synthetic pair: clean, or broken in one of the ways the cleaner looks for."""
    (en, es), (en2, es2) = sentence(rng), sentence(rng)
    kind = rng.randrange(12)
    variants = {
        1: (f"{en} {en2}", f"{es} {es2}"),  # two sentences each: split
        2: (f"{en} {en2}", f"{es[:-1]}, {es2.lower()}"),  # unequal: dropped
        3: (en.lower(), es.lower()),
        4: (en[:-1], es[:-1]),
        5: (f"Note: {en}", f"Nota: {es}"),
        6: (f'"{en}', f'"{es}'),
        7: (f"{en[:-1]} (see.", f"{es[:-1]} (ver."),
        8: (f"MADRID - {en}", f"MADRID - {es}"),
        9: (f"{en[:-1]} 1 000.", f"{es[:-1]} 1 000."),
        10: (f"{en} {en2[:-1]}? {en}", f"{es} ¿{es2[:-1]}? {es}"),
        11: (f"{en} Note: {en2}", f"{es} Nota: {es2}"),
    }
    return variants.get(kind, (en, es))


def write_tar(path: str, members: dict[str, bytes]) -> None:
    """A ``.tgz`` of ``members``, its gzip header dated too (the same bytes on every run)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), DATE
            tar.addfile(info, io.BytesIO(data))
    with open(path, "wb") as f:
        f.write(gzip.compress(raw.getvalue(), mtime=DATE))


def write_enes_corpus(folder: str) -> None:
    """T2T's translate_enes archives and file names, synthetic pairs inside."""
    rng = random.Random(2018)
    os.makedirs(folder, exist_ok=True)
    corpora = [
        ("training-parallel-commoncrawl.tgz", "commoncrawl.es-en", 40),
        ("training-parallel-europarl-v7.tgz", "training/europarl-v7.es-en", 30),
        ("training-parallel-un.tgz", "un/undoc.2000.es-en", 25),
        (
            "paracrawl-release1.en-es.zipporah0-dedup-clean.tgz",
            "paracrawl-release1.en-es.zipporah0-dedup-clean",
            25,
        ),
        ("dev.tgz", "dev/newstest2013", 12),  # not cleaned: T2T cleans train only
    ]
    for archive, stem, n in corpora:
        pairs = [noisy_pair(rng) for _ in range(n)]
        if archive != "dev.tgz":
            pairs.insert(3, ("", ""))  # an empty line of each file: dropped
        members = {f"{stem}.{k}": text([p[i] for p in pairs]) for i, k in enumerate(("en", "es"))}
        write_tar(os.path.join(folder, archive), members)


def run(call):
    """``call()``'s value, or the error T2T raised, as ``{"error": "Type: message"}``."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001  (T2T's own failures are what is recorded)
        return {"error": f"{type(e).__name__}: {e}"}


def cleaner_part(cleaner_en_xx) -> dict:
    def clean(pairs):
        return [list(p) for p in cleaner_en_xx.clean_en_xx_pairs(pairs)]

    as_is = [run(lambda p=p: clean([p])) for p in PAIRS]
    itertools.izip = zip  # Python 2's izip: T2T's meaning (see the docstring)
    lines = io.BytesIO(tmx_bytes()).readlines()
    return {
        "pairs": [list(p) for p in PAIRS],
        "cleaned_as_is": as_is,
        "cleaned": [clean([p]) for p in PAIRS],
        "cleaned_all_at_once": clean(PAIRS),
        "tmx_pairs": [list(p) for p in cleaner_en_xx.paracrawl_v3_pairs(iter(lines))],
        "tmx_pairs_cleaned": clean(cleaner_en_xx.paracrawl_v3_pairs(iter(lines))),
    }


def compile_part(translate, inputs: str) -> list:
    found = []
    for name, to_clean in COMPILE_CASES:
        work = tempfile.mkdtemp()
        tmp = os.path.join(work, "tmp")
        shutil.copytree(inputs, tmp)
        before = set(os.listdir(tmp))

        def call(name=name, to_clean=to_clean, tmp=tmp):
            path = translate.compile_data(tmp, COMPILE_DATASETS[name], "c", to_clean)
            out = {}
            for ext in ("lang1", "lang2"):
                with open(f"{path}.{ext}", encoding="utf-8") as f:
                    out[ext] = f.read().split("\n")
            return out

        got = run(call)
        got["tmp_files_added"] = sorted(set(os.listdir(tmp)) - before)
        found.append({"datasets": name, "datatypes_to_clean": to_clean, "result": got})
        shutil.rmtree(work)
    return found


def sha256_file(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def shard_ids(tf, path: str) -> list:
    found = []
    for record in tf.compat.v1.io.tf_record_iterator(path):
        feature = tf.train.Example.FromString(record).features.feature
        found.append([list(feature[k].int64_list.value) for k in ("inputs", "targets")])
    return found


def datagen_part(tf, np, registry, corpus: str) -> dict:
    work = tempfile.mkdtemp()
    data_dir, tmp_dir = os.path.join(work, "data"), os.path.join(work, "tmp")
    shutil.copytree(corpus, tmp_dir)
    os.makedirs(data_dir)
    tf.compat.v1.set_random_seed(SEED)  # bin/t2t_datagen.py, per problem
    random.seed(SEED)
    np.random.seed(SEED)
    problem = registry.problem(PROBLEM)
    problem.generate_data(data_dir, tmp_dir, None)
    files = sorted(os.listdir(data_dir))
    shards = {f: shard_ids(tf, os.path.join(data_dir, f)) for f in files if f.startswith(PROBLEM)}
    compiled = sorted(f for f in os.listdir(tmp_dir) if "-compiled-" in f)
    summary = {
        "files": files,
        "vocab_file": problem.vocab_filename,
        "vocab_sha256": sha256_file(os.path.join(data_dir, problem.vocab_filename)),
        "records": {f: len(r) for f, r in shards.items()},
        "records_sha256": {
            f: hashlib.sha256(json.dumps(r, separators=(",", ":")).encode()).hexdigest()
            for f, r in shards.items()
        },
        "compiled_sha256": {f: sha256_file(os.path.join(tmp_dir, f)) for f in compiled},
        "tmp_files_after": sorted(os.listdir(tmp_dir)),
    }
    shutil.rmtree(work)
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shim", required=True, help="the t2t_shim folder (t2t_compat.py)")
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.shim))
    import t2t_compat

    t2t_compat.install()
    import numpy as np
    import tensorflow as tf
    from tensor2tensor.data_generators import cleaner_en_xx, translate, translate_enes  # noqa: F401
    from tensor2tensor.utils import registry

    compile_inputs = os.path.join(args.out, "compile")
    corpus = os.path.join(args.out, PROBLEM, "tmp")
    for folder in (compile_inputs, corpus):
        shutil.rmtree(folder, ignore_errors=True)
    write_compile_inputs(compile_inputs)
    write_enes_corpus(corpus)
    summary = {
        "izip_is_zip": "itertools.izip = zip before all but cleaned_as_is",
        "cleaner": cleaner_part(cleaner_en_xx),
        "compile": compile_part(translate, compile_inputs),
        "compile_datasets": COMPILE_DATASETS,
        "datagen": datagen_part(tf, np, registry, corpus),
        "random_seed": SEED,
        "versions": {
            "tensor2tensor": metadata.version("tensor2tensor"),
            "tensorflow": tf.__version__,
            "python": sys.version.split()[0],
        },
    }
    with open(os.path.join(args.out, "t2t_1.15.7_cleaner.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print(sum(summary["datagen"]["records"].values()), "records")


if __name__ == "__main__":
    main()
