"""BLEU variants: agreement with sacreBLEU, a hand-computed case, the paper's compound split."""

import hashlib
import json
import math
import os
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from t2t_repro.metrics.bleu import (
    bleu_tokenize,
    compute_bleu,
    paper_ende_bleu,
    paper_tokenize,
    sacrebleu_score,
    sacrebleu_scores,
    split_compounds,
    t2t_bleu,
)
from tests.tools import run_tool

REFERENCE_DIR = Path(__file__).parent / "data" / "t2t_reference"

HYPS = [
    "Ein Mann fährt Fahrrad auf der Straße.",
    "Zwei Hunde spielen im Schnee!",
    "Eine Frau liest ein Buch im Park.",
]
REFS = [
    "Ein Mann fährt mit dem Fahrrad auf der Straße.",
    "Zwei Hunde spielen im Schnee.",
    "Eine Frau liest im Park ein Buch.",
]


def test_sacrebleu_variants_agree_with_sacrebleu_api():
    ours = {r.name: r.score for r in sacrebleu_scores(REFS, HYPS)}
    direct = sacrebleu.corpus_bleu(HYPS, [REFS], tokenize="13a").score
    assert ours["sacreBLEU 13a cased"] == pytest.approx(direct)
    lower = sacrebleu.corpus_bleu(HYPS, [REFS], tokenize="intl", lowercase=True).score
    assert ours["sacreBLEU intl uncased"] == pytest.approx(lower)
    # Dev BLEU (metrics/dev_metric.py, DevBleu) is sacreBLEU's default corpus_bleu.
    assert sacrebleu_score(REFS, HYPS) == direct != 100.0


def test_compute_bleu_hand_computed():
    # hyp "a b c d" vs ref "a b c e f": 1-grams 3/4, 2-grams 2/3, 3-grams 1/2, 4-grams 0/1
    # -> smoothed 4-gram precision 1/(2*1); BP = exp(1 - 5/4).
    got = compute_bleu([["a", "b", "c", "e", "f"]], [["a", "b", "c", "d"]])
    expected = math.exp(
        (math.log(3 / 4) + math.log(2 / 3) + math.log(1 / 2) + math.log(1 / 2)) / 4
    ) * math.exp(1 - 5 / 4)
    assert got == pytest.approx(expected)


def test_identical_is_100():
    assert t2t_bleu(REFS, REFS) == pytest.approx(100.0)
    assert paper_ende_bleu(REFS, REFS).score == pytest.approx(100.0)


def test_compound_split_as_get_ende_bleu_sh():
    assert split_compounds("Kosten-Nutzen") == "Kosten ##AT##-##AT## Nutzen"
    assert (
        paper_tokenize("Die Kosten-Nutzen-Analyse des EU-Parlaments.")
        == "Die Kosten ##AT##-##AT## Nutzen ##AT##-##AT## Analyse des EU ##AT##-##AT## "
        "Parlaments ."
    )
    # The perl s{(\S)-(\S)}{...}g consumes the character after the hyphen, so in a chain of
    # one-letter parts the second hyphen is not split, exactly like the script.
    assert split_compounds("a-b-c") == "a ##AT##-##AT## b-c"
    assert paper_tokenize("Tom & Jerry") == "Tom &amp; Jerry"  # tokenizer.perl escapes.


def test_compound_split_scores_higher_on_hyphen_rich_german():
    refs = ["Die EU-Kommission prüft die Kosten-Analyse und den Sicherheits-Bericht."]
    hyps = ["Die EU-Behörde prüft die Kosten-Studie und den Sicherheits-Plan."]
    split = paper_ende_bleu(refs, hyps).score
    plain = sacrebleu.corpus_bleu(hyps, [refs], tokenize="13a").score
    assert split > plain


def _run(*args):
    return run_tool("t2t-bleu", *args)


def test_cli_prints_all_labelled_variants(tmp_path):
    hyp, ref = tmp_path / "hyp.de", tmp_path / "ref.de"
    hyp.write_text("\n".join(HYPS) + "\n")
    ref.write_text("\n".join(REFS) + "\n")
    out = _run(f"--translation={hyp}", f"--reference={ref}", "--json")
    assert out.returncode == 0, out.stderr
    names = [r["name"] for r in json.loads(out.stdout)]
    assert "sacreBLEU 13a cased" in names and "paper BLEU (tokenized, compound-split)" in names
    assert len(names) == 7


def test_cli_errors(tmp_path):
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("a\nb\n")
    ref.write_text("a\n")
    out = _run(f"--translation={hyp}", f"--reference={ref}")
    assert out.returncode == 1 and "has 2 lines but" in out.stderr and "Traceback" not in out.stderr
    out = _run(f"--translation={tmp_path / 'missing'}", f"--reference={ref}")
    assert out.returncode == 1 and "does not exist" in out.stderr


def test_t2t_invocation_prints_t2t_lines(tmp_path, capsys):
    """`t2t-bleu --translation --reference` prints exactly what T2T 1.15.7's printed on the
    same files (recorded by tools/t2t_reference/make_t2t_bleu_reference.py), for T2T's
    default and each --bleu_variant; the other variants' table goes to stderr."""
    from t2t_repro.commands import bleu

    record = json.loads((REFERENCE_DIR / "t2t_1.15.7_bleu.json").read_text())
    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("\n".join(record["translation"]) + "\n")
    ref.write_text("\n".join(record["reference"]) + "\n")
    for run in record["runs"]:
        variant = [f"--bleu_variant={run['bleu_variant']}"] if run["bleu_variant"] else []
        assert bleu.main([f"--translation={hyp}", f"--reference={ref}", *variant]) == 0
        out = capsys.readouterr()
        assert out.out == run["stdout"]
        assert "sacreBLEU 13a cased" in out.err


def test_the_tokenizer_is_t2ts_on_every_punctuation_symbol_and_number_character():
    """T2T's bleu_tokenize as tools/t2t_reference/make_t2t_bleu_reference.py ran it: its tokens
    of named strings, and the sha256 of its tokens of one probe per character of the spec."""
    record = json.loads((REFERENCE_DIR / "t2t_1.15.7_bleu.json").read_text())["bleu_tokenize"]
    for text, tokens in record["named"].items():
        assert bleu_tokenize(text) == tokens, text
    spec = record["probe_spec"]
    chars = [
        chr(c)
        for c in range(spec["below"])
        if any(unicodedata.category(chr(c)).startswith(k) for k in spec["categories"])
    ]
    assert len(chars) == record["probes"]  # the Unicode database of T2T's run
    tokens = [bleu_tokenize(spec["template"].format(c=c)) for c in chars]
    digest = hashlib.sha256(json.dumps(tokens, ensure_ascii=False).encode()).hexdigest()
    assert digest == record["sha256"]


def test_t2t_bleu_rounds_in_t2ts_float32():
    """T2T's compute_bleu returns np.float32 and t2t-bleu prints 100 times it: on these lines
    BLEU is 0.0387499991977 in float64, whose x100 prints 3.87, but 3.875 in float32, which
    prints 3.88 (T2T 1.15.7's bleu_hook on the same lines printed 3.88)."""
    refs = ["f d a f d", "", "a d e a d f", "", ""]
    hyps = ["a d d d", "a g a f f b", "a f a e d g", "", "e c e a d c"]
    bleu64 = compute_bleu([r.split() for r in refs], [h.split() for h in hyps])
    assert f"{100 * bleu64:.2f}" == "3.87"
    assert f"{t2t_bleu(refs, hyps):6.2f}" == "  3.88"


def test_decode_reference_bleu_is_uncased_as_t2ts_compute_bleu_summaries(tmp_path):
    """T2T's --decode_reference BLEU (translate.py, compute_bleu_summaries) calls bleu_wrapper
    with its default case_sensitive=False: decodes differing only in case score 100."""
    from t2t_repro.decoding.decode_hooks import reference_bleu_score

    hyp, ref = tmp_path / "hyp", tmp_path / "ref"
    hyp.write_text("the cat sat on the mat .\na dog\n")
    ref.write_text("The Cat sat on the Mat .\nA Dog\n")
    assert reference_bleu_score(str(hyp), str(ref)) == 100.0


def test_t2ts_bleu_hook_gives_t2t_bleus_numbers_to_a_usr_dir(tmp_path):
    """``from tensor2tensor.utils import bleu_hook`` (a usr_dir's or a script's): T2T's
    functions on this project's BLEU (they were stand-ins that refused when called)."""
    import importlib

    from t2t_repro.t2t_compat import aliases

    aliases.install()
    bleu_hook = importlib.import_module("tensor2tensor.utils.bleu_hook")
    refs, hyps = ["The Cat sat on the Mat .", "a dog ran"], ["the cat sat on a mat .", "A dog"]
    (tmp_path / "ref").write_text("\n".join(refs) + "\n")
    (tmp_path / "hyp").write_text("\n".join(hyps) + "\n")
    uncased = bleu_hook.bleu_wrapper(str(tmp_path / "ref"), str(tmp_path / "hyp"))
    cased = bleu_hook.bleu_wrapper(str(tmp_path / "ref"), str(tmp_path / "hyp"), True)
    assert isinstance(uncased, np.float32) and uncased != cased
    assert float(np.float32(100) * uncased) == t2t_bleu(refs, hyps, case_sensitive=False)
    assert bleu_hook.bleu_tokenize("a,b.") == bleu_tokenize("a,b.")
    for step in (20, 10):
        (tmp_path / f"model.ckpt-{step}.index").write_text("")
    found = list(bleu_hook.stepfiles_iterator(str(tmp_path)))
    assert [(f.steps, os.path.basename(f.filename)) for f in found] == [
        (10, "model.ckpt-10"),
        (20, "model.ckpt-20"),
    ]
