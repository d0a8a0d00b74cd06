#!/usr/bin/env python3
"""Multi30k through CTranslate2: the recipe's averaged model, exported in float32 and int8,
decodes test_2016_flickr; sacreBLEU of each beside our own decoder's (#37).

    .venv/bin/python -m recipes.multi30k --pair=ende --minutes=60 --work_dir=out/m30k
    .venv/bin/python -m recipes.multi30k_ct2 --pair=ende --work_dir=out/m30k

Every engine decodes the same source file with the recipe's search (beam 4, alpha 0.6,
``extra_length`` 50) through ``t2t-decoder`` (``--engine=ctranslate2`` for the exports), and
``t2t-bleu`` scores it (sacreBLEU 13a, cased) against the same reference. Writes
``ct2_results.json`` in --work_dir and, with --out, the report for ``bench/results``.
"""

import argparse
import gzip
import json
import os
import sys
import time

from bench.report import MULTI30K, cpu_model, emit, write_text_atomically
from t2t_repro.workflow import run_tool

DECODE_HPARAMS = "beam_size=4,alpha=0.6,extra_length=50,batch_size=64"
TARGET = {"ende": "de", "enfr": "fr"}


def unzipped(src: str, dst: str) -> str:
    with gzip.open(src, "rt", encoding="utf-8") as f:
        write_text_atomically(dst, f.read())
    return dst


def decode_and_bleu(args, engine: list[str], name: str, source: str, reference: str) -> dict:
    out = os.path.join(args.work_dir, "ct2", f"test.{name}.txt")
    start = time.time()
    run_tool(
        "t2t-decoder",
        f"--problem=translate_{args.pair}_multi30k",
        f"--data_dir={os.path.join(args.work_dir, 'data')}",
        f"--output_dir={os.path.join(args.work_dir, 'train')}",
        f"--decode_hparams={DECODE_HPARAMS}",
        f"--decode_from_file={source}",
        f"--decode_to_file={out}",
        *engine,
    )
    seconds = time.time() - start
    scores = json.loads(
        run_tool(
            "t2t-bleu", f"--translation={out}", f"--reference={reference}", "--json", capture=True
        )
    )
    bleu = {r["name"]: r["score"] for r in scores}
    return {
        "decodes": out,
        "decode_s": round(seconds, 1),
        "sacreBLEU 13a cased": bleu["sacreBLEU 13a cased"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", choices=sorted(TARGET), default="ende")
    parser.add_argument("--work_dir", required=True, help="a finished recipes.multi30k run's")
    parser.add_argument("--hparams_set", default="transformer_multi30k_cpu")
    parser.add_argument("--tmp_dir", default=MULTI30K)
    parser.add_argument("--out", default="", help="also write the report here (JSON)")
    args = parser.parse_args()
    args.work_dir = os.path.abspath(args.work_dir)
    train, avg = os.path.join(args.work_dir, "train"), os.path.join(args.work_dir, "train", "avg")
    if not os.path.isdir(avg):
        print(
            f"{avg} does not exist: run recipes.multi30k with this --work_dir first",
            file=sys.stderr,
        )
        return 1
    ct2 = os.path.join(args.work_dir, "ct2")
    source = unzipped(
        os.path.join(args.tmp_dir, "test_2016_flickr.en.gz"), os.path.join(ct2, "test.en")
    )
    target = TARGET[args.pair]
    reference = unzipped(
        os.path.join(args.tmp_dir, f"test_2016_flickr.{target}.gz"),
        os.path.join(ct2, f"test.{target}"),
    )
    results = {
        "ours_float32": decode_and_bleu(
            args,
            [f"--checkpoint_path={avg}", f"--hparams_set={args.hparams_set}"],
            "ours_float32",
            source,
            reference,
        )
    }
    for quantization in ("float32", "int8"):
        export = os.path.join(ct2, f"model-{quantization}")
        if not os.path.isdir(export):
            run_tool(
                "t2t-exporter",
                f"--problem=translate_{args.pair}_multi30k",
                f"--data_dir={os.path.join(args.work_dir, 'data')}",
                f"--output_dir={train}",
                f"--checkpoint_path={avg}",
                "--export_format=ctranslate2",
                f"--ct2_quantization={quantization}",
                f"--export_dir={export}",
            )
        engine = ["--engine=ctranslate2", f"--ct2_model_dir={export}"]
        results[f"ct2_{quantization}"] = decode_and_bleu(
            args, engine, f"ct2_{quantization}", source, reference
        )
    fp32, int8 = (results[f"ct2_{q}"]["sacreBLEU 13a cased"] for q in ("float32", "int8"))
    report = {
        "what": f"Multi30k {args.pair} test_2016_flickr (1,000 sentences), sacreBLEU 13a cased",
        "cpu": cpu_model(),
        "checkpoint": avg,
        "decode_hparams": DECODE_HPARAMS,
        "results": results,
        "int8_minus_float32": round(int8 - fp32, 2),
        "within_0.3": abs(int8 - fp32) <= 0.3,
    }
    write_text_atomically(
        os.path.join(args.work_dir, "ct2_results.json"), json.dumps(report, indent=2)
    )
    emit(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
