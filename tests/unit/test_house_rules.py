"""The house's rules read from the source (ast): what each part may be handed and may import.

- No function under fauxka/controller/ takes the controller as a whole (an `admin` or `controller`
  parameter, or one annotated with AdminController / ControllerAreas): each area is a class given
  what it reads and writes by the composition root (fauxka/broker/app.py).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTROLLER = ROOT / "fauxka" / "controller"
WHOLE_CONTROLLER = {"AdminController", "ControllerAreas"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _line(hit: str) -> int:
    return int(hit.split(" ", 1)[0].rsplit(":", 1)[1])


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = function.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]


def _names_in(annotation: ast.expr | None) -> set[str]:
    if annotation is None:
        return set()
    found = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(annotation) if isinstance(n, ast.Attribute)}
    found |= {n.value for n in ast.walk(annotation) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return found


def controller_parameters(path: Path) -> list[str]:
    """`file:line function(parameter)` for each parameter that hands a function the whole controller."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for arg in _parameters(node):
                annotated = any(name in WHOLE_CONTROLLER or name.split(".")[-1] in WHOLE_CONTROLLER
                                for name in _names_in(arg.annotation))
                if arg.arg in ("admin", "controller") or annotated:
                    found.append(f"{path.name}:{node.lineno} {node.name}({arg.arg})")
    return sorted(found, key=_line)


def test_no_controller_function_takes_the_whole_controller():
    found = [hit for path in sorted(CONTROLLER.glob("*.py")) for hit in controller_parameters(path)]
    assert found == []


def test_the_checks_catch_what_they_are_for(tmp_path):
    """Each rule fails on a module that breaks it (a check that cannot fail checks nothing)."""
    area = tmp_path / "area.py"
    area.write_text("class Area:\n    def __init__(self, admin):\n        pass\n\n"
                    "async def write(writes, areas: 'ControllerAreas'):\n    pass\n")
    assert controller_parameters(area) == ["area.py:2 __init__(admin)", "area.py:5 write(areas)"]
