"""A description of the machine and toolchain the numbers were taken on."""

import os
import platform
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from local import dynamodb_local


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _memory_gib() -> str:
    meminfo = Path("/proc/meminfo")
    if meminfo.exists():
        kib = int(meminfo.read_text().split("MemTotal:", 1)[1].split()[0])
        return f"{kib / 1024 / 1024:.1f} GiB"
    return "unknown"


def _load() -> str:
    try:
        return " / ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


@dataclass(frozen=True)
class Machine:
    taken_at: str
    system: str
    cpu: str
    cpus: int
    memory: str
    python: str
    dynamodb_local: str
    load_at_start: str

    @classmethod
    def describe(cls) -> "Machine":
        jar = dynamodb_local.jar()
        return cls(
            taken_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            system=f"{platform.system()} {platform.release()} ({platform.machine()})",
            cpu=_cpu_model(),
            cpus=os.cpu_count() or 0,
            memory=_memory_gib(),
            python=f"{platform.python_implementation()} {sys.version.split()[0]}",
            dynamodb_local=jar.parent.name if jar else "not installed",
            load_at_start=_load(),
        )

    def markdown(self) -> str:
        return "\n".join(
            [
                f"- taken: {self.taken_at}",
                f"- machine: {self.system}, {self.cpu}, {self.cpus} CPUs, {self.memory}",
                f"- load average (1/5/15 min) at start: {self.load_at_start}",
                f"- Python: {self.python} (the project venv, as the Lambda runtime python3.13)",
                f"- DynamoDB Local: {self.dynamodb_local}",
            ]
        )
