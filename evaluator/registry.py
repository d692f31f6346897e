"""One registry class for every named extension point (agent policies, judges)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Generic, TypeVar

from evaluator.errors import RegistryError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named factories of one kind, with duplicate checks and "did you mean" on a miss."""

    def __init__(self, kind: str) -> None:
        self._kind = kind
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator that records ``factory`` under ``name``."""

        def decorate(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._factories:
                raise RegistryError(f"{self._kind} {name!r} is registered twice; pick another name")
            self._factories[name] = factory
            return factory

        return decorate

    def create(self, name: str, **options: object) -> T:
        """Build the ``name`` extension with ``options``."""
        try:
            factory = self._factories[name]
        except KeyError:
            close = difflib.get_close_matches(name, self._factories, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(self._factories)) or "none"
            raise RegistryError(f"unknown {self._kind} {name!r}.{hint} Known: {known}.") from None
        return factory(**options)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._factories)
