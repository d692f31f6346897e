"""``evalgrid``'s entry point: parse the command line, then import and call the command's handler."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from cluster.cli.commands import build_parser
from evaluator import EvalgridError

if TYPE_CHECKING:
    import argparse


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalgrid`` console script."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=True)
    try:
        code: int = _handler(args.handler)(args, console)
        return code
    except EvalgridError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("interrupted; every finished run is recorded — re-run the same command to resume")
        return 130


def _handler(name: str) -> Callable[[argparse.Namespace, Console], int]:
    module, _, function = name.partition(":")
    handler: Callable[[argparse.Namespace, Console], int] = getattr(
        importlib.import_module(f"cluster.cli.{module}"), function)
    return handler
