"""Ship a Task (its spec, snippets and globals) to a child process through files, and
rebuild it there.

Used by the callgrind collector and by the wall-time worker processes. Standard library only
at import time, so the child side stays cheap to import (under valgrind every import costs).
"""
from __future__ import annotations

import importlib
import pickle
import re
import sys
import types
from pathlib import Path
from typing import Any

from benchkit.core.measure.task import Language, Task, TaskSpec
from benchkit.errors import (BenchkitError, GlobalNotTransferableError, RebuildError,
                             SuiteError)


class CopyIfCallgrind:
    """Marks a global that the callgrind child rebuilds from a serialized copy, after running
    `setup` (e.g. the import its class needs), as in torch.utils.benchmark. Timing in this
    process uses the value itself.

    Allowed values, as torch's: str, bytes, bool, int, float, complex (pickled), nn.Module
    (torch.save) and scripted functions/modules (torch.jit.save). benchkit also ships plain,
    unwrapped picklable globals (tensors included), which torch refuses."""

    def __init__(self, value: Any, *, setup: str | None = None):
        self._value, self._setup = value, setup
        self._serialization = _serialization_of(value)
        if self._serialization is None:
            raise BenchkitError(
                f"CopyIfCallgrind({type(value).__name__}): unsupported type; wrap str, bytes, "
                "bool, int, float, complex, torch.nn.Module, torch.jit.ScriptFunction or "
                "torch.jit.ScriptModule (or pass other picklable values unwrapped)")
        if setup is not None and not isinstance(setup, str):
            raise BenchkitError(f"CopyIfCallgrind(setup=...) must be a string, got "
                                f"{type(setup).__name__}")

    @property
    def value(self) -> Any:
        """The wrapped value (used as it is in this process)."""
        return self._value

    @property
    def setup(self) -> str | None:
        """Code the child runs before rebuilding the value (e.g. an import)."""
        return self._setup

    @property
    def serialization(self) -> str:
        """How the value travels: pickle, torch or jit."""
        return self._serialization

    @staticmethod
    def unwrap_all(globals: dict[str, Any]) -> dict[str, Any]:
        """The globals with every CopyIfCallgrind replaced by its value."""
        return {k: (v.value if isinstance(v, CopyIfCallgrind) else v)
                for k, v in globals.items()}


SUITE_MODULE_PREFIX = "benchkit_suite_"


def suite_module_name(path: Path) -> str:
    """The module name a suite file is loaded under, in every process alike."""
    return SUITE_MODULE_PREFIX + re.sub(r"[^0-9a-zA-Z_]", "_", str(path.with_suffix("")))


def load_suite_module(name: str, path: str, source: str | None = None) -> types.ModuleType:
    """Execute a suite file as module `name` (registered first, so pickles and Timers made
    by it can refer to it); from `source` when given (a process that cannot read the file)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SuiteError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        if source is None:
            spec.loader.exec_module(module)
        else:
            exec(compile(source, path, "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def suite_modules(data: bytes) -> dict[str, dict[str, str]]:
    """The suite modules a pickle refers to, each with its file's path and source, so a
    child process can load it before unpickling (whatever a suite defines travels)."""
    out = {}
    for name in sorted(pickled_modules(data)):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if name.startswith(SUITE_MODULE_PREFIX) and path:
            out[name] = {"path": path, "source": Path(path).read_text(encoding="utf-8")}
    return out


def ensure_suite_modules(specs: dict[str, dict[str, str]]) -> None:
    """Load the suite modules a task's pickles refer to (child side), once per process."""
    for name, spec in specs.items():
        if name not in sys.modules:
            load_suite_module(name, spec["path"], spec.get("source"))


def _serialization_of(value: Any) -> str | None:
    if isinstance(value, (str, bytes, bool, int, float, complex)):
        return "pickle"
    torch = sys.modules.get("torch")
    if torch is not None:
        if _is_torch_script(value):
            return "jit"
        if isinstance(value, torch.nn.Module):
            return "torch"
    return None


def _is_torch_script(value: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(
        value, (torch.jit.ScriptModule, torch.jit.ScriptFunction))


def _write_globals(task_id: int | str, values: dict[str, Any], workdir: Path) -> dict[str, Any]:
    specs: dict[str, Any] = {}
    for name, value in values.items():
        setup = None
        if isinstance(value, CopyIfCallgrind):
            value, setup = value.value, value.setup
        if isinstance(value, types.ModuleType):
            specs[name] = {"how": "module", "module": value.__name__}
            continue
        file = f"global-{task_id}-{len(specs)}"
        if _is_torch_script(value):
            import torch
            torch.jit.save(value, str(workdir / file))
            specs[name] = {"how": "jit", "file": file, "setup": setup}
            continue
        try:
            data = _dumps(value)
        except Exception as error:
            raise GlobalNotTransferableError(
                f"global {name!r} ({type(value).__name__}) cannot be sent to the child "
                f"process: {type(error).__name__}: {error}. Pass picklable values, "
                "tensors, nn.Modules or scripted (torch.jit.script) functions, or build the "
                "object in `setup`.") from None
        (workdir / file).write_bytes(data)
        specs[name] = {"how": "pickle", "file": file, "setup": setup}
    return specs


def _renamed(code: types.CodeType, filename: str) -> types.CodeType:
    """`code` and the code objects nested in it (comprehensions, inner functions) with the
    file name cloudpickle (3.1 and later) replaced by `<dynamic-code>` put back."""
    consts = tuple(_renamed(c, filename) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    if code.co_filename == "<dynamic-code>":
        return code.replace(co_filename=filename, co_consts=consts)
    return code.replace(co_consts=consts)


def restore_filename(value: Any, filename: str) -> Any:
    """Child side of a function sent by value: its code names its file again, so that
    tracebacks and memory sites say `script.py:6`, whatever cloudpickle version sent it."""
    if isinstance(value, types.FunctionType) and filename:
        value.__code__ = _renamed(value.__code__, filename)
    return value


class _ByValue:
    """A function pickled by value together with its file name (restore_filename)."""

    def __init__(self, value: Any):
        self.value = value
        code = getattr(value, "__code__", None)
        self.filename = code.co_filename if isinstance(code, types.CodeType) else ""

    def __reduce__(self):
        return restore_filename, (self.value, self.filename)


def _dumps(value: Any) -> bytes:
    """A pickle of `value`; what the running script (`__main__`) defines, or code whose
    module cannot be imported (exec'd code, a notebook cell), travels by value (cloudpickle),
    since the child process cannot import it."""
    try:
        data = pickle.dumps(value)
    except pickle.PicklingError:
        import cloudpickle
        return cloudpickle.dumps(_ByValue(value))
    if "__main__" in pickled_modules(data):
        import cloudpickle
        data = cloudpickle.dumps(_ByValue(value))
    return data


def _snippet_fields(task_id: int | str, name: str, snippet: Any, workdir: Path) -> dict[str, Any]:
    if isinstance(snippet, str):
        return {name: snippet}
    file = f"{name}-{task_id}.pkl"
    try:
        (workdir / file).write_bytes(_dumps(snippet))
    except Exception as error:
        raise GlobalNotTransferableError(
            f"the callable {name} {snippet!r} cannot be sent to the child process ({error}); "
            f"define it at module level in an importable module, or pass {name} as a string."
        ) from None
    return {name: "pass", f"{name}_pickle": file}


def write_task(task_id: int | str, task: Task, workdir: Path) -> dict[str, Any]:
    """Write what a child needs to rebuild `task` into `workdir`; returns the JSON fields
    (with the suite modules its pickles refer to, which the child loads first)."""
    before = set(workdir.iterdir())
    fields = {"spec": task.spec.to_dict(), "language": task.language.name.lower(),
              "globals": _write_globals(task_id, dict(task.globals), workdir),
              **_snippet_fields(task_id, "stmt", task.stmt, workdir),
              **_snippet_fields(task_id, "setup", task.setup, workdir)}
    modules: dict[str, dict[str, str]] = {}
    for file in sorted(set(workdir.iterdir()) - before):
        try:
            modules.update(suite_modules(file.read_bytes()))
        except Exception:   # a torch.jit archive, not a pickle
            continue
    if modules:
        fields["suite_modules"] = modules
    return fields


def read_task(fields: dict[str, Any], workdir: Path = Path(".")) -> Task:
    """Child side of `write_task`: the Task. Raises RebuildError naming what failed."""
    try:
        ensure_suite_modules(fields.get("suite_modules") or {})
    except Exception as error:
        raise RebuildError(next(iter(fields["suite_modules"])), error) from error
    values: dict[str, Any] = {}
    for name, spec in fields["globals"].items():
        try:
            if spec.get("setup"):
                # CopyIfCallgrind(setup=...): e.g. the import the value's class needs; what it
                # defines is visible to the snippet too, as in torch.
                exec(compile(spec["setup"], f"<setup of global {name}>", "exec"), values)
            if spec["how"] == "module":
                values[name] = importlib.import_module(spec["module"])
            elif spec["how"] == "jit":
                import torch
                values[name] = torch.jit.load(str(workdir / spec["file"]))
            else:
                values[name] = pickle.loads((workdir / spec["file"]).read_bytes())
        except Exception as error:
            raise RebuildError(name, error) from error
    snippets = {"stmt": fields["stmt"], "setup": fields["setup"]}
    for name in ("stmt", "setup"):
        if fields.get(f"{name}_pickle"):
            try:
                snippets[name] = pickle.loads((workdir / fields[f"{name}_pickle"]).read_bytes())
            except Exception as error:
                raise RebuildError(name, error) from error
    return Task(TaskSpec.from_dict(fields["spec"]), snippets["stmt"], snippets["setup"], values,
                Language[fields["language"].upper()])


def pickled_modules(data: bytes) -> set[str]:
    """Top-level modules a pickle refers to (GLOBAL / STACK_GLOBAL opcodes, with the strings
    STACK_GLOBAL takes either pushed just before or fetched from the memo)."""
    import pickletools  # parent side only
    modules: set[str] = set()
    stack: list[str | None] = []        # the strings pushed (None: something else)
    memo: dict[int, str | None] = {}
    for op, arg, _ in pickletools.genops(data):
        name = op.name
        if name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            stack.append(arg)
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1] if stack else None
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = stack[-1] if stack else None
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            stack.append(memo.get(arg))
        elif name == "GLOBAL":
            modules.add(arg.split(" ")[0].split(".")[0])
            stack.append(None)
        elif name == "STACK_GLOBAL":
            if len(stack) >= 2 and isinstance(stack[-2], str):
                modules.add(stack[-2].split(".")[0])
            stack[-2:] = [None]
        else:
            stack.append(None)
    return modules


def needed_modules(workdir: Path) -> set[str]:
    """Top-level modules the files written by `write_task` refer to (and benchkit)."""
    needed = {"benchkit"}
    for file in workdir.iterdir():
        if file.name.startswith(("global-", "stmt-", "setup-")):
            try:
                needed |= pickled_modules(file.read_bytes())
            except Exception:  # a torch.jit archive, not a pickle
                continue
    return needed
