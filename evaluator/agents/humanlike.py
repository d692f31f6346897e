"""Human-like input: curved mouse paths, uneven typing cadence, short pauses. Seeded, so repeatable."""

from __future__ import annotations

import asyncio
import math
import random
import time

from playwright.async_api import Page


class HumanInput:
    """Drives one page's mouse and keyboard like a person, from a seeded random source."""

    def __init__(self, page: Page, *, seed: int, mouse_steps: int, typing_delay_ms: int) -> None:
        self._page = page
        self._rng = random.Random(seed)
        self._mouse_steps = mouse_steps
        self._typing_delay_ms = typing_delay_ms
        self._x, self._y = 640.0, 400.0
        self.last_input_wall: float | None = None
        """``time.time()`` of the last press or first keystroke: when the app received the input."""

    async def move_to(self, x: float, y: float) -> None:
        """Move along a slightly curved path to viewport point (x, y)."""
        sx, sy = self._x, self._y
        distance = math.hypot(x - sx, y - sy)
        bend = self._rng.uniform(-0.15, 0.15) * distance
        nx, ny = (-(y - sy) / distance, (x - sx) / distance) if distance > 1 else (0.0, 0.0)
        steps = max(2, self._mouse_steps)
        for i in range(1, steps + 1):
            t = i / steps
            ease = t * t * (3 - 2 * t)
            arc = math.sin(math.pi * t) * bend
            await self._page.mouse.move(sx + (x - sx) * ease + nx * arc, sy + (y - sy) * ease + ny * arc)
        self._x, self._y = x, y

    async def click(self) -> None:
        """Press and release at the current position with a human hold time."""
        self.last_input_wall = time.time()
        await self._page.mouse.down()
        await asyncio.sleep(self._rng.uniform(0.04, 0.09))
        await self._page.mouse.up()

    async def dblclick(self) -> None:
        """Two presses at the current position, as quick as a person's double click."""
        self.last_input_wall = time.time()
        for count in (1, 2):
            await self._page.mouse.down(click_count=count)
            await asyncio.sleep(self._rng.uniform(0.03, 0.06))
            await self._page.mouse.up(click_count=count)
            if count == 1:
                await asyncio.sleep(self._rng.uniform(0.06, 0.1))

    async def type(self, text: str) -> None:
        """Type ``text`` one key at a time with jittered delays."""
        self.last_input_wall = time.time()
        for char in text:
            await self._page.keyboard.type(char)
            jitter = self._rng.uniform(0.5, 1.5) * self._typing_delay_ms / 1000
            await asyncio.sleep(jitter)

    def jitter(self, width: float, height: float) -> tuple[float, float]:
        """A point offset from an element's centre, inside its middle half."""
        return self._rng.uniform(-0.25, 0.25) * width, self._rng.uniform(-0.25, 0.25) * height
