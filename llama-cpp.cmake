# How moot builds llama.cpp when pip compiles llama-cpp-python (the `local` extra).
#
# The README's install commands pass this file to llama-cpp-python's build:
#   CMAKE_ARGS="-DCMAKE_PROJECT_llama_cpp_INCLUDE=$PWD/llama-cpp.cmake" pip install -e '.[local]'
# CMake reads it right after llama-cpp-python's top-level project() call, before its options.
#
# moot calls only libllama and libggml. Two parts of the default build are never loaded by it:
# - mtmd (LLAVA_BUILD), the multimodal library;
# - llama.cpp's `common` library with cpp-httplib, which llama-cpp-python forces on (a cache
#   value set with FORCE) and never loads; a normal variable shadows that cache value.
# Measured on 2 idle cores (docs/engine.md): 4.4 min without mtmd, 2.6 min without both; the files
# moot uses compile exactly as before, -march=native for ggml included.
set(LLAVA_BUILD OFF)
set(LLAMA_BUILD_COMMON OFF)
