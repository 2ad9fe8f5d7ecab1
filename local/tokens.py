"""Print a token the local stack accepts: ``python -m local.tokens --sub U100 --groups admin,ops``.

Signed with the stack's key (created on first use) for the issuer of the stack on ``--port``
(default: $PORT, else 3000), so it works whether or not the stack is running yet. The token is the
last line of the output, for scripts: ``TOKEN=$(make token SUB=U100 | tail -n1)``.
"""

import argparse
import os
import sys
from pathlib import Path

from local import STATE_DIR
from local.auth import AUDIENCE, TOKEN_LIFETIME_S, SigningKey, issuer_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m local.tokens", description=__doc__.splitlines()[0])
    parser.add_argument("--sub", default="U100", help="the user id (JWT subject)")
    parser.add_argument("--groups", default="", help="comma-separated groups, e.g. admin,ops")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")), help="the stack's port")
    parser.add_argument("--lifetime", type=int, default=TOKEN_LIFETIME_S, help="seconds until it expires")
    parser.add_argument("--state-dir", type=Path, default=STATE_DIR, help="where the signing key lives")
    args = parser.parse_args(argv)

    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    issuer = issuer_for(args.port)
    token = SigningKey.load_or_create(args.state_dir).mint(issuer, args.sub, groups, lifetime_s=args.lifetime)
    hours = args.lifetime / 3600
    sys.stdout.write(
        f"# sub={args.sub} groups={','.join(groups) or '-'} iss={issuer} aud={AUDIENCE} valid {hours:g} h\n{token}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
