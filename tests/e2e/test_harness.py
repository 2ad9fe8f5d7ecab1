"""The e2e harness itself: what every test here leans on, checked without a stack."""

import subprocess
from pathlib import Path
from unittest import mock

import pytest

from local.auth import SigningKey
from tests.e2e.conftest import LocalStack

pytestmark = [pytest.mark.e2e]


def test_a_stack_reads_its_signing_key_once_for_all_the_tokens_it_mints(tmp_path: Path) -> None:
    # given a stack's state directory (its key made as the stack makes it) and the stack's handle
    SigningKey.load_or_create(tmp_path)
    process = mock.Mock(spec=subprocess.Popen)
    stack = LocalStack("http://127.0.0.1:3999", process, tmp_path, tmp_path / "stack.log")

    # when tokens for a hundred users are minted
    with mock.patch.object(SigningKey, "load_or_create", wraps=SigningKey.load_or_create) as loads:
        tokens = {stack.token(f"U{n:03d}") for n in range(100)}

    # then the key was read once, and each token is signed by it for its own user
    assert loads.call_count == 1
    assert len(tokens) == 100
    assert all(token.count(".") == 2 for token in tokens)
