"""The house's rules read from the source (ast): what each part may be handed and may import.

- No function under fauxka/controller/ takes the controller as a whole (an `admin` or `controller`
  parameter, or one annotated with AdminController / ControllerAreas): each area is a class given
  what it reads and writes by the composition root (fauxka/broker/app.py).
- No module of fauxka/broker/handlers/ imports fauxka.zkstore or touches `ctx.zk`, and none but the
  dispatch table (table.py) imports an api handler (a module with a `handle` function; the shared
  pieces, admin_common.py and the like, have none).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTROLLER = ROOT / "fauxka" / "controller"
HANDLERS = ROOT / "fauxka" / "broker" / "handlers"
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


def _handlers_package() -> dict[str, ast.Module]:
    return {p.stem: _tree(p) for p in sorted(HANDLERS.glob("*.py"))}


def _api_handlers(modules: dict[str, ast.Module]) -> set[str]:
    return {name for name, tree in modules.items()
            if any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "handle" for n in tree.body)}


def handler_breaches(name: str, tree: ast.Module, handlers: set[str]) -> list[str]:
    """What the module `name` of the handlers' package does that it must not: import zkstore or an api
    handler (`handlers`), touch ctx.zk."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{name}:{node.lineno} import {a.name}" for a in node.names if "zkstore" in a.name.split(".")]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if "zkstore" in module.split("."):
                found.append(f"{name}:{node.lineno} from {module} import ...")
            if node.level == 1:  # a sibling: `from . import x` or `from .x import y`
                siblings = [a.name for a in node.names] if not module else [module.split(".")[0]]
                found += [f"{name}:{node.lineno} imports the handler {s}" for s in siblings if s in handlers]
            if module.endswith("broker.handlers") or ".broker.handlers." in f"{module}.":
                found += [f"{name}:{node.lineno} imports the handler {a.name}" for a in node.names if a.name in handlers]
        elif isinstance(node, ast.Attribute) and node.attr == "zk":
            found.append(f"{name}:{node.lineno} .zk")
    return sorted(found, key=_line)


def test_no_controller_function_takes_the_whole_controller():
    found = [hit for path in sorted(CONTROLLER.glob("*.py")) for hit in controller_parameters(path)]
    assert found == []


def test_no_handler_imports_zkstore_touches_ctx_zk_or_imports_another_handler():
    modules = _handlers_package()
    handlers = _api_handlers(modules)
    assert len(handlers) > 50 and "admin_common" in modules  # the check reads the modules it means to
    found = [hit for name, tree in modules.items() if name != "table"
             for hit in handler_breaches(name, tree, handlers - {name})]
    assert found == []


def test_the_checks_catch_what_they_are_for(tmp_path):
    """Each rule fails on a module that breaks it (a check that cannot fail checks nothing)."""
    area = tmp_path / "area.py"
    area.write_text("class Area:\n    def __init__(self, admin):\n        pass\n\n"
                    "async def write(writes, areas: 'ControllerAreas'):\n    pass\n")
    assert controller_parameters(area) == ["area.py:2 __init__(admin)", "area.py:5 write(areas)"]
    handler = ast.parse("from fauxka.zkstore import paths\nfrom . import produce\nfrom .produce import x\n"
                        "from .admin_common import caller\nasync def handle(ctx, request):\n    return ctx.zk\n")
    assert handler_breaches("h", handler, {"produce", "h"}) == [
        "h:1 from fauxka.zkstore import ...", "h:2 imports the handler produce", "h:3 imports the handler produce",
        "h:6 .zk"]
