"""Just enough Markdown to write the report."""

from collections.abc import Iterable, Sequence


def table(header: Sequence[str], rows: Iterable[Sequence[object]], align: str = "") -> str:
    """A pipe table; ``align`` has one letter per column (l or r), left by default."""
    marks = [("---:" if a == "r" else "---") for a in align.ljust(len(header), "l")]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def units(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"
