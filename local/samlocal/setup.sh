#!/usr/bin/env bash
# Prepare a container runtime for `sam local invoke` / `sam local start-api`, then write
# .tools/samlocal.env for the samlocal test tier and for your shell (`source .tools/samlocal.env`).
#
# Machines with Docker need none of this: SAM talks to Docker and pulls the real Lambda image.
# These machines (Debian 12, CI included) have no Docker engine and cannot reach public.ecr.aws, so:
#   - rootful podman with runc serves the Docker API on a socket of our own;
#   - a stand-in for public.ecr.aws/lambda/python:3.13-<arch> is built from a Debian rootfs, the host's
#     CPython 3.13 and awslambdaric; SAM adds its bundled runtime emulator on top, as it does to the
#     real image.
# Idempotent: each step is skipped when its result is already there. Re-run it after a reboot (the API
# socket is a plain background process). Slow parts are cached in $SHOPFEED_SAMLOCAL_CACHE, outside the
# repository, so a fresh clone on the same machine is ready in seconds.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${SHOPFEED_SAMLOCAL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shopfeed-samlocal}
SOCKET=$CACHE/podman.sock
ENV_FILE=$ROOT/.tools/samlocal.env
# The stand-in image must carry the same name and tag SAM asks for, or SAM tries to pull it.
case "$(uname -m)" in
  x86_64) ARCH=x86_64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) echo "samlocal: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
IMAGE=public.ecr.aws/lambda/python:3.13-$ARCH
AWSLAMBDARIC=awslambdaric==4.2.2
# boto3 as the real image ships it; the function's layer pins its own, which wins on sys.path.
RUNTIME_BOTO3=boto3==1.44.5

log() { echo "samlocal: $*" >&2; }
answers() { curl -sf --max-time 2 --unix-socket "$1" http://d/_ping >/dev/null 2>&1; }

# The CPython 3.13 copied into the image must be built for this Debian's glibc (pyenv's is); the
# same lookup as the Makefile's PY313.
find_python313() {
  local candidate
  for candidate in "${PY313:-}" "$HOME"/.pyenv/versions/3.13*/bin/python3.13 "$(command -v python3.13 || true)"; do
    [ -n "$candidate" ] && [ -x "$candidate" ] && { echo "$candidate"; return; }
  done
  echo "samlocal: Python 3.13 not found (set PY313=/path/to/python3.13)" >&2
  exit 1
}

write_env_file() {
  mkdir -p "$(dirname "$ENV_FILE")"
  cat >"$ENV_FILE" <<EOF
# Written by local/samlocal/setup.sh: the container runtime for \`sam local\` and the samlocal tests.
export DOCKER_HOST=unix://$SOCKET
# The Lambda base image is the locally built stand-in; pulling would reach for public.ecr.aws.
export SAM_SKIP_PULL_IMAGE=1
export SAM_CLI_TELEMETRY=0
# Build and run for this machine's architecture (the template deploys arm64).
export SHOPFEED_SAMLOCAL_ARCHITECTURE=$ARCH
# How Lambda containers reach this machine: podman names it in every container's /etc/hosts.
export SHOPFEED_SAMLOCAL_HOST=host.containers.internal
EOF
  log "wrote $ENV_FILE"
}

mkdir -p "$CACHE"

# 1. Packages. crun is not enough (see 2), so runc comes explicitly.
if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  log "installing podman, runc, debootstrap"
  apt-get update -qq
  # With recommends: podman's networking and storage helpers come that way.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap curl >/dev/null
fi

# 2. Podman configuration for these sandboxes:
#  - crun fails with "cgroups in hybrid mode not supported, drop all controllers from cgroupv2";
#    runc works.
#  - without CAP_SYS_RESOURCE podman's default rlimits (nofile 1048576, nproc > 32768) fail with
#    "setrlimit ...: Operation not permitted": cap them at the hard limits conmon runs with.
export CONTAINERS_CONF=$CACHE/containers.conf
NOFILE=$(ulimit -Hn)
[ "$NOFILE" = unlimited ] && NOFILE=1048576
cat >"$CONTAINERS_CONF.new" <<EOF
[containers]
default_ulimits = ["nofile=${NOFILE}:${NOFILE}", "nproc=32768:32768"]
[engine]
runtime = "runc"
EOF
mv "$CONTAINERS_CONF.new" "$CONTAINERS_CONF"

# 3. The Docker-compatible API socket (rootful), started only if it does not answer. setsid: it
# outlives this script like a Docker daemon would, and no job control can take it down with us. It
# runs from / : started from a checkout that is later deleted, it could start no container again
# (conmon: "Failed to get working directory"), though its socket still answers.
if ! answers "$SOCKET"; then
  log "starting the podman API service on $SOCKET"
  rm -f "$SOCKET"
  env -C / setsid nohup podman system service --time=0 "unix://$SOCKET" >"$CACHE/podman-service.log" 2>&1 </dev/null &
  echo $! >"$CACHE/podman-service.pid"
  for _ in $(seq 100); do answers "$SOCKET" && break; sleep 0.1; done
  answers "$SOCKET" || { log "the podman API did not answer; see $CACHE/podman-service.log"; exit 1; }
fi

# 4. The stand-in Lambda base image, built once per machine from a cached root filesystem.
if ! podman image exists "$IMAGE"; then
  ROOTFS=$CACHE/rootfs-python3.13-$ARCH
  if [ ! -x "$ROOTFS/var/runtime/bootstrap" ]; then
    PYTHON=$(find_python313)
    PREFIX=$(cd "$(dirname "$PYTHON")/.." && pwd)
    log "building the root filesystem in $ROOTFS (debootstrap, about a minute)"
    rm -rf "$ROOTFS" "$ROOTFS.partial"
    debootstrap --variant=minbase bookworm "$ROOTFS.partial" >"$CACHE/debootstrap.log" 2>&1 \
      || { log "debootstrap failed; see $CACHE/debootstrap.log"; exit 1; }
    # The shared libraries CPython's extension modules link against (ssl, sqlite3, readline, expat).
    chroot "$ROOTFS.partial" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends libssl3 libsqlite3-0 libreadline8 libncursesw6 libexpat1 libffi8 \
        liblzma5 libbz2-1.0 zlib1g ca-certificates' >>"$CACHE/debootstrap.log" 2>&1
    rm -rf "$ROOTFS.partial"/var/cache/apt/archives/*.deb "$ROOTFS.partial"/var/lib/apt/lists/*
    # CPython in /var/lang, as in the real image; tests, IDLE, tk and site-packages stay behind.
    mkdir -p "$ROOTFS.partial"/var/{lang,runtime,task} "$ROOTFS.partial/opt"
    tar -C "$PREFIX" --exclude='__pycache__' --exclude='./lib/python3.13/test' \
      --exclude='./lib/python3.13/idlelib' --exclude='./lib/python3.13/tkinter' \
      --exclude='./lib/python3.13/site-packages/*' --exclude='./include' \
      --exclude='./lib/python3.13/ensurepip' --exclude='./lib/python3.13/config-3.13-*' \
      -cf - . | tar -C "$ROOTFS.partial/var/lang" -xf -
    # pyenv's RUNPATH points at its own prefix; the image finds libpython through ld.so.conf.
    echo /var/lang/lib >"$ROOTFS.partial/etc/ld.so.conf.d/var-lang.conf"
    chroot "$ROOTFS.partial" ldconfig
    # The runtime interface client in /var/runtime and boto3 in /var/lang's site-packages: the real
    # image's layout, where a layer's /opt/python comes first on sys.path.
    "$PYTHON" -m pip install -qq --root-user-action=ignore --disable-pip-version-check \
      --target "$ROOTFS.partial/var/runtime" "$AWSLAMBDARIC"
    "$PYTHON" -m pip install -qq --root-user-action=ignore --disable-pip-version-check \
      --target "$ROOTFS.partial/var/lang/lib/python3.13/site-packages" "$RUNTIME_BOTO3"
    cat >"$ROOTFS.partial/var/runtime/bootstrap" <<'EOF'
#!/bin/sh
# Stand-in for the Lambda python3.13 image's bootstrap: SAM's emulator (/var/rapid/aws-lambda-rie)
# execs it. The search path mirrors Lambda's: function code, then layers, then the runtime.
export AWS_EXECUTION_ENV=AWS_Lambda_python3.13
export PYTHONPATH=/var/task:/opt/python/lib/python3.13/site-packages:/opt/python:/var/runtime
exec /var/lang/bin/python3.13 -m awslambdaric "${_HANDLER:-$AWS_LAMBDA_FUNCTION_HANDLER}"
EOF
    chmod +x "$ROOTFS.partial/var/runtime/bootstrap"
    mv "$ROOTFS.partial" "$ROOTFS"
  fi
  log "importing $IMAGE"
  tar -C "$ROOTFS" -cf - . | podman import -q \
    --change 'ENV LANG=en_US.UTF-8' --change 'ENV TZ=:/etc/localtime' \
    --change 'ENV PATH=/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin' \
    --change 'ENV LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib' \
    --change 'ENV LAMBDA_TASK_ROOT=/var/task' --change 'ENV LAMBDA_RUNTIME_DIR=/var/runtime' \
    --change 'WORKDIR /var/task' \
    - "$IMAGE" >/dev/null
fi

# 5. SAM CLI is the project's own (make deps); only say so if it is missing.
[ -x "$ROOT/.tools/bin/sam" ] || log "note: $ROOT/.tools/bin/sam is missing; run \`make deps\`"

write_env_file
log "ready: source .tools/samlocal.env, then make test-samlocal (docs/sam-local.md)"
