#!/usr/bin/env bash
# Build llama.cpp's `llama-server` (and its shared libraries) from the llama.cpp source that llama-cpp-python's
# sdist on PyPI vendors: only PyPI is needed, and the server and the Python bindings are the same llama.cpp.
#
#   tools/build_llama_cpp.sh [--python] [DEST]     (DEST default: ~/.cache/mtbench/llama.cpp)
#
# Prints the path of llama-server, where mtbench finds it by itself (or through MTBENCH_LLAMA_SERVER). Does
# not build again when DEST already holds a finished build of this version for this CPU. About 10 CPU-minutes: 5 to 6
# minutes on 2 idle cores. --python also installs llama-cpp-python's server into this Python (python3, or
# $PYTHON) on top of these libraries, with no second build (pip's own build of it takes another 8 minutes).
set -euo pipefail
PY=0
if [ "${1:-}" = "--python" ]; then PY=1; shift; fi
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
DEST="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/mtbench/llama.cpp}"
PYTHON="${PYTHON:-python3}"
BIN="$DEST/build/bin/llama-server"
mkdir -p "$DEST"
cd "$DEST"
SDIST="sdist/llama_cpp_python-$VERSION.tar.gz"
if [ ! -f "$SDIST" ]; then "$PYTHON" -m pip download -q "llama-cpp-python==$VERSION" --no-deps --no-binary llama-cpp-python -d sdist >&2; fi
# A build is for this version on this CPU (GGML_NATIVE): a cache restored on another CPU (CI's) builds again.
CPU="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | md5sum | cut -c1-12)"
if ! { [ -x "$BIN" ] && [ "$(cat VERSION 2>/dev/null)" = "$VERSION $CPU" ]; }; then
  rm -rf "llama_cpp_python-$VERSION" build VERSION no-amx
  tar xzf "$SDIST"
  # Without AMX: on a Xeon that has it, this llama.cpp's AMX kernels (tinygemm_kernel_amx) died of SIGILL at the first
  # request of the bundled Q4_1 model, though Linux had granted the process the AMX state (seen on the project's CI
  # machines). -march=native turns AMX on after any flag CMake puts before it, so a launcher puts -mno-amx-* last.
  LAUNCH=()
  if cc -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 -E -x c /dev/null >/dev/null 2>&1; then
    printf '#!/bin/sh\nexec "$@" -mno-amx-tile -mno-amx-int8 -mno-amx-bf16\n' > no-amx; chmod +x no-amx
    LAUNCH=(-DCMAKE_C_COMPILER_LAUNCHER="$DEST/no-amx" -DCMAKE_CXX_COMPILER_LAUNCHER="$DEST/no-amx")
  fi
  # No network at build or run time: no prebuilt web UI download, no curl/OpenSSL model downloads.
  cmake -S "llama_cpp_python-$VERSION/vendor/llama.cpp" -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
    -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF "${LAUNCH[@]}" >&2
  cmake --build build --target llama-server -j "$(nproc)" >&2
  echo "$VERSION $CPU" > VERSION
fi
if [ "$PY" = 1 ]; then
  # llama-cpp-python's Python code without its own copy of llama.cpp (LLAMA_BUILD=OFF), then this build's libraries;
  # not again where this version is installed already (CI runs this every time)
  if [ "$("$PYTHON" -c 'from importlib.metadata import version; print(version("llama-cpp-python"))' 2>/dev/null)" != "$VERSION" ] \
     || ! "$PYTHON" -c 'import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings' 2>/dev/null; then
    CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" "$PYTHON" -m pip install -q "$SDIST[server]" >&2
  fi
  LIB="$("$PYTHON" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("llama_cpp").origin), "lib"))')"
  mkdir -p "$LIB"
  ln -sf "$DEST"/build/bin/lib*.so* "$LIB"/
fi
echo "$BIN"
