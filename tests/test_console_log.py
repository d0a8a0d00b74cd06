"""The trainer's console line: ETA from the step rate, capped by --max_train_seconds."""

import io
import time

import pytest

from t2t_repro.training.loop.summaries import ConsoleLog, format_duration, window_scalars


def test_eta_from_steps_and_capped_by_deadline():
    log = ConsoleLog(1000, stream=io.StringIO())
    assert log.eta_seconds(200, steps_per_sec=4.0) == 200.0  # 800 steps left at 4/s
    log.deadline = time.time() + 60
    assert 55 < log.eta_seconds(200, steps_per_sec=4.0) <= 60
    log.deadline = time.time() - 5  # Past the limit: nothing left.
    assert log.eta_seconds(200, steps_per_sec=4.0) == 0.0


def test_line_format():
    stream = io.StringIO()
    ConsoleLog(1000, stream=stream).line(200, 3.21, 4.1e-4, 5120.0, steps_per_sec=4.0)
    assert stream.getvalue() == (
        f"step 200/1000 | loss 3.2100 | lr 4.100e-04 | 5,120 tok/s | ETA {format_duration(200.0)}\n"
    )
    assert format_duration(200.0) == "3m20s"


def test_no_eta_before_a_timing_without_tracing():
    stream = io.StringIO()
    ConsoleLog(1000, stream=stream).line(20, 3.21, 4.1e-4, 5120.0, steps_per_sec=None)
    assert stream.getvalue().endswith("| ETA -\n")


def test_line_goes_to_the_stdout_of_print_time_not_of_import_time(monkeypatch):
    import importlib.util

    from t2t_repro.training.loop import summaries

    at_import, at_print = io.StringIO(), io.StringIO()
    monkeypatch.setattr("sys.stdout", at_import)
    spec = importlib.util.spec_from_file_location("summaries_copy", summaries.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a fresh import under at_import (sys.modules untouched)
    monkeypatch.setattr("sys.stdout", at_print)
    module.ConsoleLog(1000).line(200, 3.21, 4.1e-4, 5120.0, steps_per_sec=None)
    assert at_print.getvalue().startswith("step 200/1000 | loss 3.2100")
    assert at_import.getvalue() == ""


def test_decoder_eta_starts_after_the_first_batch():
    from t2t_repro.decoding.line_decoder import LineDecoder, decode_hparams

    class Encoder:
        def encode(self, line):
            return [5] * len(line.split())

    decoder = LineDecoder.__new__(LineDecoder)  # no model: decode_ids is replaced below
    decoder.input_encoder, decoder.dhp, decoder.max_input_length = (
        Encoder(),
        decode_hparams("batch_size=1"),
        50,
    )
    messages = []
    decoder.log = messages.append
    slow_first = iter([0.3, 0.0, 0.0])
    decoder.searcher = None  # greedy, no sampling: repeats are not counted
    decoder.prompt = False  # a translation model's lines, not a language model's prompts
    decoder.decode_ids = lambda batch, lines=None, occurrences=None: (
        time.sleep(next(slow_first)),
        [[]] * len(batch),
    )[1]
    decoder.decode_lines(["a b", "c", "d e f"])
    assert messages[0] == "decoded 1/3 sentences (first batch, with tracing)"
    eta = float(messages[1].split("ETA ")[1].rstrip("s)"))
    assert eta < 0.1  # the 0.3 s of the first batch is not in the rate


def test_window_scalars_have_t2ts_global_step_rate(monkeypatch):
    """Estimator's StepCounterHook: global steps (batches; multistep_adam takes several per
    update) per second of the window's untraced loop calls, under T2T's tag."""
    window = dict(
        seconds=4.0,
        updates=10,
        timed_seconds=2.4,  # the loop calls after the first, which traced
        timed_updates=6,
        loss_sum=25.0,
        grad_norm_sum=5.0,
        target_tokens=800,
        target_padded=1000,
        examples=40,
    )
    monkeypatch.delenv("T2T_PEAK_FLOPS", raising=False)  # no MFU: the hparams are not read
    values = window_scalars(window, 1e-3, None, steps_per_update=2)
    assert values["global_step/sec"] == pytest.approx(5.0) and values["loss"] == 2.5
    assert values["tokens_per_sec"] == 200.0
    del window["timed_seconds"], window["timed_updates"]  # a window that only traced: none
    assert "global_step/sec" not in window_scalars(window, 1e-3, None, steps_per_update=2)
