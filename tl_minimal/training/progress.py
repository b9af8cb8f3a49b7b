"""How a training run shows its progress: a text bar in a terminal, one updated line in a notebook (not a
widget: an executed notebook would keep a widget's first output, a bar frozen at "0%")."""

from __future__ import annotations

import time

from tqdm import tqdm  # the text bar (tqdm.auto would pick a widget bar in a kernel)

from ..jupyter import in_jupyter_kernel

BAR_WIDTH = 20  # characters of the drawn bar in a notebook line


class NotebookLine:
    """A progress line for notebooks: one text output, redrawn in place, left as the final line; the part of
    tqdm's interface that ``train`` uses (iterate, ``set_postfix``, ``n``, ``close``)."""

    def __init__(self, iterable, total: int, initial: int = 0, desc: str = "", min_interval_s: float = 1.0):
        from IPython.display import display

        self.iterable, self.total, self.n, self.desc = iterable, total, initial, desc
        self.postfix = ""
        self.min_interval_s = min_interval_s
        self.started = self.shown_at = time.perf_counter()
        self.handle = display({"text/plain": self.line()}, raw=True, display_id=True)

    def __iter__(self):
        for item in self.iterable:
            yield item
            self.n += 1
            if time.perf_counter() - self.shown_at >= self.min_interval_s:
                self.refresh()

    def set_postfix(self, **values) -> None:
        self.postfix = ", ".join(f"{name} {value}" for name, value in values.items())

    def line(self) -> str:
        filled = round(BAR_WIDTH * self.n / max(self.total, 1))
        bar = "█" * filled + "·" * (BAR_WIDTH - filled)
        seconds = time.perf_counter() - self.started
        extra = f", {self.postfix}" if self.postfix else ""
        return f"{self.desc}: {bar} {self.n}/{self.total} steps, {seconds:.1f} s{extra}"

    def refresh(self) -> None:
        self.handle.update({"text/plain": self.line()}, raw=True)
        self.shown_at = time.perf_counter()

    def close(self) -> None:
        self.refresh()


def progress_bar(iterable, total: int, initial: int = 0, desc: str = "", enabled: bool = True):
    """The progress display for one run: a NotebookLine in a kernel, else tqdm's text bar.

    ``enabled=False`` gives tqdm's silent bar (same interface, draws nothing)."""
    if enabled and in_jupyter_kernel():
        return NotebookLine(iterable, total, initial, desc)
    return tqdm(iterable, desc=desc, initial=initial, total=total, disable=not enabled, leave=False)
