# Sourced by scripts/setup, scripts/wheel and scripts/test: the project's own
# Python virtual environments, under the Cargo target dir (gitignored, and
# kept warm between CI runs like the build), never a global install.
#   build venv: maturin (python/requirements-build.txt), for scripts/wheel
#   test venv:  pytest (python/requirements-test.txt) + the built wheel
# Each is made once and remade only when its requirements file changes.

# Debian's python3 where there is one (what scripts/setup installs), else
# the first python3 on PATH; SWAPSIGHT_PYTHON overrides.
swapsight_python() {
  if [[ -n "${SWAPSIGHT_PYTHON:-}" ]]; then
    echo "$SWAPSIGHT_PYTHON"
  elif [[ -x /usr/bin/python3 ]]; then
    echo /usr/bin/python3
  else
    command -v python3
  fi
}

swapsight_venv_root() {
  local target="${CARGO_TARGET_DIR:-target}"
  mkdir -p "$target/python"
  (cd "$target/python" && pwd)
}

# python_venv NAME REQUIREMENTS: prints the venv's path, making it first when
# missing or when REQUIREMENTS changed (pinned with hashes: --require-hashes).
python_venv() {
  local name="$1" req="$2"
  local dir
  dir="$(swapsight_venv_root)/$name"
  local want
  want="$(sha256sum "$req" 2>/dev/null || shasum -a 256 "$req")"
  want="${want%% *}"
  if [[ -x "$dir/bin/python" && -f "$dir/.requirements" && "$(cat "$dir/.requirements")" == "$want" ]]; then
    echo "$dir"
    return
  fi
  echo "setup: python venv $dir ($req)" >&2
  rm -rf "$dir"
  "$(swapsight_python)" -m venv "$dir" >&2
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
    --require-hashes --only-binary=:all: -r "$req" >&2
  echo "$want" >"$dir/.requirements"
  echo "$dir"
}
