#!/usr/bin/env python3
"""Parsing recipe: the paper's Table 4 setup on the Penn Treebank sample, end to end, on a CPU.

    .venv/bin/python bench/recipe_wsj_parsing.py --minutes=60

datagen (wsj_parsing_ptb_sample: wsj_0001-0179 train, 0180-0189 dev, 0190-0199 test) ->
t2t-trainer (time-boxed) -> t2t-avg-all -> t2t-decoder on the test sentences (the problem's
decode defaults: beam 21, alpha 0.3, input length + 300; and greedy) -> t2t-evalb (COLLINS
rules) on the delinearised output, strictly (EVALB drops every sentence whose punctuation tags
disagree with the gold ones) and with --align_punct (Collins' preprocessing: all sentences
scored). Every step is the real CLI. Writes results.json and results.md in
--work_dir. With the LDC treebank in --tmp_dir use --problem=wsj_parsing (sections 02-21/22/23).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from bench.report import training_stats, write_text_atomically  # noqa: E402
from t2t_repro.workflow import run_tool  # noqa: E402

# More dropout than transformer_parsing_cpu: an hour of bf16 is ~100 epochs of the sample.
HOUR_HPARAMS = "layer_prepostprocess_dropout=0.3,attention_dropout=0.2"
SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "..",
                      "shared", "data", "ptb_sample")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problem", default="wsj_parsing_ptb_sample")
    parser.add_argument("--hparams_set", default="transformer_parsing_cpu")
    parser.add_argument("--hparams", default=HOUR_HPARAMS)
    parser.add_argument("--mixed_precision", default="bfloat16",
                        help="bfloat16: 1.7-2.4x the fp32 tokens/s on this CPU (avx512_bf16)")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--train_steps", type=int, default=100000)
    parser.add_argument("--average_n", type=int, default=5)
    parser.add_argument("--decode_hparams", default="batch_size=16",
                        help="on top of the problem's defaults (beam 21, alpha 0.3, +300)")
    parser.add_argument("--work_dir", default="out/wsj_parsing")
    parser.add_argument("--tmp_dir", default=SHARED)
    args = parser.parse_args()
    work = os.path.abspath(args.work_dir)
    data, train = os.path.join(work, "data"), os.path.join(work, "train")
    avg = os.path.join(train, "avg")
    timings = {}

    start = time.time()
    run_tool("t2t-datagen", f"--problem={args.problem}", f"--data_dir={data}",
             f"--tmp_dir={os.path.abspath(args.tmp_dir)}")
    timings["datagen_s"] = time.time() - start

    start = time.time()
    run_tool("t2t-trainer", f"--problem={args.problem}", f"--hparams_set={args.hparams_set}",
             f"--hparams={args.hparams}", f"--data_dir={data}", f"--output_dir={train}",
             f"--train_steps={args.train_steps}", f"--max_train_seconds={args.minutes * 60}",
             f"--mixed_precision={args.mixed_precision}", "--no-attention_images",
             "--local_eval_frequency=250", "--keep_checkpoint_max=100")
    timings["train_s"] = time.time() - start
    stats = training_stats(train)

    start = time.time()
    run_tool("t2t-avg-all", f"--model_dir={train}", f"--output_dir={avg}",
             f"--n={args.average_n}")
    timings["average_s"] = time.time() - start

    words = os.path.join(data, f"{args.problem}.test.words")
    gold = os.path.join(data, f"{args.problem}.test.trees")
    summary = {"problem": args.problem, "hparams_set": args.hparams_set, "hparams": args.hparams,
               "timings": timings, **stats, "checkpoint": avg, "gold": gold, "decodes": {}}
    rows = []
    for name, decode_hparams in (("paper", args.decode_hparams),
                                 ("greedy", f"{args.decode_hparams},beam_size=1")):
        decodes = os.path.join(train, f"decode_test.{name}.linearized")
        start = time.time()
        run_tool("t2t-decoder", f"--problem={args.problem}", f"--data_dir={data}",
                 f"--output_dir={train}", f"--checkpoint_path={avg}",
                 f"--decode_hparams={decode_hparams}", f"--decode_from_file={words}",
                 f"--decode_to_file={decodes}")
        timings[f"decode_{name}_s"] = time.time() - start
        scored = {}
        for scoring, extra in (("evalb", ()), ("evalb_align_punct", ("--align_punct",))):
            scored[scoring] = json.loads(run_tool("t2t-evalb", f"--gold={gold}", f"--test={decodes}",
                                                  "--linearized", "--json", *extra, capture=True))
            corpus = scored[scoring]["all"]
            rows.append(f"| {name} | {scoring} | {corpus['f1']:.2f} | {corpus['precision']:.2f} | "
                        f"{corpus['recall']:.2f} | {corpus['complete_match']:.2f} | "
                        f"{corpus['valid']}/{corpus['sentences']} | {corpus['tagging_accuracy']:.2f} |")
        summary["decodes"][name] = {"decode_hparams": decode_hparams, "file": decodes, **scored}
    write_text_atomically(os.path.join(work, "results.json"), json.dumps(summary, indent=2))
    table = (f"{args.problem}, {args.hparams_set}, {timings['train_s'] / 60:.1f} min training, "
             f"{stats['steps']} steps, {stats['tokens_per_sec']:.0f} target tokens/s\n\n"
             "| decode | scoring | test F1 | precision | recall | complete match | scored sentences "
             "| tagging acc. |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")
    write_text_atomically(os.path.join(work, "results.md"), table)
    print("\n" + table)
    print(f"results: {os.path.join(work, 'results.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
