"""The suite's CPU accounts and budget (tests/suite_cpu.py, tools/suite_budget.py): a forked
run's CPU goes to the test that started it; a file past its share is named, noise is not."""

import json

from tests import suite_cpu
from tools import suite_budget

KIND = "AMD EPYC, no AVX-512"
BUDGET = {
    "totals": {KIND: {"reference_python_loop_s": 0.5, "total_core_s": 100}},
    "files": {"tests/test_a.py": 0.6, "tests/test_b.py": 0.3, "tests/test_c.py": 0.1},
}


def write_log(path, lines):
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"cut sh')


def test_forked_runs_go_to_the_test_running_in_their_client_parent(tmp_path):
    log = tmp_path / "cpu.jsonl"
    write_log(
        log,
        [
            {"test": "tests/test_a.py::one", "pid": 7, "start": 10, "end": 20, "cpu_s": 2.0},
            {"test": "tests/test_a.py::two", "pid": 8, "start": 10, "end": 20, "cpu_s": 1.0},
            {"test": "tests/test_b.py::three", "pid": 7, "start": 21, "end": 30, "cpu_s": 0.5},
            {"client_of": 7, "end": 25, "cpu_s": 4.0},  # during test_b's test, in pid 7
            {"client_of": 8, "end": 19, "cpu_s": 3.0},
            {"client_of": 9, "end": 19, "cpu_s": 0.25},  # no test of pid 9: unassigned
        ],
    )
    accounts = suite_cpu.cpu_accounts(str(log))
    assert accounts["by_file"] == {"tests/test_a.py": 6.0, "tests/test_b.py": 4.5}
    assert accounts["top_tests"]["tests/test_b.py::three"] == 4.5
    assert accounts["unassigned_run_core_s"] == 0.2 and accounts["forked_runs"] == 3
    assert accounts["accounted_core_s"] == 10.8


def test_memory_peaks_name_the_test_each_process_peaked_in(tmp_path):
    log, gib = tmp_path / "cpu.jsonl", 2**20
    test = {"pid": 7, "cpu_s": 1.0}
    write_log(
        log,
        [
            {**test, "test": "t.py::a", "start": 0, "end": 9, "maxrss_kib": 1 * gib},
            {**test, "test": "t.py::b", "start": 10, "end": 19, "maxrss_kib": 3 * gib},
            {**test, "test": "t.py::c", "start": 20, "end": 29, "maxrss_kib": 3 * gib},
            {"client_of": 7, "end": 25, "cpu_s": 1.0, "maxrss_kib": gib // 2},  # in c
            {"test": "t.py::d", "pid": 8, "start": 0, "end": 5, "cpu_s": 1.0},  # no size logged
        ],
    )
    assert suite_cpu.cpu_accounts(str(log))["memory_peaks_gib"] == {
        "test process 7, reached in t.py::b": 3.0,
        "tool run of t.py::c": 0.5,
    }


def test_a_file_past_its_share_is_named_and_noise_is_not():
    # test_b 20% over its share, test_c 0.5% of the suite over: noise, nothing named.
    noisy = {"tests/test_a.py": 56.0, "tests/test_b.py": 36.0, "tests/test_c.py": 10.5}
    assert suite_cpu.grown_files(noisy, BUDGET) == []
    grown = {"tests/test_a.py": 60.0, "tests/test_b.py": 70.0, "tests/test_c.py": 10.0}
    assert [g[0] for g in suite_cpu.grown_files(grown, BUDGET)] == ["tests/test_b.py"]
    # 40% past its share (a CPU kind's difference, not a change): not named.
    kind = {"tests/test_a.py": 60.0, "tests/test_b.py": 50.0, "tests/test_c.py": 10.0}
    assert suite_cpu.grown_files(kind, BUDGET) == []
    new = dict(noisy, **{"tests/test_new.py": 5.0, "tests/test_tiny_new.py": 0.5})
    assert [g[0] for g in suite_cpu.grown_files(new, BUDGET)] == ["tests/test_new.py"]


def test_over_budget_is_scaled_to_the_machine_and_fails_only_with_a_file_named():
    grown = {"tests/test_a.py": 60.0, "tests/test_b.py": 70.0, "tests/test_c.py": 10.0}
    failed, lines = suite_cpu.report(grown, BUDGET, 0.5, KIND)
    assert failed and f"budget on {KIND} 100 (over" in lines[0]
    assert (
        "past its share: tests/test_b.py 70 core-s, 50.0% of the suite (its share 30.0%)"
        in (lines[1])
    )
    # The same seconds on a machine twice as fast are twice the reference's: over.
    # On one twice as slow, within the budget: nothing fails, the file is still named.
    failed, lines = suite_cpu.report(grown, BUDGET, 1.0, KIND)
    assert not failed and "within" in lines[0] and "test_b.py" in lines[1]
    alike = {name: 200 * share for name, share in BUDGET["files"].items()}  # all twice as dear
    failed, lines = suite_cpu.report(alike, BUDGET, 0.5, KIND)
    assert not failed and "no file past its share" in lines[1]
    # Another CPU kind's loop says nothing of this kind's compute: no total, the shares alone.
    failed, lines = suite_cpu.report(grown, BUDGET, 0.5, "Intel Xeon, AMX")
    assert not failed and "no budget total for this CPU kind (Intel Xeon, AMX)" in lines[0]
    assert "test_b.py" in lines[1]


def test_cpu_kind_is_the_line_and_its_widest_vector_unit():
    def info(model, flags, family=25, number=1):
        return (
            f"processor\t: 0\ncpu family\t: {family}\nmodel\t\t: {number}\n"
            f"model name\t: {model}\nflags\t\t: fpu sse2 {flags}\n"
        )

    assert suite_cpu.cpu_kind(info("AMD EPYC 7B13", "avx2")) == "AMD EPYC, no AVX-512"
    # Zen 1 and Zen+ (family 23 below model 0x30), not Zen 2 (family 23 model 0x31)
    zen1 = "AMD EPYC, no AVX-512, Zen 1"
    assert suite_cpu.cpu_kind(info("AMD EPYC Processor", "avx2", 23, 1)) == zen1
    assert suite_cpu.cpu_kind(info("AMD EPYC 7551", "avx2", 23, 8)) == zen1
    assert suite_cpu.cpu_kind(info("AMD EPYC 7B12", "avx2", 23, 49)) == "AMD EPYC, no AVX-512"
    assert suite_cpu.cpu_kind(info("AMD EPYC", "avx512f avx512_bf16")) == "AMD EPYC, avx512_bf16"
    xeon = info("Intel(R) Xeon(R) Platinum 8481C", "avx512f avx512_bf16 amx_bf16 amx_tile")
    assert suite_cpu.cpu_kind(xeon) == "Intel Xeon, AMX"
    assert suite_cpu.cpu_kind(info("Intel(R) Xeon(R) CPU", "avx512f")) == "Intel Xeon, AVX-512"


def test_the_tool_checks_a_report_and_writes_a_budget(tmp_path, capsys):
    results = tmp_path / "suite.json"
    by_file = {"tests/test_a.py": 60.0, "tests/test_b.py": 70.0, "tests/test_c.py": 10.0}
    report = {
        "cpu": "a CPU",
        "cpu_kind": KIND,
        "cpu_accounts": {"by_file": by_file},
        "calibration_start": {"python_loop_s": 0.4},
        "calibration_end": {"python_loop_s": 0.6},
    }
    results.write_text(json.dumps(report))
    budget = tmp_path / "budget.json"
    budget.write_text(json.dumps(BUDGET))
    assert suite_budget.main([str(results), f"--budget={budget}"]) == 1
    assert "tests/test_b.py" in capsys.readouterr().out
    assert suite_budget.main([str(results), f"--budget={budget}", "--write"]) == 0
    written = json.loads(budget.read_text())
    assert written["totals"][KIND] == {
        "total_core_s": 140,
        "reference_python_loop_s": 0.5,
        "from": "suite.json",
    }
    assert written["files"] == {
        "tests/test_a.py": 0.4286,
        "tests/test_b.py": 0.5,
        "tests/test_c.py": 0.0714,
    }
    assert suite_budget.main([str(results), f"--budget={budget}"]) == 0
    # Another kind's total is written beside this one's, with its own reference.
    more = ["--write", "--cpu_kind=Intel Xeon, AMX", "--total_core_s=90"]
    assert suite_budget.main([str(results), f"--budget={budget}", *more]) == 0
    totals = json.loads(budget.read_text())["totals"]
    assert totals[KIND]["total_core_s"] == 140 and totals["Intel Xeon, AMX"]["total_core_s"] == 90
    results.write_text("{}")
    assert suite_budget.main([str(results), f"--budget={budget}"]) == 2
    assert "not a bench_suite report" in capsys.readouterr().err


def test_the_budget_names_files_of_this_suite():
    budget = suite_cpu.load_budget()
    assert budget["totals"] and all(
        t["total_core_s"] > 0 and t["reference_python_loop_s"] > 0
        for t in budget["totals"].values()
    )
    assert "AMD EPYC, no AVX-512" in budget["totals"]  # the slowest kind seen
    assert abs(sum(budget["files"].values()) - 1) < 0.01
    assert "tests/test_trainer.py" in budget["files"]


def test_the_first_deal_gives_whole_files_by_cost_costliest_first():
    from tests.xdist_schedule import deal

    ids = [
        f"tests/{name}.py::t{i}"
        for name, n in (("a", 3), ("b", 1), ("c", 2), ("d", 4))
        for i in range(n)
    ]
    shares = {"tests/a.py": 0.1, "tests/b.py": 0.5, "tests/c.py": 0.3}  # d: new, no share
    queues = deal(ids, shares, 2)
    # b (0.5) to one queue; c (0.3), a (0.1) and d (0) each to the other, still the lighter.
    files = [[ids[i].split("::")[0][6:-3] for i in queue] for queue in queues]
    assert files == [["b"], ["c", "c", "a", "a", "a", "d", "d", "d", "d"]]
    assert sorted(i for queue in queues for i in queue) == list(range(len(ids)))
    assert [ids[i] for i in queues[1][2:5]] == ids[:3]  # a file's tests keep their order
    assert deal(ids, {}, 3)[0] == list(range(len(ids)))[:3]  # no budget: by count, in order
