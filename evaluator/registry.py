"""One registry class for every named extension point (agent policies, judges).

An extension registers a factory and, optionally, a pydantic model of its options (``extra="forbid"``),
so that a mistyped option is a :class:`~evaluator.errors.ConfigError` naming the field when the sweep is
loaded, not a ``TypeError`` in a worker or an option silently ignored. The built-in extensions live in
modules the registry imports on its first lookup, so importing ``evaluator`` loads none of them.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from evaluator.errors import ConfigError, RegistryError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named factories of one kind, with duplicate checks, typed options and "did you mean" on a miss."""

    def __init__(self, kind: str, *, builtins: Sequence[str] = ()) -> None:
        self._kind = kind
        self._builtins = tuple(builtins)
        self._factories: dict[str, Callable[..., T]] = {}
        self._options: dict[str, type[BaseModel]] = {}
        self._loading = False

    def register(self, name: str, *, options: type[BaseModel] | None = None
                 ) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator that records ``factory`` under ``name``, with the model its options must fit."""

        def decorate(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._factories:
                raise RegistryError(f"{self._kind} {name!r} is registered twice; pick another name")
            self._factories[name] = factory
            if options is not None:
                self._options[name] = options
            return factory

        return decorate

    def create(self, name: str, **arguments: object) -> T:
        """Build the ``name`` extension: its factory called with ``arguments``."""
        return self._factory(name)(**arguments)

    def check(self, name: str, options: Mapping[str, object]) -> dict[str, object]:
        """The options given, converted to their fields' types (``"8"`` to 8); a :class:`ConfigError` if
        ``name`` is unknown or ``options`` do not fit its options model.

        Only what was given comes back, no defaults: the caller's ``options`` enter content keys exactly
        as written, and these are what the extension is built with.
        """
        try:
            self._factory(name)
        except RegistryError as e:
            raise ConfigError(str(e)) from None
        model = self._options.get(name)
        if model is None:
            return dict(options)
        try:
            return model.model_validate(dict(options)).model_dump(exclude_unset=True)
        except ValidationError as e:
            raise ConfigError(f"{self._kind} {name!r}: {_explain(e, model)}") from None

    def options_schemas(self) -> dict[str, dict[str, Any]]:
        """The JSON schema of each registered extension's options (none: no options)."""
        self._load()
        return {name: (self._options[name].model_json_schema() if name in self._options else {})
                for name in sorted(self._factories)}

    def names(self) -> list[str]:
        """Registered names, sorted."""
        self._load()
        return sorted(self._factories)

    def _factory(self, name: str) -> Callable[..., T]:
        self._load()
        try:
            return self._factories[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._factories, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(self._factories)) or "none"
            raise RegistryError(f"unknown {self._kind} {name!r}.{hint} Known: {known}.") from None

    def _load(self) -> None:
        if self._loading or not self._builtins:
            return
        self._loading = True  # a built-in's module registers into this registry while it is imported
        try:
            for module in self._builtins:
                importlib.import_module(module)
            self._builtins = ()  # only once they all imported: a failed import fails every lookup, loudly
        finally:
            self._loading = False


def _explain(error: ValidationError, model: type[BaseModel]) -> str:
    """One line per wrong option, each naming the field (and the closest known one for a typo)."""
    known = list(model.model_fields)
    lines = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"]) or "options"
        if problem["type"] == "extra_forbidden":
            close = difflib.get_close_matches(field, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            lines.append(f"unknown option {field!r}{hint} (known: {', '.join(known) or 'none'})")
        else:
            lines.append(f"option {field!r}: {problem['msg']}")
    return "; ".join(lines)
