"""docs/architecture.md and README.md tell the truth about the package layout and imports (#28).

Its tier table is read as data: every package and top-level module under t2t_repro/ (and the
top-level problems/ and hparams/) is in exactly one tier, every part it names exists, no part
imports one of a higher tier, and no parts import each other in a circle. Nor do two modules,
in any part (#49), and no module is over MAX_LINES lines. The imports are read from the source
by tools/import_graph.py (nothing is imported or run).
"""

import re

import pytest

from tools.import_graph import REPO, circles, import_graph, module_graph, modules, parts

ROW = re.compile(r"^\| (\d+) \| ([^|]+) \|")
MAX_LINES = 450  # docs/architecture.md: small modules, one concern each


def _documented_tiers() -> dict[str, int]:
    tiers: dict[str, int] = {}
    for line in (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            for name in re.findall(r"`([\w.]+?)(?:/|\.py)`", match.group(2)):
                assert name not in tiers, f"{name} is in two tiers of docs/architecture.md"
                tiers[name] = int(match.group(1))
    return tiers


@pytest.mark.slow
def test_every_part_is_in_the_documented_tiers_and_every_documented_part_exists():
    tiers = _documented_tiers()
    actual = set(parts())
    missing = sorted(actual - set(tiers))
    assert not missing, f"not in docs/architecture.md's tier table: {missing}"
    stale = sorted(set(tiers) - actual)
    assert not stale, f"docs/architecture.md names parts that do not exist: {stale}"


def test_readme_layout_table_lists_every_package():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    packages = [
        p.name for p in sorted((REPO / "t2t_repro").iterdir()) if (p / "__init__.py").exists()
    ]
    missing = [name for name in packages if f"| `t2t_repro/{name}/` |" not in readme]
    assert not missing, f"README.md's layout table lacks t2t_repro/{missing}"


def test_no_import_runs_up_the_documented_tiers():
    tiers = _documented_tiers()
    upward = [
        f"{name} (tier {tiers[name]}) imports {target} (tier {tiers[target]})"
        for name, targets in import_graph().items()
        for target in targets
        if tiers.get(target, 0) > tiers.get(name, 0)
    ]
    assert not upward, "; ".join(upward)


def test_no_import_circle_between_parts():
    graph = import_graph()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(name) :] + [name]))
        if name not in done:
            for target in sorted(graph[name]):
                visit(target, path + [name])
            done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_no_import_circle_inside_t2t_compat():
    """T2T's edge imports one way (T2T's own layering: generator_utils <- problem <-
    text_problems <- translate), so each of its modules reads and moves on its own (#49)."""
    package = "t2t_repro.t2t_compat"
    inside = {
        name: {t for t in targets if t.startswith(package + ".")}
        for name, targets in module_graph().items()
        if name.startswith(package + ".")
    }
    assert len(inside) > 10 and any(inside.values())  # the edge's modules and their imports
    assert circles(inside) == [], circles(inside)


def test_no_import_circle_between_modules():
    groups = circles(module_graph())
    assert not groups, "; ".join("import circle: " + ", ".join(group) for group in groups)


def test_no_module_is_longer_than_max_lines():
    found = modules()
    long = {
        name: n
        for name, path in sorted(found.items())
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by concern): {long}"
