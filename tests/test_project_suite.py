"""tools/project_suite.py: a tree's suite cost carried to another CPU kind by each file's ratio
between an old tree's runs there and here; checked against that kind's budget."""

import json

import pytest

from tools import project_suite

KIND = "AMD EPYC, no AVX-512, Zen 1"


def report(by_file, busy, loop=0.2, mean_busy=2.0, kind="Intel Xeon, AMX", env=("CI=true",)):
    return {
        "cpu": "some CPU",
        "cpu_kind": kind,
        "cores": 2,
        "env": list(env),
        "busy_core_s": busy,
        "mean_busy_cores": mean_busy,
        "calibration_start": {"python_loop_s": loop},
        "calibration_end": {"python_loop_s": loop},
        "cpu_accounts": {"by_file": by_file},
    }


# The old tree: test_a 4x dearer there (compute), test_b 2x, test_tiny below the floor.
HERE = report({"a.py": 10.0, "b.py": 10.0, "tiny.py": 0.2}, busy=25.0)
THERE = report({"a.py": 40.0, "b.py": 20.0, "tiny.py": 5.0}, busy=75.0, loop=0.5, kind=KIND)


def test_each_file_goes_by_its_own_ratio_and_small_or_new_ones_by_the_suites():
    ratios, whole = project_suite.file_ratios(
        THERE["cpu_accounts"]["by_file"], HERE["cpu_accounts"]["by_file"]
    )
    assert ratios == {"a.py": 4.0, "b.py": 2.0}
    assert whole == pytest.approx(65.0 / 20.2)
    now = report({"a.py": 5.0, "b.py": 10.0, "tiny.py": 0.2, "new.py": 2.0}, busy=20.0)
    p = project_suite.project(now, THERE, HERE)
    assert p["accounted_core_s"] == pytest.approx(5 * 4 + 10 * 2 + 2.2 * whole)
    assert p["busy_core_s"] == pytest.approx(20.0 * 75.0 / 25.0)
    assert p["wall_s"] == pytest.approx(60.0 / 2.0)


def test_a_run_in_a_slower_phase_is_brought_to_the_old_runs_speed():
    now = report({"a.py": 10.0, "b.py": 10.0}, busy=25.0, loop=0.4)  # the machine at half speed
    assert project_suite.project(now, THERE, HERE)["accounted_core_s"] == pytest.approx(30.0)


def test_without_loop_scaling_the_runs_count_as_one_speed(tmp_path, capsys):
    now = report({"a.py": 10.0, "b.py": 10.0}, busy=25.0, loop=0.4)
    assert project_suite.project(now, THERE, HERE, loop_scaling=False)[
        "accounted_core_s"
    ] == pytest.approx(60.0)
    pair = f"{write(tmp_path, 'there.json', THERE)}:{write(tmp_path, 'here.json', HERE)}"
    argv = [write(tmp_path, "now.json", now), "--pair", pair, "--budget", budget(tmp_path, 99)]
    assert project_suite.main([*argv, "--noloop_scaling"]) == 0
    out = capsys.readouterr().out
    assert "~60 accounted core-s" in out and "not side by side" not in out
    assert project_suite.main(argv) == 0  # scaled: 30, and the loops' gap is said
    out = capsys.readouterr().out
    assert "~30 accounted core-s" in out and "Python loop 0.200 s against 0.400 s" in out


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(json.dumps(content) if isinstance(content, dict) else content)
    return str(path)


def budget(tmp_path, total):
    totals = {KIND: {"total_core_s": total, "reference_python_loop_s": 0.25}}
    return write(tmp_path, "budget.json", {"totals": totals, "files": {}})


@pytest.mark.parametrize("total,code,verdict", [(40, 0, "within"), (29, 1, "over")])
def test_the_projection_is_checked_at_the_budgets_speed(tmp_path, capsys, total, code, verdict):
    # Projected 60 accounted core-s at loop 0.5: 30 at the budget's loop 0.25.
    now = write(tmp_path, "now.json", report({"a.py": 10.0, "b.py": 10.0}, busy=25.0))
    pair = f"{write(tmp_path, 'there.json', THERE)}:{write(tmp_path, 'here.json', HERE)}"
    argv = [now, "--pair", pair, "--budget", budget(tmp_path, total)]
    assert project_suite.main(argv) == code
    out = capsys.readouterr().out
    assert "~60 accounted core-s (~30 at the budget's loop 0.25 s" in out
    assert f"budget {total}: {verdict}" in out and "~75 busy core-s, ~0:38 wall" in out
    assert "not side by side" not in out


def test_runs_not_side_by_side_are_said(tmp_path, capsys):
    now = report({"a.py": 10.0}, busy=10.0, env=("CI=true", "TF_ENABLE_ONEDNN_OPTS=0"))
    pair = f"{write(tmp_path, 'there.json', THERE)}:{write(tmp_path, 'here.json', HERE)}"
    argv = [write(tmp_path, "now.json", now), "--pair", pair, "--budget", budget(tmp_path, 99)]
    assert project_suite.main(argv) == 0
    assert "not side by side with" in capsys.readouterr().out


@pytest.mark.parametrize("loop,said", [(0.22, False), (0.24, True), (0.16, True)])
def test_a_now_run_in_another_speed_phase_is_said(tmp_path, capsys, loop, said):
    """HERE ran at loop 0.2 s: a NOW more than 15% slower or faster is not one sitting."""
    now = report({"a.py": 10.0}, busy=10.0, loop=loop)
    pair = f"{write(tmp_path, 'there.json', THERE)}:{write(tmp_path, 'here.json', HERE)}"
    argv = [write(tmp_path, "now.json", now), "--pair", pair, "--budget", budget(tmp_path, 99)]
    assert project_suite.main(argv) == 0
    out = capsys.readouterr().out
    assert (f"Python loop 0.200 s against {loop:.3f} s (the host's speed changed" in out) == said


def test_bad_inputs_are_refused_in_one_line_before_any_projection(tmp_path, capsys):
    now = write(tmp_path, "now.json", report({"a.py": 1.0}, busy=2.0))
    there, here = write(tmp_path, "there.json", THERE), write(tmp_path, "here.json", HERE)
    good = f"{there}:{here}"

    def bad(name, **changes):
        return write(tmp_path, name, {**THERE, **changes})

    elsewhere = report({"tests/a.py": 1.0}, busy=2.0)  # no file in common with THERE
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    incomplete = write(budgets, "b.json", {"totals": {KIND: {"total_core_s": 9}}})
    cases = [
        ([now, "--pair", "there.json"], "give THERE.json:HERE.json"),
        ([now, "--pair", f"{write(tmp_path, 'x.json', '{[')}:{here}"], "not a bench_suite report"),
        ([now, "--pair", good, "--cpu_kind", "Zen 9"], "no budget total for 'Zen 9'"),
        ([now, "--pair", f"{bad('y.json', cpu_accounts={})}:{here}"], "by_file"),
        ([now, "--pair", f"{bad('z.json', busy_core_s=0)}:{here}"], "no busy core-s"),
        (
            [now, "--pair", f"{bad('n.json', cpu_accounts={'by_file': {'a.py': None}})}:{here}"],
            "not a number",
        ),
        (
            [now, "--pair", f"{bad('c.json', calibration_start=None, calibration_end='x')}:{here}"],
            "not a bench_suite report",
        ),
        ([now, "--pair", f"{there}:{write(tmp_path, 'e.json', elsewhere)}"], "share no test file"),
        ([now, "--pair", f"{here}:{there}"], "HERE must come from this machine"),  # swapped
        ([now, "--pair", good, "--budget", incomplete], "not a budget"),
    ]
    for argv, message in cases:
        argv = argv if "--budget" in argv else [*argv, "--budget", budget(tmp_path, 1)]
        assert project_suite.main([argv[0], "--pair", good, *argv[1:]]) == 2, message
        out, err = capsys.readouterr()
        assert not out, out  # nothing printed: not even the good pair before the bad one
        assert message in err and len(err.strip().splitlines()) == 1, err
