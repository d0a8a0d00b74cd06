"""What ``t2t-import`` prints: what was written and the commands that use it."""

from __future__ import annotations

from t2t_repro.t2t_import.writer import ImportResult


def describe(
    result: ImportResult, output_dir: str, data_dir: str, copied_vocab: bool, usr_dir: str = ""
) -> str:
    """``usr_dir``: the import's --t2t_usr_dir, which the printed commands need as well."""
    imported = result.imported
    vocab_dir = output_dir if copied_vocab else (data_dir or "<T2T data_dir>")
    train_data = data_dir or "<T2T data_dir>"  # The TFRecords; T2T's data dirs read as they are.
    common = f"--problem={result.problem} --output_dir={output_dir}"
    if usr_dir:  # the problem or set was the usr_dir's: the commands must load it too
        common += f" --t2t_usr_dir={usr_dir}"
    overrides = f' --hparams="{imported.overrides}"' if imported.overrides else ""
    moments = "with Adam's moments" if result.with_optimizer else "without Adam's moments"
    lines = [
        f"wrote {result.checkpoint} (step {result.step}, {moments}) and hparams.json",
        f"hparams: set {imported.hparams_set}{overrides or ' (no overrides)'}; "
        f"{len(imported.ignored)} T2T hparams without effect here were dropped",
        f"decode:  t2t-decoder {common} --data_dir={vocab_dir} --decode_from_file=SOURCE "
        "--decode_to_file=OUT",
        f"resume:  t2t-trainer {common} --data_dir={train_data} "
        f"--hparams_set={imported.hparams_set}{overrides} --train_steps=N",
    ]
    return "\n".join(lines)
